// One eviction cycle (docs/eviction-contract.md#one-synchronize): observe → thresholds met → grace → conditions → staleness
// → local-storage limits → choose a threshold → node reclaim → rank → evict at most one pod.
// Kills are started, not awaited: a slow soft kill never stalls a later hard eviction (upstream
// kubernetes/kubernetes#123872). The in-flight table stops a pod being killed twice and lets a hard threshold escalate
// a running soft kill to the 1 s grace override.
import { kv, log as defaultLog } from "../log.ts";
import { isCriticalPriority, isMirrorPod, isStaticPod, podKey, podUid } from "../pod/pod-like.ts";
import type { Summary } from "../stats/summary.ts";
import { detectFsLayout, reclaimStepsFor, updateContainerFsThresholds } from "./fs-layout.ts";
import { killExpiryMs, pendingKills, startKill } from "./kills.ts";
import { evictLocalStorage } from "./local-storage.ts";
import { EVICTED_REASON, evictionMessage, formatAmount, formatThresholdAmount, withFreshContainerMemory } from "./message.ts";
import { notifierTargets } from "./notifier-thresholds.ts";
import { makeSignalObservations, podStatsByUid } from "./observations.ts";
import { exemptFromEviction, gracePeriodOverride, nodeConditionsFor, sortThresholdsForReclaim, thresholdsUpdatedStats } from "./policy.ts";
import { rankFuncFor, type StatsFunc } from "./rank.ts";
import { CONDITION_ORDER, SIGNAL_RESOURCE, signalIsCount, type Signal } from "./signals.ts";
import { IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, NOTIFIER_REFRESH_INTERVAL_MS, type CycleReport, type EvictionState } from "./state.ts";
import { isHardThreshold, thresholdsMet, type Threshold } from "./threshold.ts";
import type { EvictionDeps, Logger } from "./types.ts";

// Callers import the cycle's vocabulary from here.
export * from "./state.ts";
export { exemptFromEviction, gracePeriodOverride, nodeConditionsFor, sortThresholdsForReclaim, thresholdsUpdatedStats } from "./policy.ts";
export { killExpiryMs, pendingKills, startKill } from "./kills.ts";

const fmtObs = (signal: Signal, n: number | undefined) => (n === undefined ? undefined : formatAmount(n, signalIsCount(signal)));

export interface SynchronizeOptions {
  /** A kernel memcg event's cycle: ask for a memory-only summary (disk and pid stats reused). */
  memoryOnly?: boolean;
}

export async function synchronize(deps: EvictionDeps, state: EvictionState, opts: SynchronizeOptions = {}): Promise<CycleReport> {
  const logger: Logger = deps.logger ?? defaultLog;
  const { config, clock } = deps;
  const now = clock.now();
  const report: CycleReport = {
    timeMs: now,
    observations: {},
    thresholds: state.thresholds,
    met: [],
    actionable: [],
    actionableFresh: [],
    conditions: state.nodeConditions,
    reclaim: null,
    nodeReclaim: null,
    ranked: [],
    evicted: [],
  };
  // Step 1.
  if (state.thresholds.length === 0 && !config.localStorageCapacityIsolation) return report;

  // Step 3 (summary first: our layout detection reads it).
  const active = deps.activePods();
  let summary: Summary;
  try {
    summary = await (opts.memoryOnly ? deps.summary({ memoryOnly: true }) : deps.summary());
  } catch (e) {
    report.error = `failed to get summary stats: ${(e as Error).message}`;
    logger.error(`eviction manager: ${report.error}`);
    return report;
  }
  report.statsAtMs = clock.now();

  // Step 2: first sync only. The derived containerfs thresholds take part from the next sync on,
  // as upstream (docs/eviction-contract.md#containerfs-thresholds): this sync still evaluates the configured list.
  const thresholds = state.thresholds;
  if (!state.initialized) {
    try {
      state.layout = deps.fsLayout ? await deps.fsLayout(summary) : detectFsLayout(summary);
    } catch (e) {
      report.error = `failed to detect the filesystem layout: ${(e as Error).message}`;
      logger.error(`eviction manager: ${report.error}`);
      return report;
    }
    if (state.layout.splitContainerImageFs && config.separateDiskGC === false) {
      report.error = "KubeletSeparateDiskGC is turned off but we still have a split filesystem";
      logger.error(`eviction manager: ${report.error}`);
      return report;
    }
    const derived = updateContainerFsThresholds(state.thresholds, state.layout);
    for (const w of derived.warnings) logger.warn(`eviction manager: ${w}`);
    state.thresholds = derived.thresholds;
    state.initialized = true;
  }
  const layout = state.layout!;

  // Step 4: memcg notifier re-arm, at most every 10 s. The registration itself runs off the event
  // loop (the kernel holds it for an RCU grace period, 8–20 ms), but computing the targets and
  // opening the files still costs the cycle: a kernel-triggered cycle leaves it to the next full
  // cycle (≤ 10 s later, 1 s after an eviction) unless that is overdue.
  const sinceRearmMs = state.lastNotifierRefreshMs === undefined ? Infinity : now - state.lastNotifierRefreshMs;
  if (deps.onNotifierTargets && sinceRearmMs > (opts.memoryOnly ? 2 : 1) * NOTIFIER_REFRESH_INTERVAL_MS) {
    state.lastNotifierRefreshMs = now;
    const { targets, errors } = notifierTargets(state.thresholds, summary);
    for (const e of errors) logger.warn(`eviction manager: memcg notifier not updated: ${e}`);
    try {
      deps.onNotifierTargets(targets);
    } catch (e) {
      logger.warn(`eviction manager: memcg notifier update failed: ${(e as Error).message}`);
    }
  }

  // Step 5.
  const { observations, warnings } = makeSignalObservations(summary);
  for (const w of warnings) logger.debug(`eviction manager: ${w}`);
  report.observations = observations;
  let statsFunc = podStatsFunc(summary);
  state.lastSummary = summary;

  for (const t of thresholds) {
    if (!observations[t.signal]) logger.debug(`eviction manager: no observation found for eviction signal ${kv({ signal: t.signal })}`);
  }

  // Steps 6–7: met now, plus hysteresis for what acted last sync.
  const met = thresholdsMet(thresholds, observations, false);
  if (state.thresholdsMet.length > 0) {
    for (const t of thresholdsMet(state.thresholdsMet, observations, true)) if (!met.includes(t)) met.push(t);
  }
  report.met = met;

  // Step 8: grace clocks; a threshold not met now forgets its first-observed time (upstream thresholdsFirstObservedAt).
  const previouslyMet = new Set(state.firstObservedAt.keys());
  const firstObservedAt = new Map<Threshold, number>();
  for (const t of met) firstObservedAt.set(t, state.firstObservedAt.get(t) ?? now);

  // Steps 9–11: conditions are reported at once, and stick for the transition period.
  const lastObservedAt = new Map(state.conditionLastObservedAt);
  for (const c of nodeConditionsFor(met)) lastObservedAt.set(c, now);
  const reported = CONDITION_ORDER.filter((c) => {
    const at = lastObservedAt.get(c);
    return at !== undefined && now - at < config.pressureTransitionPeriodMs;
  });

  // Step 12.
  const actionable = met.filter((t) => now - firstObservedAt.get(t)! >= t.gracePeriodMs);

  // Step 13.
  if (reported.join() !== state.nodeConditions.join()) {
    logger.info(`node conditions changed ${kv({ from: state.nodeConditions.join(",") || "none", to: reported.join(",") || "none" })}`);
  }
  state.nodeConditions = reported;
  state.firstObservedAt = firstObservedAt;
  state.conditionLastObservedAt = lastObservedAt;
  state.thresholdsMet = actionable;
  report.conditions = reported;
  report.actionable = actionable;

  for (const t of met) {
    const o = observations[t.signal]!;
    const graceLeftMs = Math.max(0, t.gracePeriodMs - (now - firstObservedAt.get(t)!));
    // A threshold newly crossed is a decision worth an info line; repeats stay at debug.
    const line = `eviction threshold met ${kv({
      signal: t.signal,
      observed: fmtObs(t.signal, o.available),
      threshold: formatThresholdAmount(t, o.capacity),
      kind: isHardThreshold(t) ? "hard" : "soft",
      graceLeft: `${graceLeftMs / 1000}s`,
    })}`;
    if (previouslyMet.has(t)) logger.debug(line);
    else logger.info(line);
  }

  // Step 14.
  const fresh = thresholdsUpdatedStats(actionable, observations, state.lastObservations);
  state.lastObservations = observations;
  report.actionableFresh = fresh;
  // kubelet_eviction_stats_age_seconds: how old the stats behind each actionable threshold are.
  report.statsAgeSeconds = {};
  for (const t of fresh) {
    const o = observations[t.signal]!;
    if (o.timeMs !== 0) report.statsAgeSeconds[t.signal] = Math.max(0, now - o.timeMs) / 1000;
  }

  const pending = pendingKills(deps, state, active);
  const pendingUids = new Set(pending.map((k) => k.uid));

  // Step 15.
  if (config.localStorageCapacityIsolation) {
    const evicted = evictLocalStorage(
      active.filter((p) => !pendingUids.has(podUid(p))),
      statsFunc,
      layout,
      (p) => exemptFromEviction(p, config.evictStaticPods),
      (pod, { signal, message }) => {
        if (!mayEvictNow(deps, report)) return;
        logger.info(`evicting pod for local storage limit ${kv({ pod: podKey(pod), signal, message: message.trim() })}`);
        startKill(deps, state, pod, IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, { reason: EVICTED_REASON, message, annotations: {} }, signal);
        report.evicted.push({ pod, signal, gracePeriodSeconds: IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, message, annotations: {} });
      },
      logger,
    );
    if (evicted > 0) return finish(state, report);
  }

  // Step 16.
  if (fresh.length === 0) return finish(state, report);

  // Step 17.
  const sorted = sortThresholdsForReclaim(fresh);
  const toReclaim = sorted[0]!;
  const resource = SIGNAL_RESOURCE[toReclaim.signal];
  report.reclaim = { threshold: toReclaim, signal: toReclaim.signal, resource };
  const obs = observations[toReclaim.signal]!;
  const thresholdText = formatThresholdAmount(toReclaim, obs.capacity);
  const observedText = fmtObs(toReclaim.signal, obs.available);

  // Step 18.
  deps.recorder?.({ object: { kind: "Node", name: deps.nodeName ?? "" }, type: "Warning", reason: "EvictionThresholdMet", message: `Attempting to reclaim ${resource}` });
  logger.info(`attempting to reclaim ${kv({ resource, signal: toReclaim.signal, observed: observedText, threshold: thresholdText, kind: isHardThreshold(toReclaim) ? "hard" : "soft" })}`);

  // Disk pressure ranks by volume usage, which the summary serves from a cache of directory walks
  // (up to 10 s old; upstream's is volumeStatsAggPeriod, 1 min): a pod that filled its emptyDir since
  // could rank as empty, and a quiet pod be evicted in its place. The ranking's summary walks afresh.
  const freshDisk = resource === "ephemeral-storage" || resource === "inodes";
  const rankWith = (s: Summary): void => {
    if (freshDisk) statsFunc = podStatsFunc(s);
  };

  // Step 19: node-level reclaim, then re-check every threshold with min-reclaim (upstream reclaimNodeLevelResources).
  const steps = reclaimStepsFor(toReclaim.signal, layout);
  if (steps.length > 0) {
    for (const step of steps) {
      const fn = deps.reclaim?.[step];
      if (!fn) continue;
      try {
        await fn();
      } catch (e) {
        logger.warn(`node-level reclaim failed ${kv({ step, error: (e as Error).message })}`);
      }
    }
    let relieved = false;
    try {
      const afterSummary = await deps.summary(freshDisk ? { freshVolumes: true } : undefined);
      rankWith(afterSummary);
      const after = makeSignalObservations(afterSummary).observations;
      const still = thresholdsMet(state.thresholds, after, true);
      relieved = still.length === 0;
      logger.info(`node-level reclaim done ${kv({ steps: steps.join(","), relieved, stillMet: still.map((t) => t.signal).join(",") || undefined })}`);
    } catch (e) {
      logger.warn(`summary after node-level reclaim failed ${kv({ error: (e as Error).message })}`);
    }
    report.nodeReclaim = { steps, relieved };
    if (relieved) return finish(state, report);
  }

  // Steps 20–21.
  if (active.length === 0) {
    report.note = "no active pods";
    logger.warn(`eviction manager: no pods to evict ${kv({ signal: toReclaim.signal, observed: observedText, threshold: thresholdText })}`);
    return finish(state, report);
  }
  if (freshDisk && steps.length === 0) {
    try {
      rankWith(await deps.summary({ freshVolumes: true }));
    } catch (e) {
      logger.warn(`summary for disk ranking failed; ranking with the cycle's ${kv({ error: (e as Error).message })}`);
    }
  }
  const ranked = rankFuncFor(toReclaim.signal, layout)(active, statsFunc);
  report.ranked = ranked;

  // Step 22, with the in-flight rules: a kill at least as urgent as this one still running means
  // "wait for cleanup" (upstream blocks instead); a softer one is escalated; pods already being
  // killed are never killed again at the same urgency.
  const hard = isHardThreshold(toReclaim);
  const blocking = pending.filter((k) => {
    const urgentEnough = !hard || k.gracePeriodSeconds <= IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS;
    const notExpired = now - k.startedAtMs < killExpiryMs(k);
    return urgentEnough && notExpired;
  });
  if (blocking.length > 0) {
    report.note = `waiting for eviction of ${blocking.map((k) => podKey(k.pod)).join(",")} to complete`;
    logger.info(`eviction in progress, not evicting another pod ${kv({ pods: blocking.map((k) => podKey(k.pod)).join(","), signal: toReclaim.signal })}`);
    return finish(state, report);
  }
  const inFlight = new Map(pending.map((k) => [k.uid, k]));
  let staticSkipped = 0;
  let criticalSkipped = 0;
  for (let i = 0; i < ranked.length; i++) {
    const { pod, qos } = ranked[i]!;
    if (exemptFromEviction(pod, config.evictStaticPods)) {
      if (!config.evictStaticPods && isStaticPod(pod) && !isMirrorPod(pod) && !isCriticalPriority(pod)) staticSkipped++;
      else criticalSkipped++;
      logger.debug(`cannot evict a critical pod ${kv({ pod: podKey(pod) })}`);
      continue;
    }
    const grace = gracePeriodOverride(toReclaim, pod, config.maxPodGracePeriodSeconds);
    const running = inFlight.get(podUid(pod));
    if (running && running.gracePeriodSeconds <= grace) continue;
    if (!mayEvictNow(deps, report)) return finish(state, report);
    const stats = withFreshContainerMemory(resource, pod, statsFunc(pod), resource === "memory" ? deps.containerMemory?.(pod) : undefined);
    const { message, annotations } = evictionMessage(resource, pod, stats, sorted, observations);
    logger.info(
      `${running ? "escalating eviction of" : "evicting"} ${kv({ pod: podKey(pod), signal: toReclaim.signal, observed: observedText, threshold: thresholdText, rank: `${i + 1}/${ranked.length}`, qos, priority: ranked[i]!.priority, grace, previousGrace: running?.gracePeriodSeconds })}`,
    );
    const condition = { type: "DisruptionTarget", status: "True", reason: "TerminationByKubelet", message } as const;
    startKill(deps, state, pod, grace, { reason: EVICTED_REASON, message, annotations, condition }, toReclaim.signal);
    report.evicted.push({ pod, signal: toReclaim.signal, gracePeriodSeconds: grace, message, annotations, ...(running ? { escalated: true } : {}) });
    return finish(state, report);
  }
  // Step 23.
  if (staticSkipped > 0 && criticalSkipped === 0 && staticSkipped === ranked.length) {
    report.note = `all ${staticSkipped} candidate pods are static pods, which are never evicted (set evictStaticPods: true to allow it)`;
  } else {
    report.note = `unable to evict any pods: ${criticalSkipped + staticSkipped} critical (static ${staticSkipped}), ${ranked.length - criticalSkipped - staticSkipped} already being evicted`;
  }
  logger.warn(`eviction manager: nothing can be evicted ${kv({ signal: toReclaim.signal, observed: observedText, threshold: thresholdText, why: report.note })}`);
  return finish(state, report);
}

/** The notifier thread's plan gives way (deps.mayEvict); when it already evicted, this cycle does not. */
function mayEvictNow(deps: EvictionDeps, report: CycleReport): boolean {
  if (!deps.mayEvict || deps.mayEvict()) return true;
  report.note = "the kernel notifier thread is evicting on its plan; its eviction is recorded next";
  return false;
}

function finish(state: EvictionState, report: CycleReport): CycleReport {
  report.thresholds = state.thresholds;
  state.lastReport = report;
  return report;
}

function podStatsFunc(summary: Summary): StatsFunc {
  const statsByUid = podStatsByUid(summary);
  return (p) => (p.metadata.uid ? statsByUid.get(p.metadata.uid) : undefined);
}
