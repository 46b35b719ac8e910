// Eviction state kept across restarts (beyond upstream, whose eviction manager keeps everything in
// memory, so an evicted static pod runs again at once after a restart and kubelet_evictions starts
// over at 0): `<rootDir>/eviction/state.json` holds the kubelet_evictions counts by
// signal and the static pods evicted, by UID. A static pod's UID is a hash of its manifest, so "the
// same UID" is "the same manifest": an evicted static pod is refused at admission after a restart
// until its manifest changes or an operator runs `bunlet eviction clear`.
//
// Writes are atomic (temp file, fsync, rename, fsync of the directory) and read-modify-write, so an
// operator's `clear` between two evictions is never undone. A corrupt file is moved aside with one
// clear warning and the state starts empty: a bad file must never stop the node.
import { mkdirSync, readFileSync, renameSync, statSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import { writeFileAtomic, writeFileAtomicSync } from "../atomic-file.ts";
import { kv, log } from "../log.ts";

export const evictedPodSchema = z.object({
  uid: z.string().min(1),
  namespace: z.string(),
  name: z.string(),
  /** kubernetes.io/config.source: file or http. */
  source: z.string(),
  signal: z.string(),
  /** The eviction message, shown again as the pod's status message when it is refused. */
  message: z.string(),
  evictedAt: z.string(),
});
export type EvictedPod = z.infer<typeof evictedPodSchema>;

export const evictionRecordSchema = z.object({
  version: z.literal(1),
  /** kubelet_evictions by eviction_signal, cumulative over restarts. */
  evictions: z.record(z.string(), z.number().int().nonnegative()),
  evicted: z.array(evictedPodSchema),
});
export type EvictionRecord = z.infer<typeof evictionRecordSchema>;

export const emptyRecord = (): EvictionRecord => ({ version: 1, evictions: {}, evicted: [] });

export const evictionRecordPath = (rootDir: string) => join(rootDir, "eviction", "state.json");

export class EvictionRecordError extends Error {
  override name = "EvictionRecordError";
}

/** Parses the file's text; throws EvictionRecordError naming the file and the first bad field. */
export function parseEvictionRecord(text: string, path: string): EvictionRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new EvictionRecordError(`${path}: not JSON: ${(e as Error).message}`);
  }
  const r = evictionRecordSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new EvictionRecordError(`${path}: field ${i.path.join(".") || "(root)"}: ${i.message}`);
  }
  return r.data;
}

/** Reads the record; missing → empty; corrupt → moved to `<path>.corrupt`, one warning, empty. */
export function loadEvictionRecord(path: string): EvictionRecord {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return emptyRecord();
    log.warn(`cannot read the eviction state; starting with none ${kv({ file: path, error: (e as Error).message })}`);
    return emptyRecord();
  }
  try {
    return parseEvictionRecord(text, path);
  } catch (e) {
    const aside = `${path}.corrupt`;
    try {
      renameSync(path, aside);
    } catch {
      // left in place: the next write replaces it
    }
    log.warn(`eviction state file is corrupt; moved aside, starting with no eviction state ${kv({ file: path, movedTo: aside, error: (e as Error).message })}`);
    return emptyRecord();
  }
}

const serialize = (r: EvictionRecord) => `${JSON.stringify(r, null, 2)}\n`;

/** The temporary file is per process: the CLI and the agent may write at once. */
const writeOptions = (path: string) => ({ mode: 0o600, syncDir: true, tmpPath: `${path}.tmp-${process.pid}` });

/** Atomic, durable replace (sync: the CLI). */
export function saveEvictionRecordSync(path: string, r: EvictionRecord): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(path, serialize(r), writeOptions(path));
}

/** Atomic, durable replace without blocking the event loop (the agent). */
export async function saveEvictionRecord(path: string, r: EvictionRecord): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, serialize(r), writeOptions(path));
}

/** Pods matching `ns/name` (or all). */
export function clearEvicted(r: EvictionRecord, which: { all: true } | { namespace: string; name: string }): { record: EvictionRecord; cleared: EvictedPod[] } {
  const hit = (p: EvictedPod) => "all" in which || (p.namespace === which.namespace && p.name === which.name);
  return { record: { ...r, evicted: r.evicted.filter((p) => !hit(p)) }, cleared: r.evicted.filter(hit) };
}

export interface EvictionRecordStore {
  /** Counts at start, to seed kubelet_evictions. */
  initialCounts(): Record<string, number>;
  /** The evicted static pod with this UID, re-read when the file changed (an operator's clear). */
  evicted(uid: string): EvictedPod | undefined;
  /** Adds evictions (counts +1 each, static pods remembered); written in the background, in order. */
  record(evictions: { signal: string; pod?: EvictedPod }[]): Promise<void>;
  /** Forgets evicted pods whose UID no source delivers any more (their manifest changed or went). */
  prune(keepUids: ReadonlySet<string>): Promise<void>;
}

export function createEvictionRecordStore(path: string): EvictionRecordStore {
  let current = loadEvictionRecord(path);
  const initial = { ...current.evictions };
  let seen = fileStamp(path);
  let chain: Promise<void> = Promise.resolve();
  const fresh = () => {
    const stamp = fileStamp(path);
    if (stamp !== seen) {
      seen = stamp;
      current = loadEvictionRecord(path);
    }
    return current;
  };
  const update = (fn: (r: EvictionRecord) => EvictionRecord | undefined) => {
    chain = chain.then(async () => {
      try {
        let onDisk = emptyRecord();
        try {
          onDisk = parseEvictionRecord(await readFile(path, "utf8"), path);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "ENOENT" && !(e instanceof EvictionRecordError)) throw e;
          if (e instanceof EvictionRecordError) log.warn(`eviction state file is corrupt; rewriting it ${kv({ file: path, error: e.message })}`);
        }
        const next = fn(onDisk);
        if (!next) return;
        await saveEvictionRecord(path, next);
        current = next;
        seen = fileStamp(path);
      } catch (e) {
        log.error(`cannot write the eviction state ${kv({ file: path, error: (e as Error).message })}`);
      }
    });
    return chain;
  };
  return {
    initialCounts: () => initial,
    evicted: (uid) => fresh().evicted.find((p) => p.uid === uid),
    record: (evictions) =>
      update((r) => {
        const counts = { ...r.evictions };
        const evicted = [...r.evicted];
        for (const e of evictions) {
          counts[e.signal] = (counts[e.signal] ?? 0) + 1;
          if (e.pod && !evicted.some((p) => p.uid === e.pod!.uid)) evicted.push(e.pod);
        }
        return { version: 1, evictions: counts, evicted };
      }),
    prune: (keep) =>
      fresh().evicted.some((p) => !keep.has(p.uid))
        ? update((r) => (r.evicted.some((p) => !keep.has(p.uid)) ? { ...r, evicted: r.evicted.filter((p) => keep.has(p.uid)) } : undefined))
        : Promise.resolve(),
  };
}

function fileStamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return "none";
  }
}
