// The main thread's side of a hard memory eviction the kernel notifier thread already signalled
// (kernel/fast-evict.ts): what synchronize() does after choosing a victim — thresholds met, node
// conditions, the EvictionThresholdMet and Evicted events, the Failed/Evicted status with the
// DisruptionTarget condition, the in-flight kill (the pod worker's stop through the runtime) — done
// for the worker's decision, from the worker's observation, instead of deciding again. One pod per
// cycle holds: the plan is cancelled by any cycle that evicts (wire/fast-eviction.ts), and a cycle
// that runs after this one sees the kill in flight and waits for its cleanup.
import type { FastCpu, FastOutcome } from "../kernel/fast-evict.ts";
import { kv, log as defaultLog } from "../log.ts";
import { podKey, type PodLike } from "../pod/pod-like.ts";
import { EVICTED_REASON, evictionMessage, formatAmount, formatThresholdAmount, withFreshContainerMemory } from "./message.ts";
import { podStatsByUid } from "./observations.ts";
import { nodeConditionsFor } from "./policy.ts";
import { type RankedPod, rankMemoryPressure } from "./rank.ts";
import { SIGNAL_RESOURCE, CONDITION_ORDER } from "./signals.ts";
import { startKill } from "./kills.ts";
import { IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, type CycleReport, type EvictionState } from "./state.ts";
import { isHardThreshold, type Observation, type Threshold } from "./threshold.ts";
import type { EvictionDeps } from "./types.ts";
import type { ContainerStats } from "../stats/summary.ts";

export interface FastEvictionDecision {
  /** The state's hard memory threshold the worker found met. */
  threshold: Threshold;
  /** Its observation, read by the worker at the wake-up (timeMs: when it read it). */
  observation: Observation;
  pod: PodLike;
  /** The victim's working set as the worker read it. */
  workingSetBytes: number;
  /** The victim's containers' working sets the worker read right after its signals, by container name (those it could read). */
  containerWorkingSets?: { name: string; workingSetBytes: number }[];
  /** The candidates in the worker's order (victim first), for the report and the trace. */
  ranked: RankedPod[];
  /** Wall-clock ms of the decision (the worker's stats read). */
  decidedAtMs: number;
  /** How many of the victim's containers the worker signalled. */
  signalled: number;
  /** Wall-clock ms of the first signal sent (the eviction proper); absent or 0: none was sent. */
  signalledAtMs?: number;
}

/** Records the worker's eviction in `state`, starts the kill, and returns the cycle's report. */
export function adoptFastEviction(deps: EvictionDeps, state: EvictionState, d: FastEvictionDecision): CycleReport {
  const logger = deps.logger ?? defaultLog;
  const now = deps.clock.now();
  const t = d.threshold;
  const signal = t.signal;
  const resource = SIGNAL_RESOURCE[signal];
  const observations = { ...state.lastObservations, [signal]: d.observation };
  if (!state.firstObservedAt.has(t)) state.firstObservedAt.set(t, now);
  for (const c of nodeConditionsFor([t])) state.conditionLastObservedAt.set(c, now);
  const reported = CONDITION_ORDER.filter((c) => {
    const at = state.conditionLastObservedAt.get(c);
    return at !== undefined && now - at < deps.config.pressureTransitionPeriodMs;
  });
  if (reported.join() !== state.nodeConditions.join()) {
    logger.info(`node conditions changed ${kv({ from: state.nodeConditions.join(",") || "none", to: reported.join(",") || "none" })}`);
  }
  state.nodeConditions = reported;
  state.thresholdsMet = [t];
  state.lastObservations = observations;

  const observed = formatAmount(d.observation.available);
  const threshold = formatThresholdAmount(t, d.observation.capacity);
  const kind = isHardThreshold(t) ? "hard" : "soft";
  deps.recorder?.({
    object: { kind: "Node", name: deps.nodeName ?? "" },
    type: "Warning",
    reason: "EvictionThresholdMet",
    message: `Attempting to reclaim ${resource}`,
  });
  logger.info(`eviction threshold met ${kv({ signal, observed, threshold, kind, graceLeft: "0s" })}`);
  logger.info(`attempting to reclaim ${kv({ resource, signal, observed, threshold, kind })}`);

  // The pod's working set is the worker's, and so are its containers' when it read them (right after its
  // signals, before the victim's exit frees them); else read now — the victim may be freeing its memory
  // already —, else taken from the summary provider's last full summary (the manager's own last summary
  // may be from a cycle before the victim started).
  const uid = d.pod.metadata.uid ?? "";
  const last = deps.lastPodStats?.(uid) ?? (state.lastSummary ? podStatsByUid(state.lastSummary).get(uid) : undefined);
  const time = new Date(d.decidedAtMs).toISOString();
  const fresh = withWorkerContainerMemory(deps.containerMemory?.(d.pod), d.containerWorkingSets, time);
  const read = withFreshContainerMemory(resource, d.pod, last, fresh);
  const stats = read ? { ...read, memory: { ...read.memory, time, workingSetBytes: d.workingSetBytes } } : undefined;
  const { message, annotations } = evictionMessage(resource, d.pod, stats, [t], observations);
  const grace = IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS;
  const rank = d.ranked.findIndex((r) => r.pod === d.pod);
  logger.info(
    `evicting ${kv({ pod: podKey(d.pod), signal, observed, threshold, rank: `${rank + 1}/${d.ranked.length}`, qos: d.ranked[rank]?.qos, priority: d.pod.spec.priority ?? 0, grace, decidedOn: "notifier-thread", containersSignalled: d.signalled })}`,
  );
  const condition = { type: "DisruptionTarget", status: "True", reason: "TerminationByKubelet", message } as const;
  startKill(deps, state, d.pod, grace, { reason: EVICTED_REASON, message, annotations, condition }, signal);
  const report: CycleReport = {
    timeMs: d.decidedAtMs,
    statsAtMs: d.decidedAtMs,
    observations,
    thresholds: state.thresholds,
    met: [t],
    actionable: [t],
    actionableFresh: [t],
    conditions: reported,
    reclaim: { threshold: t, signal, resource },
    nodeReclaim: null,
    ranked: d.ranked,
    evicted: [{ pod: d.pod, signal, gracePeriodSeconds: grace, message, annotations }],
    // kubelet_eviction_stats_age_seconds: from the worker's stats read to its signal, as the cycle
    // observes from its stats to its kill.
    statsAgeSeconds: { [signal]: Math.max(0, (d.signalledAtMs || d.decidedAtMs) - d.observation.timeMs) / 1000 },
    note: "decided on the kernel notifier thread",
  };
  state.lastReport = report;
  return report;
}

/** What the main thread keeps of the plan it published: the worker's outcome names thresholds and pods by index into these. */
export interface PlanMirror {
  generation: number;
  thresholds: Threshold[];
  pods: PodLike[];
  /** Each pod's planned containers' names, in the plan's order (undefined: the pod is not signallable). */
  containerNames?: (readonly string[] | undefined)[];
}

/**
 * The containers' memory as read on the main thread, with the worker's figures over it (and its
 * containers the main thread could not list added): the worker read them before the victim's exit.
 */
export function withWorkerContainerMemory(
  read: readonly ContainerStats[] | undefined,
  worker: FastEvictionDecision["containerWorkingSets"],
  time: string,
): ContainerStats[] | undefined {
  if (!worker || worker.length === 0) return read ? [...read] : undefined;
  const out = new Map((read ?? []).map((c) => [c.name, c]));
  for (const w of worker) out.set(w.name, { ...out.get(w.name), name: w.name, memory: { time, workingSetBytes: w.workingSetBytes } });
  return [...out.values()];
}

export type FiredOutcome = Extract<FastOutcome, { fired: true }>;

/** The worker's eviction as the manager adopts it: the threshold, observation and victim its indices name, the candidates ranked on its reads. */
export function fastEvictionDecision(m: PlanMirror, outcome: FiredOutcome): FastEvictionDecision {
  const usage = (i: number) => (Number.isNaN(outcome.workingSets[i]) ? outcome.usages[i]! : outcome.workingSets[i]!);
  const index = new Map(m.pods.map((p, i) => [p, i]));
  const ranked = rankMemoryPressure(m.pods, (p) => {
    const i = index.get(p)!;
    return {
      podRef: { name: p.metadata.name, namespace: p.metadata.namespace ?? "default", uid: p.metadata.uid ?? "" },
      memory: { time: "", workingSetBytes: usage(i) },
    };
  });
  const names = m.containerNames?.[outcome.victim] ?? [];
  const containerWorkingSets = (outcome.containerWorkingSets ?? []).flatMap((ws, k) =>
    names[k] !== undefined && Number.isFinite(ws) ? [{ name: names[k]!, workingSetBytes: Math.max(0, ws) }] : [],
  );
  return {
    threshold: m.thresholds[outcome.threshold]!,
    observation: { available: outcome.available, capacity: outcome.capacity, timeMs: outcome.readAtMs },
    pod: m.pods[outcome.victim]!,
    workingSetBytes: outcome.workingSets[outcome.victim]!,
    containerWorkingSets,
    ranked,
    decidedAtMs: outcome.readAtMs,
    signalled: outcome.signalled,
    signalledAtMs: outcome.sentAtMs,
  };
}

const msSince = (at: number, from: number) => Math.round((at - from) * 1000) / 1000;

/** The log line's fields for the worker's eviction: what it decided, and how long after its wake-up each step came. */
export function notifierThreadEvictionFields(d: FastEvictionDecision, outcome: FiredOutcome, wokeAtMs: number): Record<string, unknown> {
  return {
    pod: podKey(d.pod),
    signal: d.threshold.signal,
    available: outcome.available,
    workingSetBytes: d.workingSetBytes,
    decideMs: msSince(outcome.readAtMs, wokeAtMs),
    signalMs: msSince(outcome.sentAtMs, wokeAtMs),
    takenMs: outcome.takenAtMs === undefined ? undefined : outcome.takenAtMs === null ? "unseen" : msSince(outcome.takenAtMs, wokeAtMs),
    generation: outcome.generation,
    ...cpuFields(outcome.cpu),
  };
}

/** The deciding thread's CPU accounting, for the log line (where a slow decision's time went). */
export function cpuFields(cpu: FastCpu | undefined): Record<string, string> {
  if (!cpu) return {};
  const s = cpu.sinceSleep;
  return {
    ...(s ? { sinceSleep: `${s.ms}ms run=${s.runMs} runnable=${s.runnableMs} asked=${s.sleepMs}` } : {}),
    decisionMs: String(cpu.decisionMs),
    ...(cpu.majflt && Number.isFinite(cpu.majflt.toSignal)
      ? {
          majflt: `toSignal=${cpu.majflt.toSignal}${cpu.majflt.toTaken === undefined ? "" : ` toTaken=${cpu.majflt.toTaken}`}${cpu.majflt.othersToTaken === undefined ? "" : ` othersToTaken=${cpu.majflt.othersToTaken}`}`,
        }
      : {}),
  };
}
