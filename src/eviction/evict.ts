// Choosing and evicting the victim, the last steps of upstream eviction_manager.go synchronize:
// ephemeral-storage limit evictions (localStorageEviction), the ranking, and at most one pod evicted (the
// loop over evictPod), with the in-flight rules that stand in for upstream's wait for the victim's cleanup.
import { kv } from "../log.ts";
import { isCriticalPriority, isMirrorPod, isStaticPod, podKey, podUid, type PodLike } from "../pod/pod-like.ts";
import { finish, mayEvictNow, podStatsFunc, type Cycle } from "./cycle.ts";
import { blockingKills, startKill } from "./kills.ts";
import { evictLocalStorage } from "./local-storage.ts";
import { EVICTED_REASON, evictionMessage, withFreshContainerMemory } from "./message.ts";
import { exemptFromEviction, gracePeriodOverride, noEvictionNote } from "./policy.ts";
import type { NodeReclaimOutcome, ReclaimChoice } from "./reclaim.ts";
import { rankFuncFor, type FsLayout, type RankedPod, type StatsFunc } from "./rank.ts";
import { IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, type CycleReport, type InFlightKill } from "./state.ts";
import { isHardThreshold } from "./threshold.ts";

/** Step 15 (upstream localStorageEviction): every pod over an ephemeral-storage limit and not already being killed, at the immediate grace. Returns how many. */
export function evictForLocalStorage(
  cycle: Cycle,
  active: readonly PodLike[],
  pending: readonly InFlightKill[],
  statsFunc: StatsFunc,
  layout: FsLayout,
): number {
  const { deps, state, config, logger, report } = cycle;
  const pendingUids = new Set(pending.map((k) => k.uid));
  return evictLocalStorage(
    active.filter((p) => !pendingUids.has(podUid(p))),
    statsFunc,
    layout,
    (p) => exemptFromEviction(p, config.evictStaticPods),
    (pod, { signal, message }) => {
      if (!mayEvictNow(cycle)) return;
      logger.info(`evicting pod for local storage limit ${kv({ pod: podKey(pod), signal, message: message.trim() })}`);
      startKill(deps, state, pod, IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, { reason: EVICTED_REASON, message, annotations: {} }, signal);
      report.evicted.push({ pod, signal, gracePeriodSeconds: IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, message, annotations: {} });
    },
    logger,
  );
}

/** Step 20: a threshold to reclaim and no active pod to evict for it. */
export function noActivePods(cycle: Cycle, { threshold, observedText, thresholdText }: ReclaimChoice): CycleReport {
  cycle.report.note = "no active pods";
  cycle.logger.warn(`eviction manager: no pods to evict ${kv({ signal: threshold.signal, observed: observedText, threshold: thresholdText })}`);
  return finish(cycle);
}

/**
 * Step 21's stats: under disk pressure, a summary whose volumes were walked afresh (ReclaimChoice.freshDisk) —
 * the one node-level reclaim took, else one asked for now; otherwise, or when that fails, the cycle's.
 */
export async function rankingStats(cycle: Cycle, choice: ReclaimChoice, cycleStats: StatsFunc, nodeReclaim: NodeReclaimOutcome): Promise<StatsFunc> {
  if (!choice.freshDisk) return cycleStats;
  if (nodeReclaim.steps.length > 0) return nodeReclaim.summary ? podStatsFunc(nodeReclaim.summary) : cycleStats;
  try {
    return podStatsFunc(await cycle.deps.summary({ freshVolumes: true }));
  } catch (e) {
    cycle.logger.warn(`summary for disk ranking failed; ranking with the cycle's ${kv({ error: (e as Error).message })}`);
    return cycleStats;
  }
}

/** Step 21 (upstream signalToRankFunc): the active pods in eviction order for the signal. */
export function rankPods({ report }: Cycle, { threshold }: ReclaimChoice, layout: FsLayout, active: readonly PodLike[], statsFunc: StatsFunc): RankedPod[] {
  const ranked = rankFuncFor(threshold.signal, layout)(active, statsFunc);
  report.ranked = ranked;
  return ranked;
}

/**
 * Step 22, the in-flight rule: a kill at least as urgent as this one still running means "wait for
 * cleanup" (upstream blocks instead); true when the cycle waits.
 */
export function waitForInFlightKills({ report, logger, now }: Cycle, { threshold }: ReclaimChoice, pending: readonly InFlightKill[]): boolean {
  const blocking = blockingKills(pending, isHardThreshold(threshold), now);
  if (blocking.length === 0) return false;
  report.note = `waiting for eviction of ${blocking.map((k) => podKey(k.pod)).join(",")} to complete`;
  logger.info(`eviction in progress, not evicting another pod ${kv({ pods: blocking.map((k) => podKey(k.pod)).join(","), signal: threshold.signal })}`);
  return true;
}

/** The ranked pods passed over as exempt: static ones (evictStaticPods off), and critical or mirror ones. */
export interface SkippedPods {
  staticSkipped: number;
  criticalSkipped: number;
}

/**
 * Step 22 (upstream: the loop over evictPod): the first ranked pod that is not exempt and not already being
 * killed at least as urgently is evicted — a softer running kill is escalated. "done" once one is (or the
 * notifier thread's plan evicts instead); else what was passed over.
 */
export function evictFirstEvictable(
  cycle: Cycle,
  choice: ReclaimChoice,
  ranked: readonly RankedPod[],
  pending: readonly InFlightKill[],
  statsFunc: StatsFunc,
): "done" | SkippedPods {
  const { config, logger } = cycle;
  const inFlight = new Map(pending.map((k) => [k.uid, k]));
  const skipped: SkippedPods = { staticSkipped: 0, criticalSkipped: 0 };
  for (let i = 0; i < ranked.length; i++) {
    const { pod } = ranked[i]!;
    if (exemptFromEviction(pod, config.evictStaticPods)) {
      if (!config.evictStaticPods && isStaticPod(pod) && !isMirrorPod(pod) && !isCriticalPriority(pod)) skipped.staticSkipped++;
      else skipped.criticalSkipped++;
      logger.debug(`cannot evict a critical pod ${kv({ pod: podKey(pod) })}`);
      continue;
    }
    const grace = gracePeriodOverride(choice.threshold, pod, config.maxPodGracePeriodSeconds);
    const running = inFlight.get(podUid(pod));
    if (running && running.gracePeriodSeconds <= grace) continue;
    if (!mayEvictNow(cycle)) return "done";
    evictPod(cycle, choice, { entry: ranked[i]!, rank: `${i + 1}/${ranked.length}`, grace, running }, statsFunc);
    return "done";
  }
  return skipped;
}

/** The pod chosen, where it ranked, its grace override and the softer kill it escalates, if any. */
interface Victim {
  entry: RankedPod;
  rank: string;
  grace: number;
  running: InFlightKill | undefined;
}

/** Upstream evictPod: the message (per-container usage read fresh for memory), one line, the kill started and recorded. */
function evictPod({ deps, state, logger, report }: Cycle, choice: ReclaimChoice, { entry, rank, grace, running }: Victim, statsFunc: StatsFunc): void {
  const { pod, qos, priority } = entry;
  const { threshold, resource } = choice;
  const stats = withFreshContainerMemory(resource, pod, statsFunc(pod), resource === "memory" ? deps.containerMemory?.(pod) : undefined);
  const { message, annotations } = evictionMessage(resource, pod, stats, choice.sorted, choice.observations);
  logger.info(
    `${running ? "escalating eviction of" : "evicting"} ${kv({ pod: podKey(pod), signal: threshold.signal, observed: choice.observedText, threshold: choice.thresholdText, rank, qos, priority, grace, previousGrace: running?.gracePeriodSeconds })}`,
  );
  const condition = { type: "DisruptionTarget", status: "True", reason: "TerminationByKubelet", message } as const;
  startKill(deps, state, pod, grace, { reason: EVICTED_REASON, message, annotations, condition }, threshold.signal);
  report.evicted.push({ pod, signal: threshold.signal, gracePeriodSeconds: grace, message, annotations, ...(running ? { escalated: true } : {}) });
}

/** Step 23: a ranking with no victim — the report's note says why, and one warning. */
export function explainNoEviction(
  { report, logger }: Cycle,
  { threshold, observedText, thresholdText }: ReclaimChoice,
  rankedCount: number,
  skipped: SkippedPods,
): void {
  report.note = noEvictionNote(rankedCount, skipped.staticSkipped, skipped.criticalSkipped);
  logger.warn(
    `eviction manager: nothing can be evicted ${kv({ signal: threshold.signal, observed: observedText, threshold: thresholdText, why: report.note })}`,
  );
}
