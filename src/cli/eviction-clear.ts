// `bunlet eviction clear <namespace/name>|--all [--root-dir DIR]`: forget evicted static pods kept in
// <rootDir>/eviction/state.json, so they run again the next time bunlet admits them (its next start;
// a running bunlet keeps an evicted pod Failed until then, as upstream keeps it until the manifest
// changes). Without a pod or --all it lists what is recorded. The kubelet_evictions counts stay.
import { defineCommand } from "citty";
import { clearEvicted, evictionRecordPath, loadEvictionRecord, saveEvictionRecordSync } from "../eviction/record-file.ts";
import { podKeyOf } from "../pod/pod-like.ts";

export interface ClearIO {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

const processIO: ClearIO = { stdout: (s) => void process.stdout.write(s), stderr: (s) => void process.stderr.write(s) };

export function runClear(args: { pod?: string; all?: boolean; rootDir?: string }, io: ClearIO = processIO): number {
  const path = evictionRecordPath(args.rootDir || "/var/lib/kubelet");
  const record = loadEvictionRecord(path);
  const list = () =>
    record.evicted.map((p) => `  ${podKeyOf(p.namespace, p.name)} uid=${p.uid} source=${p.source} signal=${p.signal} evictedAt=${p.evictedAt}\n`).join("");
  if (!args.pod && !args.all) {
    io.stdout(
      record.evicted.length
        ? `evicted static pods in ${path}:\n${list()}clear one with: bunlet eviction clear <namespace/name>, or all with --all\n`
        : `no evicted static pods in ${path}\n`,
    );
    return 0;
  }
  if (args.pod && args.all) {
    io.stderr("give either <namespace/name> or --all, not both\n");
    return 1;
  }
  let which: { all: true } | { namespace: string; name: string } = { all: true };
  if (args.pod) {
    const m = /^([^/\s]+)\/([^/\s]+)$/.exec(args.pod);
    if (!m) {
      io.stderr(`pod ${JSON.stringify(args.pod)}: want <namespace>/<name>, e.g. default/web-node1\n`);
      return 1;
    }
    which = { namespace: m[1]!, name: m[2]! };
  }
  const { record: next, cleared } = clearEvicted(record, which);
  if (cleared.length === 0) {
    io.stderr(`no evicted static pod ${args.pod ?? ""} in ${path}${record.evicted.length ? `; recorded:\n${list()}` : "\n"}`);
    return 1;
  }
  try {
    saveEvictionRecordSync(path, next);
  } catch (e) {
    io.stderr(`cannot write ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`);
    return 1;
  }
  for (const p of cleared) io.stdout(`cleared ${podKeyOf(p.namespace, p.name)} uid=${p.uid}\n`);
  io.stdout("it runs again when bunlet next admits it (restart bunlet if it is running)\n");
  return 0;
}

export const clearCommand = defineCommand({
  meta: { name: "clear", description: "Let evicted static pods run again (kept evicted across restarts until their manifest changes); no argument lists them" },
  args: {
    pod: { type: "positional", required: false, description: "namespace/name of the evicted static pod" },
    all: { type: "boolean", description: "clear every evicted static pod" },
    "root-dir": { type: "string", description: "bunlet's --root-dir (default /var/lib/kubelet)" },
  },
  run({ args }) {
    process.exitCode = runClear({ pod: args.pod as string | undefined, all: Boolean(args.all), rootDir: args["root-dir"] as string | undefined });
  },
});
