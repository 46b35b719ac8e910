// The eviction summary's background warm-up (wire/eviction.ts): what each 2 s tick refreshes.
//
// - The pressure path's memory-only summary is run only to keep that code compiled and its files
//   open, so the first kernel event does not run it cold; its figures are thrown away. It reads every
//   pod's memory cgroup (100 pods: 300 reads), so it runs every tick only while a memory signal is
//   near its threshold, and every WARM_FAR_EVERY ticks (10 s, upstream's monitoring period) when the
//   node is far from all of them: a fast crossing is the kernel notifier's to report, and the eviction
//   loop reads the full summary every 10 s anyway.
// - The full summary (every pod's cgroups, logs, volumes: ~20 ms at 100 pods) only for a few ticks after
//   the set of pods or of their containers changed, so a new pod's container stats are cached by the
//   time it is ranked — but not at every tick of a burst of starts (9 full summaries in a 100-pod burst).
import { memorySignalStats } from "../eviction/notifier-thresholds.ts";
import { thresholdAmount, type Threshold } from "../eviction/threshold.ts";
import type { Summary } from "../stats/summary.ts";

/** Full summaries after a change of the pods or their containers. */
export const WARM_TICKS_AFTER_CHANGE = 5;
/** Changes at this many ticks in a row get a full summary each; more (a burst) wait for the pods to settle. */
export const WARM_CHANGED_TICKS_IN_A_ROW = 2;
/** Far from every memory threshold: the memory-only summary every this many ticks. */
export const WARM_FAR_EVERY = 5;
/** "Near": a memory signal's headroom over its threshold is under this fraction of its capacity. */
export const WARM_NEAR_FRACTION = 0.25;

/**
 * True when a memory.available or allocatableMemory.available threshold is within
 * WARM_NEAR_FRACTION of capacity of being met, or when the summary cannot tell (no figures).
 */
export function memoryThresholdsNear(thresholds: readonly Threshold[], summary: Summary | undefined, fraction = WARM_NEAR_FRACTION): boolean {
  for (const t of thresholds) {
    if (t.signal !== "memory.available" && t.signal !== "allocatableMemory.available") continue;
    const mem = summary && memorySignalStats(t.signal, summary);
    if (mem?.availableBytes === undefined || mem.workingSetBytes === undefined) return true;
    const capacity = mem.availableBytes + mem.workingSetBytes;
    if (mem.availableBytes - thresholdAmount(t.value, capacity) < fraction * capacity) return true;
  }
  return false;
}

export interface WarmTick {
  memoryOnly: boolean;
  full: boolean;
}

/**
 * The warmer's tick by tick decision. `podsKey` names the active pods and their running containers;
 * `near` is memoryThresholdsNear of the last memory-only summary (true before the first).
 */
export function createWarmPlan(): { tick(podsKey: string, near: boolean): WarmTick } {
  let warmedPods = "";
  let ticksSinceChange = 0;
  let changedTicksInARow = 0;
  let ticksSinceMemory = Infinity;
  return {
    tick(podsKey, near) {
      const changed = podsKey !== warmedPods;
      warmedPods = podsKey;
      ticksSinceChange = changed ? 0 : ticksSinceChange + 1;
      changedTicksInARow = changed ? changedTicksInARow + 1 : 0;
      // A pod or two arriving: at once and after. A burst (the pods change at every tick): each full
      // summary would be stale at the next tick, so it waits for the pods to settle; the eviction loop's
      // own 10 s summary goes on meanwhile.
      const full = changed ? changedTicksInARow <= WARM_CHANGED_TICKS_IN_A_ROW : ticksSinceChange < WARM_TICKS_AFTER_CHANGE;
      const memoryOnly = near || ticksSinceMemory + 1 >= WARM_FAR_EVERY;
      ticksSinceMemory = memoryOnly ? 0 : ticksSinceMemory + 1;
      return { memoryOnly, full };
    },
  };
}
