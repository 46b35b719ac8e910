// staticPodPath source (upstream pkg/kubelet/config/file.go + file_linux.go): a manifest file or a
// directory of them (not recursive; dotfiles ignored as upstream, so editors' swap files never become
// pods). The whole source is re-read and sent as one SET after every change seen by fs.watch
// (debounced so an editor's write+rename lands as one update) and every fileCheckFrequency; the mux
// drops unchanged pods. A bad manifest is reported once per distinct error; other files go on.
import { watch, type FSWatcher } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { kv, log } from "../../log.ts";
import type { Clock, TimerHandle } from "../../clock.ts";
import { decodeManifests, ManifestError } from "../manifest.ts";
import { applyStaticPodDefaults } from "../static-pod.ts";
import type { Pod } from "../types.ts";
import { readManifestFile, type ReadLimits } from "./read-manifest.ts";
import { periodicSource, type PodSource } from "./pod-source.ts";
import { createLastGood, dropDuplicateNames, validateStaticPods } from "./static-pods.ts";
import type { PodUpdate } from "./update.ts";

export interface FileSourceOptions {
  path: string;
  nodeName: string;
  checkFrequencyMs: number;
  clock: Clock;
  onUpdate: (u: PodUpdate) => void;
  /** Called with the current manifest errors after each read (empty when all files are fine). */
  onErrors?: (errors: ManifestError[]) => void;
  /** Quiet time after the last filesystem event before the re-read (default FILE_EVENT_DEBOUNCE_MS). */
  debounceMs?: number;
  /** Size cap and read timeout per manifest (defaults in read-manifest.ts). */
  limits?: ReadLimits;
}

/** What one manifest file gave: its pods and errors (both empty for a skipped file). */
export interface FileManifests {
  pods: Pod[];
  errors: ManifestError[];
}

export interface StaticPodsRead {
  pods: Pod[];
  errors: ManifestError[];
  exists: boolean;
  /** Per manifest file read (skipped and vanished files are absent). */
  files?: Map<string, FileManifests>;
  /** Files skipped as upstream does (directories, devices, FIFOs, sockets), one line each. */
  warnings?: { file: string; reason: string }[];
}

/**
 * What each manifest file gave at its last read, by path, with the file's identity then (device,
 * inode, size, mtime and ctime in ns): a file that still has it is not read, decoded, defaulted and
 * validated again. Every fileCheckFrequency (20 s) re-read all 100 manifests of a 100-pod node —
 * YAML, zod and a clone per pod, the same pods every time. A write changes mtime and
 * ctime, a rename or a new file the inode — but file times tick in jiffies (4 ms), so two writes of
 * the same size that close would look alike: a file changed less than `settleMs` before it is read
 * is not kept, and read again at the next check.
 */
export interface ManifestCache {
  entries: Map<string, { identity: string; read: FileManifests }>;
  settleMs: number;
}

export const createManifestCache = (settleMs = 2000): ManifestCache => ({ entries: new Map(), settleMs });

async function fileIdentity(file: string): Promise<{ key: string; changedMs: number } | undefined> {
  try {
    const st = await stat(file, { bigint: true }); // follows symlinks, as the read does
    if (!st.isFile()) return undefined;
    // biome-ignore lint/complexity/useMathMinMax: bigints (Math.max takes numbers only)
    const changedNs = st.ctimeNs > st.mtimeNs ? st.ctimeNs : st.mtimeNs;
    return { key: `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`, changedMs: Number(changedNs / 1_000_000n) };
  } catch {
    return undefined; // the read reports it
  }
}

/** Manifest files read at once (readStaticPods). */
const READ_LANES = 8;

async function listManifestFiles(path: string): Promise<string[]> {
  // Every entry but dotfiles: readManifestFile decides what each one is (following symlinks).
  const entries = await readdir(path);
  return entries
    .filter((name) => !name.startsWith("."))
    .map((name) => join(path, name))
    .sort();
}

/**
 * Reads one manifest file into defaulted pods; whatever its content does is that file's error.
 * `whole`: the file was read whole, so its content alone decided the result (it may be cached).
 */
async function readOneFile(
  file: string,
  nodeName: string,
  limits: ReadLimits,
): Promise<{ read: FileManifests | { skip: string } | undefined; whole: boolean }> {
  const r = await readManifestFile(file, limits);
  if (r.kind === "gone") return { read: undefined, whole: false };
  if (r.kind === "skip") return { read: { skip: r.reason }, whole: false };
  if (r.kind === "error") return { read: { pods: [], errors: [new ManifestError(file, "", r.detail)] }, whole: false };
  try {
    const decoded = decodeManifests(r.text, file);
    const out: FileManifests = { pods: [], errors: [...decoded.errors] };
    const defaulted = decoded.pods.map((pod) => applyStaticPodDefaults(pod, { nodeName, source: "file", location: file }));
    const valid = validateStaticPods(defaulted, file);
    out.pods.push(...valid.pods);
    out.errors.push(...valid.errors);
    return { read: out, whole: true };
  } catch (e) {
    return { read: { pods: [], errors: [new ManifestError(file, "", `unable to process: ${(e as Error).message}`)] }, whole: true };
  }
}

/** Reads every manifest under `path`; pure with respect to the mux (returns pods + errors). */
export async function readStaticPods(path: string, nodeName: string, limits: ReadLimits = {}, cache?: ManifestCache): Promise<StaticPodsRead> {
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { pods: [], errors: [], exists: false };
    return { pods: [], errors: [new ManifestError(path, "", `unable to read config path: ${(e as Error).message}`)], exists: true };
  }
  let names: string[];
  try {
    names = st.isDirectory() ? await listManifestFiles(path) : [path];
  } catch (e) {
    return { pods: [], errors: [new ManifestError(path, "", `unable to read config path: ${(e as Error).message}`)], exists: true };
  }
  const files = new Map<string, FileManifests>();
  const warnings: { file: string; reason: string }[] = [];
  // A few files at a time: each read is 5 filesystem calls on Bun's thread pool, so 100 manifests
  // dropped at once read one by one put ~100 ms before the first pod; results keep
  // the sorted order of the names.
  const read: (FileManifests | { skip: string } | undefined)[] = new Array(names.length);
  let next = 0;
  const readCached = async (file: string): Promise<FileManifests | { skip: string } | undefined> => {
    if (!cache) return (await readOneFile(file, nodeName, limits)).read;
    const before = await fileIdentity(file);
    const hit = cache.entries.get(file);
    if (before !== undefined && hit?.identity === before.key) return hit.read;
    const startMs = Date.now(); // wall clock, as file times
    const r = await readOneFile(file, nodeName, limits);
    // Only a file read whole and settled is kept (its pods or its decoding errors); a timeout, a file
    // that grew while read or changed since the stat is tried again at the next check.
    const after = r.whole && before && startMs - before.changedMs >= cache.settleMs ? await fileIdentity(file) : undefined;
    if (after && after.key === before!.key && r.read && !("skip" in r.read)) cache.entries.set(file, { identity: after.key, read: r.read });
    else cache.entries.delete(file);
    return r.read;
  };
  const lane = async () => {
    for (let i = next++; i < names.length; i = next++) read[i] = await readCached(names[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(READ_LANES, names.length) }, lane));
  if (cache) {
    const listed = new Set(names);
    for (const file of cache.entries.keys()) if (!listed.has(file)) cache.entries.delete(file);
  }
  for (const [i, file] of names.entries()) {
    const r = read[i];
    if (!r) continue;
    if ("skip" in r) warnings.push({ file, reason: r.skip });
    else files.set(file, r);
  }
  const all = [...files.values()];
  return { pods: all.flatMap((f) => f.pods), errors: all.flatMap((f) => f.errors), exists: true, files, warnings };
}

/**
 * An editor's write and rename, or a script's burst of renames, come microseconds apart: 10 ms of quiet
 * reads them as one update, and adds no more than that to a pod's start (upstream reads at each event).
 */
export const FILE_EVENT_DEBOUNCE_MS = 10;

export function createFileSource(opts: FileSourceOptions): PodSource {
  let watcher: FSWatcher | undefined;
  let debounce: TimerHandle | undefined;
  let current: ManifestError[] = [];
  let reported = new Set<string>();
  let running: Promise<void> | undefined;
  let again = false;
  const manifestCache = createManifestCache();
  // Messages about manifests kept at their previous version this round (logged once per version).
  const kept: { message: string }[] = [];
  const lastGood = createLastGood((file, pods, errors) => {
    kept.push({
      message: `invalid new version of a static pod manifest: its pods keep running as they were ${kv({ file, pods: pods.map((p) => p.metadata.name).join(","), errors: errors.length, firstError: errors[0]!.message })}`,
    });
  });

  const ensureWatch = () => {
    if (watcher || source.stopped()) return;
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
    if (source.stopped()) return;
    if (debounce) opts.clock.clearTimeout(debounce);
    debounce = opts.clock.setTimeout(() => {
      debounce = undefined;
      void resync();
    }, opts.debounceMs ?? FILE_EVENT_DEBOUNCE_MS);
  };

  const readOnce = async () => {
    const r = await readStaticPods(opts.path, opts.nodeName, opts.limits, manifestCache);
    if (source.stopped()) return;
    if (!r.exists && !reported.has("missing")) log.warn(`static pod path does not exist, ignoring ${kv({ path: opts.path })}`);
    const next = new Set<string>(r.exists ? [] : ["missing"]);
    for (const w of r.warnings ?? []) {
      const key = `skip ${w.file} ${w.reason}`;
      next.add(key);
      if (!reported.has(key)) log.warn(`${w.reason}, skipping ${kv({ path: w.file })}`);
    }
    for (const e of r.errors) {
      next.add(e.message);
      if (!reported.has(e.message)) log.error(`static pod manifest rejected ${kv({ file: e.file, field: e.field || undefined, error: e.detail })}`);
    }
    const entries: { pod: Pod; location: string }[] = [];
    for (const [file, fm] of r.files ?? []) for (const pod of lastGood.resolve(file, fm.pods, fm.errors)) entries.push({ pod, location: file });
    lastGood.forgetExcept(new Set(r.files?.keys() ?? []));
    const unique = dropDuplicateNames(entries);
    const errors = [...r.errors, ...unique.errors];
    for (const e of [...unique.errors, ...kept.splice(0)]) {
      next.add(e.message);
      if (!reported.has(e.message)) log.warn(e.message);
    }
    reported = next;
    current = errors;
    opts.onErrors?.(errors);
    opts.onUpdate({ op: "SET", pods: unique.pods, source: "file" });
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
        } while (again && !source.stopped());
      } catch (e) {
        log.error(`static pod path read failed ${kv({ path: opts.path, error: (e as Error).message })}`);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  const source = periodicSource({
    clock: opts.clock,
    checkFrequencyMs: opts.checkFrequencyMs,
    resync,
    errors: () => current,
    onStop() {
      watcher?.close();
      watcher = undefined;
      if (debounce) opts.clock.clearTimeout(debounce);
    },
  });
  return source;
}
