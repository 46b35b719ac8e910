// One eviction cycle (docs/eviction-contract.md#one-synchronize), a recipe as upstream eviction_manager.go
// synchronize: observe → thresholds met → grace → conditions → staleness → local-storage limits → choose a
// threshold → node reclaim (reclaim.ts) → rank → evict at most one pod (evict.ts). Each step is one call.
// Kills are started, not awaited: a slow soft kill never stalls a later hard eviction. The in-flight table
// stops a pod being killed twice and lets a hard threshold escalate a running soft kill to the 1 s grace override.
import { kv } from "../log.ts";
import type { Summary } from "../stats/summary.ts";
import { failed, finish, fmtObs, newCycle, podStatsFunc, type Cycle } from "./cycle.ts";
import { evictFirstEvictable, evictForLocalStorage, explainNoEviction, noActivePods, rankingStats, rankPods, waitForInFlightKills } from "./evict.ts";
import { detectFsLayout, updateContainerFsThresholds } from "./fs-layout.ts";
import { pendingKills } from "./kills.ts";
import { formatThresholdAmount } from "./message.ts";
import { notifierTargets } from "./notifier-thresholds.ts";
import { makeSignalObservations, statsAgeSeconds } from "./observations.ts";
import {
  nodeConditionsFor,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  notifierRefreshDue,
  thresholdsFirstObservedAt,
  thresholdsMetGracePeriod,
  thresholdsMetWithHysteresis,
  thresholdsUpdatedStats,
} from "./policy.ts";
import { announceReclaim, chooseThresholdToReclaim, reclaimNodeLevelResources } from "./reclaim.ts";
import type { NodeConditionType } from "./signals.ts";
import type { CycleReport, EvictionState } from "./state.ts";
import { isHardThreshold, type Observations, type Threshold } from "./threshold.ts";
import type { EvictionDeps } from "./types.ts";

// Callers import the cycle's vocabulary from here.
export * from "./state.ts";
export { exemptFromEviction, gracePeriodOverride, nodeConditionsFor, sortThresholdsForReclaim, thresholdsUpdatedStats } from "./policy.ts";
export { killExpiryMs, pendingKills, startKill } from "./kills.ts";

export interface SynchronizeOptions {
  /** A kernel memcg event's cycle: ask for a memory-only summary (disk and pid stats reused). */
  memoryOnly?: boolean;
}

export async function synchronize(deps: EvictionDeps, state: EvictionState, opts: SynchronizeOptions = {}): Promise<CycleReport> {
  const cycle = newCycle(deps, state, opts.memoryOnly === true);
  const { config, now, report } = cycle;
  // Step 1: nothing to do without thresholds or local-storage isolation.
  if (state.thresholds.length === 0 && !config.localStorageCapacityIsolation) return report;
  // Step 3: the active pods and the summary (before step 2: the layout detection reads it).
  const active = deps.activePods();
  const summary = await getSummary(cycle);
  if (!summary) return report;
  // Step 2: this sync evaluates the configured thresholds; the first one derives the containerfs ones for the next.
  const thresholds = state.thresholds;
  if (!state.initialized && !(await initialize(cycle, summary))) return report;
  const layout = state.layout!;
  // Step 4: memcg notifier re-arm, at most every 10 s.
  if (deps.onNotifierTargets && notifierRefreshDue(state.lastNotifierRefreshMs, now, cycle.memoryOnly)) updateNotifiers(cycle, summary);
  // Step 5: observations, and each pod's stats (the ranking's and the local-storage check's).
  const observations = observe(cycle, summary, thresholds);
  const statsFunc = podStatsFunc(summary);
  // Steps 6–7: met now, plus hysteresis for what acted last sync.
  const met = (report.met = thresholdsMetWithHysteresis(thresholds, state.thresholdsMet, observations));
  // Step 8: grace clocks; a threshold not met now forgets its first-observed time.
  const firstObservedAt = thresholdsFirstObservedAt(met, state.firstObservedAt, now);
  // Steps 9–11: conditions are reported at once, and stick for the transition period.
  const lastObservedAt = nodeConditionsLastObservedAt(nodeConditionsFor(met), state.conditionLastObservedAt, now);
  const conditions = nodeConditionsObservedSince(lastObservedAt, config.pressureTransitionPeriodMs, now);
  // Step 12: the thresholds whose grace period is over.
  const actionable = thresholdsMetGracePeriod(met, firstObservedAt, now);
  // Step 13: the manager's state (a line when the conditions change), then a line per threshold met.
  const lastFirstObservedAt = updateState(cycle, { conditions, firstObservedAt, lastObservedAt, actionable });
  logThresholdsMet(cycle, met, observations, lastFirstObservedAt);
  // Step 14: only thresholds on stats newer than the last sync's act.
  const fresh = freshThresholds(cycle, actionable, observations);
  const pending = pendingKills(deps, state, active);
  // Step 15: ephemeral-storage limits; an eviction there ends the cycle.
  if (config.localStorageCapacityIsolation && evictForLocalStorage(cycle, active, pending, statsFunc, layout) > 0) return finish(cycle);
  // Step 16: no resource is starved.
  if (fresh.length === 0) return finish(cycle);
  // Step 17: the threshold to reclaim.
  const reclaim = chooseThresholdToReclaim(cycle, fresh, observations);
  // Step 18: an event on the node and a line.
  announceReclaim(cycle, reclaim);
  // Step 19: node-level reclaim, then every threshold re-checked with min-reclaim.
  const nodeReclaim = await reclaimNodeLevelResources(cycle, reclaim, layout);
  if (nodeReclaim.relieved) return finish(cycle);
  // Step 20: no pod to evict.
  if (active.length === 0) return noActivePods(cycle, reclaim);
  // Step 21: the pods ranked for the starved resource (disk: on volumes walked afresh).
  const rankStats = await rankingStats(cycle, reclaim, statsFunc, nodeReclaim);
  const ranked = rankPods(cycle, reclaim, layout, active, rankStats);
  // Step 22: an in-flight kill at least as urgent is waited for; else the first evictable pod is evicted.
  if (waitForInFlightKills(cycle, reclaim, pending)) return finish(cycle);
  const skipped = evictFirstEvictable(cycle, reclaim, ranked, pending, rankStats);
  if (skipped === "done") return finish(cycle);
  // Step 23: nobody could be evicted: say why.
  explainNoEviction(cycle, reclaim, ranked.length, skipped);
  return finish(cycle);
}

/** Step 3: the summary (a memory-only one for a kernel memcg event's cycle); undefined when it failed. */
async function getSummary(cycle: Cycle): Promise<Summary | undefined> {
  const { deps, report } = cycle;
  try {
    const summary = await (cycle.memoryOnly ? deps.summary({ memoryOnly: true }) : deps.summary());
    report.statsAtMs = deps.clock.now();
    return summary;
  } catch (e) {
    failed(cycle, `failed to get summary stats: ${(e as Error).message}`);
    return undefined;
  }
}

/**
 * Step 2, first sync only: the filesystem layout, and the containerfs thresholds derived from it. They
 * take part from the next sync on, as upstream (docs/eviction-contract.md#containerfs-thresholds).
 */
async function initialize(cycle: Cycle, summary: Summary): Promise<boolean> {
  const { deps, state, logger } = cycle;
  try {
    state.layout = deps.fsLayout ? await deps.fsLayout(summary) : detectFsLayout(summary);
  } catch (e) {
    failed(cycle, `failed to detect the filesystem layout: ${(e as Error).message}`);
    return false;
  }
  if (state.layout.splitContainerImageFs && deps.config.separateDiskGC === false) {
    failed(cycle, "KubeletSeparateDiskGC is turned off but we still have a split filesystem");
    return false;
  }
  const derived = updateContainerFsThresholds(state.thresholds, state.layout);
  for (const w of derived.warnings) logger.warn(`eviction manager: ${w}`);
  state.thresholds = derived.thresholds;
  state.initialized = true;
  return true;
}

/**
 * Step 4 (upstream notifier.UpdateThreshold): where the memcg notifiers are armed. The registration
 * itself runs off the event loop (the kernel holds it for an RCU grace period, 8–20 ms), but computing
 * the targets and opening the files still costs the cycle: hence at most every 10 s (notifierRefreshDue).
 */
function updateNotifiers({ deps, state, logger, now }: Cycle, summary: Summary): void {
  state.lastNotifierRefreshMs = now;
  const { targets, errors } = notifierTargets(state.thresholds, summary);
  for (const e of errors) logger.warn(`eviction manager: memcg notifier not updated: ${e}`);
  try {
    deps.onNotifierTargets!(targets);
  } catch (e) {
    logger.warn(`eviction manager: memcg notifier update failed: ${(e as Error).message}`);
  }
}

/** Step 5 (upstream makeSignalObservations): the observations, with a debug line for each threshold that has none. */
function observe({ state, logger, report }: Cycle, summary: Summary, thresholds: readonly Threshold[]): Observations {
  const { observations, warnings } = makeSignalObservations(summary);
  for (const w of warnings) logger.debug(`eviction manager: ${w}`);
  report.observations = observations;
  state.lastSummary = summary;
  for (const t of thresholds) {
    if (!observations[t.signal]) logger.debug(`eviction manager: no observation found for eviction signal ${kv({ signal: t.signal })}`);
  }
  return observations;
}

/**
 * Step 13 (upstream: the state update under m.Lock): conditions, grace clocks and the thresholds that act,
 * with a line when the conditions change. Returns the grace clocks it replaced (what was met last sync).
 */
function updateState(
  { state, logger, report }: Cycle,
  next: { conditions: NodeConditionType[]; firstObservedAt: Map<Threshold, number>; lastObservedAt: Map<NodeConditionType, number>; actionable: Threshold[] },
): ReadonlyMap<Threshold, number> {
  const last = state.firstObservedAt;
  if (next.conditions.join() !== state.nodeConditions.join()) {
    logger.info(`node conditions changed ${kv({ from: state.nodeConditions.join(",") || "none", to: next.conditions.join(",") || "none" })}`);
  }
  state.nodeConditions = next.conditions;
  state.firstObservedAt = next.firstObservedAt;
  state.conditionLastObservedAt = next.lastObservedAt;
  state.thresholdsMet = next.actionable;
  report.conditions = next.conditions;
  report.actionable = next.actionable;
  return last;
}

/** Step 13: a line per threshold met — info when newly met (a decision worth reading), debug on repeats. */
function logThresholdsMet(
  { state, logger, now }: Cycle,
  met: readonly Threshold[],
  observations: Observations,
  lastFirstObservedAt: ReadonlyMap<Threshold, number>,
): void {
  for (const t of met) {
    const o = observations[t.signal]!;
    const graceLeftMs = Math.max(0, t.gracePeriodMs - (now - state.firstObservedAt.get(t)!));
    const line = `eviction threshold met ${kv({
      signal: t.signal,
      observed: fmtObs(t.signal, o.available),
      threshold: formatThresholdAmount(t, o.capacity),
      kind: isHardThreshold(t) ? "hard" : "soft",
      graceLeft: `${graceLeftMs / 1000}s`,
    })}`;
    if (lastFirstObservedAt.has(t)) logger.debug(line);
    else logger.info(line);
  }
}

/** Step 14 (upstream thresholdsUpdatedStats): the actionable thresholds on fresh stats, and the age of those stats. */
function freshThresholds({ state, report, now }: Cycle, actionable: readonly Threshold[], observations: Observations): Threshold[] {
  const fresh = thresholdsUpdatedStats(actionable, observations, state.lastObservations);
  state.lastObservations = observations;
  report.actionableFresh = fresh;
  report.statsAgeSeconds = statsAgeSeconds(fresh, observations, now);
  return fresh;
}
