// staticPodPath source (upstream pkg/kubelet/config/file.go + file_linux.go): a manifest file or a
// directory of them (not recursive; dotfiles ignored as upstream, so editors' swap files never become
// pods). The whole source is re-read and sent as one SET after every change seen by fs.watch
// (debounced so an editor's write+rename lands as one update) and every fileCheckFrequency; the mux
// drops unchanged pods. A bad manifest is reported once per distinct error; other files go on.
import { watch, type FSWatcher } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { kv, log } from "../../log.ts";
import { every, type Clock, type TimerHandle } from "../../clock.ts";
import { decodeManifests, ManifestError } from "../manifest.ts";
import { applyStaticPodDefaults } from "../static-pod.ts";
import type { Pod } from "../types.ts";
import type { PodUpdate } from "./update.ts";

export interface FileSourceOptions {
  path: string;
  nodeName: string;
  checkFrequencyMs: number;
  clock: Clock;
  onUpdate: (u: PodUpdate) => void;
  /** Called with the current manifest errors after each read (empty when all files are fine). */
  onErrors?: (errors: ManifestError[]) => void;
  /** Delay between a filesystem event and the re-read. */
  debounceMs?: number;
}

export interface PodSource {
  start(): Promise<void>;
  stop(): void;
  /** Re-reads now (tests, SIGHUP). */
  resync(): Promise<void>;
  errors(): ManifestError[];
}

/** Reads every manifest under `path`; pure with respect to the mux (returns pods + errors). */
export async function readStaticPods(path: string, nodeName: string): Promise<{ pods: Pod[]; errors: ManifestError[]; exists: boolean }> {
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { pods: [], errors: [], exists: false };
    return { pods: [], errors: [new ManifestError(path, "", `unable to read config path: ${(e as Error).message}`)], exists: true };
  }
  let files: string[];
  if (st.isDirectory()) {
    const entries = await readdir(path, { withFileTypes: true });
    files = entries
      .filter((e) => !e.name.startsWith(".") && (e.isFile() || e.isSymbolicLink()))
      .map((e) => join(path, e.name))
      .sort();
  } else {
    files = [path];
  }
  const pods: Pod[] = [];
  const errors: ManifestError[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (e) {
      // Deleted between readdir and read, or a dangling symlink / directory link: skip quietly.
      if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "EISDIR") continue;
      errors.push(new ManifestError(file, "", (e as Error).message));
      continue;
    }
    // Whatever a file's content does, it is that file's error: the directory read goes on.
    try {
      const decoded = decodeManifests(text, file);
      errors.push(...decoded.errors);
      for (const pod of decoded.pods) pods.push(applyStaticPodDefaults(pod, { nodeName, source: "file", location: file }));
    } catch (e) {
      errors.push(new ManifestError(file, "", `unable to process: ${(e as Error).message}`));
    }
  }
  return { pods, errors, exists: true };
}

export function createFileSource(opts: FileSourceOptions): PodSource {
  let watcher: FSWatcher | undefined;
  let stopPeriodic: (() => void) | undefined;
  let debounce: TimerHandle | undefined;
  let stopped = true;
  let current: ManifestError[] = [];
  let reported = new Set<string>();
  let running: Promise<void> | undefined;
  let again = false;

  const ensureWatch = () => {
    if (watcher || stopped) return;
    try {
      watcher = watch(opts.path, { persistent: false }, () => schedule());
      watcher.on("error", () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // Path missing: the periodic resync retries the watch.
    }
  };

  const schedule = () => {
    if (stopped) return;
    if (debounce) opts.clock.clearTimeout(debounce);
    debounce = opts.clock.setTimeout(() => {
      debounce = undefined;
      void resync();
    }, opts.debounceMs ?? 50);
  };

  const readOnce = async () => {
    const r = await readStaticPods(opts.path, opts.nodeName);
    if (stopped) return;
    if (!r.exists && !reported.has("missing")) log.warn(`static pod path does not exist, ignoring ${kv({ path: opts.path })}`);
    const next = new Set<string>(r.exists ? [] : ["missing"]);
    for (const e of r.errors) {
      next.add(e.message);
      if (!reported.has(e.message)) log.error(`static pod manifest rejected ${kv({ file: e.file, field: e.field || undefined, error: e.detail })}`);
    }
    reported = next;
    current = r.errors;
    opts.onErrors?.(r.errors);
    opts.onUpdate({ op: "SET", pods: r.pods, source: "file" });
    ensureWatch();
  };

  // Serialised: a resync requested while one runs runs once more afterwards.
  const resync = async (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await readOnce();
        } while (again && !stopped);
      } catch (e) {
        log.error(`static pod path read failed ${kv({ path: opts.path, error: (e as Error).message })}`);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  return {
    async start() {
      stopped = false;
      // The periodic re-read is armed before the first one, so a first failure never ends it.
      stopPeriodic = every(opts.clock, opts.checkFrequencyMs, resync);
      await resync();
    },
    stop() {
      stopped = true;
      watcher?.close();
      watcher = undefined;
      stopPeriodic?.();
      if (debounce) opts.clock.clearTimeout(debounce);
    },
    resync,
    errors: () => current,
  };
}
