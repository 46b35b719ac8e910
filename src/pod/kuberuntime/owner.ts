// One runtime, one agent (two agents with different root dirs on one containerd would kill each
// other's pods as orphans every few seconds). bunlet labels every sandbox and container it creates
// with `io.bunlet.owner=<root dir>` and sees the runtime through ownedCri: listings keep only its own
// pods (and unlabeled ones, made by a bunlet before this label existed), so housekeeping, PLEG and GC
// never touch another agent's pods. At start, checkRuntimeOwner refuses to run when another owner's
// pods are running: the second agent stops with an error naming the owner, not a silent kill loop.
// Beyond upstream (a kubelet assumes it owns the runtime).
//
// "Another agent" means a live one: each agent holds an exclusive flock on <rootDir>/runtime-owner.lock
// while it runs. Pods whose owner holds no such lock (stopped, crashed, root dir gone) are orphans as
// before: this agent adopts or removes them.
import { mkdirSync } from "node:fs";
import { DATA_DIR_MODE } from "../pod-dir.ts";
import { join, resolve } from "node:path";
import * as libc from "../../../ffi/libc.ts";
import { overrideClient, type CriClient } from "../../cri/client.ts";
import { kv, log } from "../../log.ts";
import { podKeyOf } from "../pod-like.ts";
import { POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from "./labels.ts";

export const OWNER_LABEL = "io.bunlet.owner";

/** The agent's identity on the runtime: its root dir, absolute. */
export const runtimeOwner = (rootDir: string) => resolve(rootDir);

export class RuntimeOwnerError extends Error {
  override name = "RuntimeOwnerError";
}

export const OWNER_LOCK_FILE = "runtime-owner.lock";

/** Holds <rootDir>/runtime-owner.lock while the agent runs; undefined (with a warning) if it cannot. */
export function holdOwnerLock(rootDir: string): { release(): void } | undefined {
  let fd: number;
  try {
    mkdirSync(rootDir, { recursive: true, mode: DATA_DIR_MODE });
    fd = libc.open(join(rootDir, OWNER_LOCK_FILE), libc.O_CREAT | libc.O_RDWR | libc.O_CLOEXEC, 0o600);
  } catch (e) {
    log.warn(`cannot hold the runtime owner lock ${kv({ file: join(rootDir, OWNER_LOCK_FILE), error: (e as Error).message })}`);
    return undefined;
  }
  try {
    libc.flock(fd, libc.LOCK_EX | libc.LOCK_NB);
  } catch (e) {
    libc.close(fd);
    log.warn(
      `another bunlet with this root dir is running (use --lock-file to serialise them) ${kv({ file: join(rootDir, OWNER_LOCK_FILE), error: (e as Error).message })}`,
    );
    return undefined;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      try {
        libc.close(fd);
      } catch {}
    },
  };
}

/** True while an agent holds the owner lock of root dir `owner`. */
export function ownerAlive(owner: string): boolean {
  let fd: number;
  try {
    fd = libc.open(join(owner, OWNER_LOCK_FILE), libc.O_RDONLY | libc.O_CLOEXEC);
  } catch {
    return false; // no lock file: no agent (its root dir may be gone)
  }
  try {
    libc.flock(fd, libc.LOCK_EX | libc.LOCK_NB);
    return false; // nobody held it
  } catch (e) {
    return e instanceof libc.SyscallError && e.errno === libc.ERRNO.EAGAIN;
  } finally {
    libc.close(fd); // also drops a lock we just took
  }
}

/** ownerAlive, remembered for 30 s per owner (listings run every second). */
function aliveCache(alive: (owner: string) => boolean, nowMs: () => number) {
  const seen = new Map<string, { alive: boolean; atMs: number }>();
  return (owner: string) => {
    const hit = seen.get(owner);
    if (hit && nowMs() - hit.atMs < 30_000) return hit.alive;
    const a = alive(owner);
    seen.set(owner, { alive: a, atMs: nowMs() });
    return a;
  };
}

const isMine = (labels: Record<string, string> | undefined, owner: string, alive: (o: string) => boolean) => {
  const o = labels?.[OWNER_LABEL];
  return o === undefined || o === owner || !alive(o);
};

/** The runtime as this agent owns it: creations labelled, listings filtered to its own pods. */
export type OwnedCriClient = CriClient & {
  /** Pod UIDs of live other owners' sandboxes in the last unfiltered ListPodSandbox. */
  foreignPodUids(): ReadonlySet<string>;
};

export function ownedCri(cri: CriClient, owner: string, opts: { alive?: (owner: string) => boolean; nowMs?: () => number } = {}): OwnedCriClient {
  const alive = aliveCache(opts.alive ?? ownerAlive, opts.nowMs ?? Date.now);
  const warned = new Set<string>();
  let foreign: ReadonlySet<string> = new Set();
  const note = (labels: Record<string, string> | undefined) => {
    const o = labels?.[OWNER_LABEL];
    if (o === undefined || o === owner || warned.has(o)) return;
    warned.add(o);
    log.warn(
      `the container runtime also runs pods of another bunlet; they are left alone ${kv({ endpoint: cri.endpoint, owner: o, pod: podKeyOf(labels?.[POD_NAMESPACE_LABEL], labels?.[POD_NAME_LABEL] ?? ""), us: owner })}`,
    );
  };
  const keep = <T extends { labels?: Record<string, string> }>(items: T[]): T[] =>
    items.filter((x) => {
      if (isMine(x.labels, owner, alive)) return true;
      note(x.labels);
      return false;
    });
  return overrideClient(cri, {
    foreignPodUids: () => foreign,
    runPodSandbox: (config: Parameters<CriClient["runPodSandbox"]>[0], handler?: string) =>
      cri.runPodSandbox({ ...config, labels: { ...config.labels, [OWNER_LABEL]: owner } }, handler),
    createContainer: (sandboxId: string, config: Parameters<CriClient["createContainer"]>[1], sandboxConfig: Parameters<CriClient["createContainer"]>[2]) =>
      cri.createContainer(sandboxId, { ...config, labels: { ...config.labels, [OWNER_LABEL]: owner } }, sandboxConfig),
    listPodSandbox: async (filter?: Parameters<CriClient["listPodSandbox"]>[0]) => {
      const all = await cri.listPodSandbox(filter);
      // A full listing (as housekeeping's) tells which pods, and so which pod cgroups, are another agent's.
      if (!filter) foreign = new Set(all.filter((s) => !isMine(s.labels, owner, alive)).map((s) => s.labels[POD_UID_LABEL] ?? s.metadata?.uid ?? ""));
      return keep(all);
    },
    listContainers: async (filter?: Parameters<CriClient["listContainers"]>[0]) => keep(await cri.listContainers(filter)),
  });
}

/** Throws RuntimeOwnerError when pods of another, live owner run on the runtime. */
export async function checkRuntimeOwner(
  cri: Pick<CriClient, "listPodSandbox" | "endpoint">,
  owner: string,
  alive: (owner: string) => boolean = ownerAlive,
): Promise<void> {
  const running = await cri.listPodSandbox({ state: { state: "SANDBOX_READY" } });
  const foreign = running.filter((s) => !isMine(s.labels, owner, alive));
  if (foreign.length === 0) return;
  const owners = [...new Set(foreign.map((s) => s.labels[OWNER_LABEL]))];
  const example = foreign[0]!.labels;
  throw new RuntimeOwnerError(
    `container runtime ${cri.endpoint} already runs ${foreign.length} pod(s) of another bunlet (root dir ${owners.join(", ")}; e.g. ${podKeyOf(example[POD_NAMESPACE_LABEL], example[POD_NAME_LABEL] ?? "")}); this one (root dir ${owner}) refuses to start: two agents on one runtime would kill each other's pods as orphans. Give each agent its own containerd (or stop the other one and remove its pods: crictl rmp -f <id>)`,
  );
}
