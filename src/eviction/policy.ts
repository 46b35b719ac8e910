// Small decisions of the cycle, as pure functions (upstream pkg/kubelet/eviction/helpers.go): who is exempt,
// which threshold is reclaimed first, which conditions a set of thresholds reports, the grace and condition
// clocks, the grace override, the staleness filter, the notifier re-arm period.
import { isCriticalPriority, isMirrorPod, isStaticPod, type PodLike } from "../pod/pod-like.ts";
import { CONDITION_ORDER, isMemorySignal, SIGNAL_CONDITION, type NodeConditionType } from "./signals.ts";
import { IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, NOTIFIER_REFRESH_INTERVAL_MS } from "./state.ts";
import { isHardThreshold, thresholdsMet, type Observations, type Threshold } from "./threshold.ts";

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

/**
 * Thresholds met now, then those that acted last sync and are still short of their min-reclaim (upstream
 * thresholdsMet(…, false) merged with thresholdsMet(m.thresholdsMet, …, true)): the hysteresis.
 */
export function thresholdsMetWithHysteresis(thresholds: readonly Threshold[], lastMet: readonly Threshold[], obs: Observations): Threshold[] {
  const met = thresholdsMet(thresholds, obs, false);
  if (lastMet.length > 0) {
    for (const t of thresholdsMet(lastMet, obs, true)) if (!met.includes(t)) met.push(t);
  }
  return met;
}

/** Upstream thresholdsFirstObservedAt: a met threshold keeps the time it was first seen; one not met now forgets it. */
export function thresholdsFirstObservedAt(met: readonly Threshold[], last: ReadonlyMap<Threshold, number>, now: number): Map<Threshold, number> {
  const out = new Map<Threshold, number>();
  for (const t of met) out.set(t, last.get(t) ?? now);
  return out;
}

/** Upstream nodeConditionsLastObservedAt: the conditions observed now are stamped `now`; the others keep their time. */
export function nodeConditionsLastObservedAt(
  observed: readonly NodeConditionType[],
  last: ReadonlyMap<NodeConditionType, number>,
  now: number,
): Map<NodeConditionType, number> {
  const out = new Map(last);
  for (const c of observed) out.set(c, now);
  return out;
}

/** Upstream nodeConditionsObservedSince: the conditions last observed within the transition period, in fixed order. */
export function nodeConditionsObservedSince(lastObservedAt: ReadonlyMap<NodeConditionType, number>, periodMs: number, now: number): NodeConditionType[] {
  return CONDITION_ORDER.filter((c) => {
    const at = lastObservedAt.get(c);
    return at !== undefined && now - at < periodMs;
  });
}

/** Upstream thresholdsMetGracePeriod: the met thresholds first observed at least their grace period ago. */
export function thresholdsMetGracePeriod(met: readonly Threshold[], firstObservedAt: ReadonlyMap<Threshold, number>, now: number): Threshold[] {
  return met.filter((t) => now - firstObservedAt.get(t)! >= t.gracePeriodMs);
}

/**
 * The memcg notifiers are re-armed every NOTIFIER_REFRESH_INTERVAL_MS (upstream notifierRefreshInterval); a
 * kernel-triggered cycle leaves it to the next full cycle unless that is overdue (twice the interval).
 */
export function notifierRefreshDue(lastRefreshMs: number | undefined, now: number, memoryOnly: boolean): boolean {
  const sinceMs = lastRefreshMs === undefined ? Infinity : now - lastRefreshMs;
  return sinceMs > (memoryOnly ? 2 : 1) * NOTIFIER_REFRESH_INTERVAL_MS;
}

/** Why a ranking yielded no victim: every candidate static (and evictStaticPods off), or critical or already being evicted. */
export function noEvictionNote(ranked: number, staticSkipped: number, criticalSkipped: number): string {
  if (staticSkipped > 0 && criticalSkipped === 0 && staticSkipped === ranked) {
    return `all ${staticSkipped} candidate pods are static pods, which are never evicted (set evictStaticPods: true to allow it)`;
  }
  return `unable to evict any pods: ${criticalSkipped + staticSkipped} critical (static ${staticSkipped}), ${ranked - criticalSkipped - staticSkipped} already being evicted`;
}
