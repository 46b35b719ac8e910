// Memory stats of one cgroup straight from its files (what cAdvisor reports, without cAdvisor):
//   v1: usage = memory.usage_in_bytes; memory.stat total_inactive_file, total_rss,
//       total_pgfault, total_pgmajfault (the hierarchical totals);
//   v2: usage = memory.current; memory.stat inactive_file, anon, pgfault, pgmajfault.
// workingSet = usage − inactive_file, floored at 0 (docs/eviction-contract.md#node-memory). availableBytes is set
// only when the cgroup has a memory limit (limit − workingSet), as the kubelet's summary does.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { MemoryStats } from "./summary.ts";
import type { KeptFiles } from "./kept-files.ts";
import { parseFlatKeyed } from "../kernel/cgroup-parse.ts";

/** v1 reports "no limit" as a page-rounded 2^63−1; anything this large means unlimited. */
const UNLIMITED_BYTES = 2 ** 62;

export type CgroupVersion = 1 | 2;

export interface CgroupMemoryFiles {
  version: CgroupVersion;
  /** memory.usage_in_bytes (v1) / memory.current (v2). */
  usage: string;
  /** memory.stat */
  stat: string;
  /** memory.limit_in_bytes (v1) / memory.max (v2), when present. */
  limit?: string;
}

export class CgroupStatsError extends Error {
  override name = "CgroupStatsError";
}

/** Pure: file contents → MemoryStats at `time`. */
export function memoryStatsFromFiles(files: CgroupMemoryFiles, time: string, where = "cgroup"): MemoryStats {
  const usage = Number(files.usage.trim());
  if (!Number.isFinite(usage)) throw new CgroupStatsError(`${where}: memory usage ${JSON.stringify(files.usage.trim())} is not a number`);
  const v1 = files.version === 1;
  const keys = v1 ? V1_KEYS : V2_KEYS;
  const stat = pickFlatKeyed(files.stat, keys, `${where}/memory.stat`);
  // Every memory.stat has it: a file without is not a memory.stat (the working set needs it).
  if (stat[keys[0]] === undefined) throw new CgroupStatsError(`${where}/memory.stat: no ${keys[0]} line`);
  const inactiveFile = stat[keys[0]] ?? 0;
  const workingSet = Math.max(0, usage - inactiveFile);
  const out: MemoryStats = { time, usageBytes: usage, workingSetBytes: workingSet };
  const rss = v1 ? stat.total_rss : stat.anon;
  if (rss !== undefined) out.rssBytes = rss;
  const pgfault = v1 ? stat.total_pgfault : stat.pgfault;
  if (pgfault !== undefined) out.pageFaults = pgfault;
  const pgmajfault = v1 ? stat.total_pgmajfault : stat.pgmajfault;
  if (pgmajfault !== undefined) out.majorPageFaults = pgmajfault;
  const limit = parseLimit(files.limit);
  if (limit !== undefined) out.availableBytes = Math.max(0, limit - workingSet);
  return out;
}

/**
 * Pure: the cgroup v2 root's memory, which has memory.stat but no memory.current: usage = anon + file
 * (runc's rootStatsFromMeminfo, what cAdvisor and so the kubelet report), working set = usage −
 * inactive_file, floored at 0. No limit (the node's availableBytes is capacity − working set).
 */
export function rootMemoryStatsV2(statText: string, time: string, where = "/sys/fs/cgroup"): MemoryStats {
  const stat = parseFlatKeyed(statText, `${where}/memory.stat`);
  if (stat.anon === undefined || stat.file === undefined) throw new CgroupStatsError(`${where}/memory.stat: no anon or file line (is this a cgroup v2 root?)`);
  const usage = stat.anon + stat.file;
  const out: MemoryStats = { time, usageBytes: usage, workingSetBytes: Math.max(0, usage - (stat.inactive_file ?? 0)), rssBytes: stat.anon };
  if (stat.pgfault !== undefined) out.pageFaults = stat.pgfault;
  if (stat.pgmajfault !== undefined) out.majorPageFaults = stat.pgmajfault;
  return out;
}

const V1_KEYS = ["total_inactive_file", "total_rss", "total_pgfault", "total_pgmajfault"] as const;
const V2_KEYS = ["inactive_file", "anon", "pgfault", "pgmajfault"] as const;

/**
 * The values of `keys` in a flat-keyed file ("key value" lines), found by search rather than by
 * parsing every line: memory.stat has 35–50 lines and is read for every pod every few seconds
 * at 100 pods. A wanted value that is not an integer throws naming the file and key.
 */
export function pickFlatKeyed<K extends string>(text: string, keys: readonly K[], file: string): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const key of keys) {
    let at = text.startsWith(`${key} `) ? 0 : text.indexOf(`\n${key} `);
    if (at < 0) continue;
    if (at > 0) at++;
    const start = at + key.length + 1;
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const raw = text.slice(start, end).trim();
    if (!/^-?\d+$/.test(raw)) throw new CgroupStatsError(`${file}: ${key} ${JSON.stringify(raw)} is not an integer`);
    out[key] = Number(raw);
  }
  return out;
}

function parseLimit(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const t = text.trim();
  if (t === "max") return undefined;
  const n = Number(t);
  return Number.isFinite(n) && n < UNLIMITED_BYTES ? n : undefined;
}

const isEnoent = (e: unknown) => (e as NodeJS.ErrnoException).code === "ENOENT";

/** `path/file`'s text, or undefined when the file does not exist. */
function readIfExists(path: string, file: string, files?: KeptFiles): string | undefined {
  try {
    return files ? files.read(join(path, file)) : readFileSync(join(path, file), "utf8");
  } catch (e) {
    if (isEnoent(e)) return undefined;
    throw e;
  }
}

/**
 * Reads a cgroup's memory files; `time` defaults to now (RFC 3339). Three reads and no stat calls
 * (the pressure path runs this for the node, kubepods and every pod): the usage file read tells the
 * version, and a missing limit file is simply no limit.
 */
export function cgroupMemoryStats(path: string, time: string = new Date().toISOString(), files?: KeptFiles): MemoryStats {
  let version: CgroupVersion = 1;
  let usage = readIfExists(path, "memory.usage_in_bytes", files);
  if (usage === undefined) {
    version = 2;
    usage = readIfExists(path, "memory.current", files);
    if (usage === undefined) {
      // code ENOENT: callers treat a cgroup removed under them (pod torn down) as "no stats", not an error.
      const msg = `${path}: neither memory.usage_in_bytes (cgroup v1) nor memory.current (cgroup v2) exists; is this a memory cgroup?`;
      throw Object.assign(new CgroupStatsError(msg), { code: "ENOENT" });
    }
  }
  const stat = files ? files.read(join(path, "memory.stat")) : readFileSync(join(path, "memory.stat"), "utf8");
  const texts: CgroupMemoryFiles = { version, usage, stat };
  const limit = readIfExists(path, version === 1 ? "memory.limit_in_bytes" : "memory.max", files);
  if (limit !== undefined) texts.limit = limit;
  return memoryStatsFromFiles(texts, time, path);
}
