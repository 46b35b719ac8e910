// Where to arm the cgroup v1 memory threshold notifiers (docs/eviction-contract.md#memory-threshold-notifier). Pure: KERNEL owns
// the eventfd/cgroup.event_control side and calls this with the latest summary.
import type { MemoryStats, Summary } from "../stats/summary.ts";
import { podsSystemContainer } from "./observations.ts";
import { isHardThreshold, thresholdAmount, type Threshold } from "./threshold.ts";

export interface NotifierTarget {
  /** Stable per configured threshold ("memory.available#0"): two thresholds can share a description. */
  id: string;
  signal: "memory.available" | "allocatableMemory.available";
  /** "root": the memory controller mount; "pods": mount + pod cgroup root (kubepods). */
  cgroup: "root" | "pods";
  hard: boolean;
  /** e.g. "hard memory eviction threshold", "soft allocatable memory eviction threshold". */
  description: string;
  /** Bytes to write for memory.usage_in_bytes: capacity − threshold + inactive_file. */
  thresholdBytes: number;
  /** The working set (usage − inactive_file) at which the signal meets the threshold: capacity − threshold.
   * The cgroup v2 fast path watches this (src/kernel/working-set-watch.ts), reading inactive_file itself. */
  workingSetBytes: number;
  /** Index of the threshold in the configured list it was made from. */
  thresholdIndex: number;
}

export class NotifierThresholdError extends Error {
  override name = "NotifierThresholdError";
}

/** memcgThreshold = capacity − thresholdAmount + inactiveFile, where capacity = available + workingSet. */
export function memcgThresholdBytes(t: Threshold, mem: MemoryStats | undefined, where: string): number {
  const { workingSetBytes, inactiveFileBytes } = workingSetLine(t, mem, where);
  return workingSetBytes + inactiveFileBytes;
}

/** capacity − thresholdAmount (the working set that meets the threshold), and inactive_file now. */
export function workingSetLine(t: Threshold, mem: MemoryStats | undefined, where: string): { workingSetBytes: number; inactiveFileBytes: number } {
  if (!mem || mem.usageBytes === undefined || mem.workingSetBytes === undefined || mem.availableBytes === undefined) {
    throw new NotifierThresholdError(`${where}: memory stats need usageBytes, workingSetBytes and availableBytes to arm the ${t.signal} notifier`);
  }
  const capacity = mem.availableBytes + mem.workingSetBytes;
  return { workingSetBytes: capacity - thresholdAmount(t.value, capacity), inactiveFileBytes: mem.usageBytes - mem.workingSetBytes };
}

/** The memory figures a memory signal is observed from: the node's, or the pods' system container's (allocatable). */
export function memorySignalStats(signal: "memory.available" | "allocatableMemory.available", summary: Summary): MemoryStats | undefined {
  return signal === "allocatableMemory.available" ? podsSystemContainer(summary)?.memory : summary.node.memory;
}

/** One target per memory / allocatable-memory threshold, hard and soft. Errors per target are returned, not thrown. */
export function notifierTargets(thresholds: readonly Threshold[], summary: Summary): { targets: NotifierTarget[]; errors: string[] } {
  const targets: NotifierTarget[] = [];
  const errors: string[] = [];
  for (const [index, t] of thresholds.entries()) {
    if (t.signal !== "memory.available" && t.signal !== "allocatableMemory.available") continue;
    const pods = t.signal === "allocatableMemory.available";
    const hard = isHardThreshold(t);
    try {
      const mem = memorySignalStats(t.signal, summary);
      const line = workingSetLine(t, mem, pods ? 'node.systemContainers["pods"].memory' : "node.memory");
      targets.push({
        id: `${t.signal}#${index}`,
        signal: t.signal,
        cgroup: pods ? "pods" : "root",
        hard,
        description: `${hard ? "hard" : "soft"} ${pods ? "allocatable memory" : "memory"} eviction threshold`,
        thresholdBytes: line.workingSetBytes + line.inactiveFileBytes,
        workingSetBytes: line.workingSetBytes,
        thresholdIndex: index,
      });
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  return { targets, errors };
}

/**
 * Whether a repeated "still over the line" post of a notifier target (as notifierTargets made it) can change what a cycle decides now. It can when the last cycle did not see
 * that threshold met (its stats read a hair under the line), or saw a soft threshold whose grace period
 * has ended since. It cannot while a soft threshold is within its grace period, nor once the threshold
 * was acted on (an eviction in flight is followed by a cycle at its cleanup; nothing evictable is
 * retried by the periodic loop): re-running the whole synchronize every renotify interval then only
 * takes CPU from the node (measured in the v2 guest during a soft grace period: bunlet's main thread at
 * ~45 % of the CPU).
 */
export function repeatCrossingUseful(
  state: { thresholds: readonly Threshold[]; firstObservedAt: ReadonlyMap<Threshold, number>; thresholdsMet: readonly Threshold[] },
  target: { signal: string; thresholdIndex?: number },
  nowMs: number,
): boolean {
  const t = target.thresholdIndex === undefined ? undefined : state.thresholds[target.thresholdIndex];
  if (!t || t.signal !== target.signal) return true;
  const first = state.firstObservedAt.get(t);
  if (first === undefined) return true;
  if (state.thresholdsMet.includes(t)) return false;
  return nowMs - first >= t.gracePeriodMs;
}
