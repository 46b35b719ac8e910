// The memory-pressure ranking (eviction/rank.ts rankMemoryPressure, docs/eviction-contract.md#memory-ranking) as the kernel
// notifier thread runs it at a hard memory threshold's crossing (fast-evict.ts): the same
// victim, from the same fresh per-pod stats, with as few file reads as it can.
//
// Why: the ranking key is (exceeds request, priority, request − working set), ties in active-pods
// order. A pod's working set is memory.usage_in_bytes − total_inactive_file (v2: memory.current −
// inactive_file), and memory.stat (the inactive file) is the expensive read — 1.3–5 ms for 100 pod
// cgroups on the CI host, against
// ~0.3 ms for the 100 usage files. The usage bounds the working set from above (0 ≤ ws ≤ usage), so
// each pod's best possible key is known from its usage alone; the exact key is read (memory.stat)
// only for pods whose best possible key still beats the best exact key found so far. With one hog
// among 100 idle pods that is one memory.stat. No imports: the epoll worker bundles this file.

export interface FastCandidate {
  /** The pod's memory request in bytes (podRequest(pod, "memory")). */
  request: number;
  priority: number;
}

type Key = [tier: number, priority: number, overage: number, index: number];

function less(a: Key, b: Key): boolean {
  for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

export interface MemoryVictimChoice {
  /** Index of the victim in the candidates, -1 when there are none. */
  victim: number;
  /** The exact working set of every pod that had to be read (the victim's included); NaN for the others. */
  workingSets: number[];
}

/**
 * The first pod rankMemoryPressure would order first, every candidate's stats found: `usage(i)` is
 * candidate i's memory.usage_in_bytes, `workingSet(i)` its exact working set (called at most once
 * per pod, only when needed). Candidates are in active-pods order, exempt pods already left out.
 */
export function chooseMemoryVictim(cands: readonly FastCandidate[], usage: (i: number) => number, workingSet: (i: number) => number): MemoryVictimChoice {
  const n = cands.length;
  const workingSets = new Array<number>(n).fill(NaN);
  const bound: Key[] = [];
  for (let i = 0; i < n; i++) {
    const c = cands[i]!;
    const u = Math.max(0, usage(i));
    bound.push([u > c.request ? 0 : 1, c.priority, c.request - u, i]);
  }
  bound.sort((a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0));
  let best: Key | undefined;
  for (const b of bound) {
    if (best && less(best, b)) break; // every later pod's best possible key is worse still
    const i = b[3];
    const c = cands[i]!;
    const ws = Math.max(0, workingSet(i));
    workingSets[i] = ws;
    const exact: Key = [ws > c.request ? 0 : 1, c.priority, c.request - ws, i];
    if (!best || less(exact, best)) best = exact;
  }
  return { victim: best ? best[3] : -1, workingSets };
}

/** A memory signal at the crossing: available = capacity − working set, met when the threshold's bytes exceed it (thresholdsMet). */
export function memoryThresholdAt(
  valueBytes: number,
  capacityBytes: number,
  usageBytes: number,
  inactiveFileBytes: number,
): { available: number; met: boolean } {
  const ws = Math.max(0, usageBytes - inactiveFileBytes);
  const available = Math.max(0, capacityBytes - ws);
  return { available, met: valueBytes > available };
}

/**
 * One "key value" line of a memory.stat text, found by search (no full parse: the notifier thread
 * reads it at the crossing); undefined when absent. `key` without the trailing space.
 */
export function statValue(text: string, key: string): number | undefined {
  const k = `${key} `;
  let at = text.startsWith(k) ? 0 : text.indexOf(`\n${k}`);
  if (at < 0) return undefined;
  if (at > 0) at += 1;
  const end = text.indexOf("\n", at);
  const v = Number(text.slice(at + k.length, end < 0 ? undefined : end));
  return Number.isFinite(v) ? v : undefined;
}

/**
 * The inactive file of a memory.stat text: total_inactive_file on cgroup v1 (hierarchical), inactive_file
 * on cgroup v2 (memory.stat is always hierarchical there); undefined when absent.
 */
export function inactiveFileFromStat(text: string, key: "total_inactive_file" | "inactive_file" = "total_inactive_file"): number | undefined {
  return statValue(text, key);
}
