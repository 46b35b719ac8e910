// Small decisions of the cycle, as pure functions: who is exempt, which threshold is reclaimed
// first, which conditions a set of thresholds reports, the grace override, the staleness filter.
import { isCriticalPriority, isMirrorPod, isStaticPod, type PodLike } from "../pod/pod-like.ts";
import { CONDITION_ORDER, isMemorySignal, SIGNAL_CONDITION, type NodeConditionType } from "./signals.ts";
import { IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS } from "./state.ts";
import { isHardThreshold, type Observations, type Threshold } from "./threshold.ts";

/**
 * Critical pods are never evicted: static, mirror, priority ≥ 2e9 (upstream kubelettypes.IsCriticalPod). With the bunlet option
 * evictStaticPods the static rule alone is dropped, so static pods are ranked and evicted by
 * priority like API pods; mirror pods and critical-priority pods (kube-apiserver & co. at
 * system-node-critical) stay exempt, and admission is unchanged (static pods are always admitted).
 */
export function exemptFromEviction(pod: PodLike, evictStaticPods: boolean): boolean {
  return (!evictStaticPods && isStaticPod(pod)) || isMirrorPod(pod) || isCriticalPriority(pod);
}

/**
 * Threshold priority (docs/eviction-contract.md#which-threshold-is-reclaimed-first): memory-family first; then — our deterministic tie-break where upstream
 * is random — hard before soft, then configuration order.
 */
export function sortThresholdsForReclaim(ts: readonly Threshold[]): Threshold[] {
  const idx = new Map(ts.map((t, i) => [t, i]));
  return [...ts].sort((a, b) => {
    const m = Number(isMemorySignal(b.signal)) - Number(isMemorySignal(a.signal));
    if (m !== 0) return m;
    const h = Number(isHardThreshold(b)) - Number(isHardThreshold(a));
    if (h !== 0) return h;
    return idx.get(a)! - idx.get(b)!;
  });
}

/** Distinct conditions of the met thresholds, in fixed order. */
export function nodeConditionsFor(ts: readonly Threshold[]): NodeConditionType[] {
  const s = new Set(ts.map((t) => SIGNAL_CONDITION[t.signal]));
  return CONDITION_ORDER.filter((c) => s.has(c));
}

/** Grace-override for the pod killer (docs/eviction-contract.md#grace-period-override): 1 for hard; min(max, TGPS) for soft. */
export function gracePeriodOverride(t: Threshold, pod: PodLike, maxPodGracePeriodSeconds: number): number {
  if (isHardThreshold(t)) return IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS;
  const tgps = pod.spec.terminationGracePeriodSeconds;
  return tgps === undefined ? maxPodGracePeriodSeconds : Math.min(maxPodGracePeriodSeconds, tgps);
}

/** Staleness filter (upstream thresholdsUpdatedStats): act only on stats newer than the previous sync's. */
export function thresholdsUpdatedStats(ts: readonly Threshold[], obs: Observations, last: Observations): Threshold[] {
  return ts.filter((t) => {
    const o = obs[t.signal];
    if (!o) return false;
    const prev = last[t.signal];
    return !prev || o.timeMs === 0 || o.timeMs > prev.timeMs;
  });
}
