// Swap stats of the Summary API (upstream pkg/kubelet/stats/helper.go cadvisorInfoToSwapStats, over
// cAdvisor's Memory.Swap and Spec.Memory.SwapLimit), read from the files cAdvisor reads:
//   node:      /proc/meminfo — used = SwapTotal − SwapFree; the root's swap limit is SwapTotal (cAdvisor's
//              raw handler), so available = SwapFree;
//   cgroup v2: used = memory.swap.current, limit = memory.swap.max;
//   cgroup v1: used = total_swap of memory.stat, limit = memory.memsw.limit_in_bytes.
// available = limit − used, left out when the limit is unlimited ("max", or above 2^62 as upstream's
// isMemoryUnlimited). A cgroup without swap accounting (no such files) reports 0 used and 0 available,
// cAdvisor's zero values.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pickFlatKeyed } from "./cgroup.ts";
import type { SwapStats } from "./summary.ts";

const UNLIMITED_BYTES = 2 ** 62;

/** Pure: the node's swap from /proc/meminfo fields in bytes (parseMeminfo). */
export function nodeSwapStats(meminfo: Record<string, number>, time: string): SwapStats {
  const total = meminfo.SwapTotal ?? 0;
  const used = Math.max(0, total - (meminfo.SwapFree ?? 0));
  return { time, swapAvailableBytes: Math.max(0, total - used), swapUsageBytes: used };
}

/** Pure: a cgroup's swap from its used bytes and its limit file's text (undefined: no file). */
export function swapStatsFromFiles(usedBytes: number, limit: string | undefined, time: string): SwapStats {
  const out: SwapStats = { time, swapUsageBytes: usedBytes };
  const t = limit?.trim() ?? "0";
  const n = t === "max" ? Number.POSITIVE_INFINITY : Number(t);
  if (Number.isFinite(n) && n <= UNLIMITED_BYTES) out.swapAvailableBytes = Math.max(0, n - usedBytes);
  return out;
}

const readIfExists = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
};

/** A cgroup's swap (its memory controller directory); throws when a file is unreadable or malformed. */
export function cgroupSwapStats(dir: string, version: 1 | 2, time: string): SwapStats {
  if (version === 2) {
    const current = readIfExists(join(dir, "memory.swap.current"))?.trim();
    const used = current === undefined ? 0 : Number(current);
    if (!Number.isFinite(used)) throw new Error(`${dir}/memory.swap.current: ${JSON.stringify(current)} is not a number`);
    return swapStatsFromFiles(used, readIfExists(join(dir, "memory.swap.max")), time);
  }
  // No memsw files: no swap accounting, so no total_swap either (memory.stat is not read again).
  const limit = readIfExists(join(dir, "memory.memsw.limit_in_bytes"));
  if (limit === undefined) return swapStatsFromFiles(0, undefined, time);
  const stat = readFileSync(join(dir, "memory.stat"), "utf8");
  return swapStatsFromFiles(pickFlatKeyed(stat, ["total_swap"], `${dir}/memory.stat`).total_swap ?? 0, limit, time);
}
