// The eviction trace's record (--eviction-trace, JSON lines): one per eviction, from the threshold
// crossing to memory back below it, built from the times the tracer (wire/trace.ts) gathers by pod
// UID — and which kernel event started which eviction. Pure: plain data in, plain data out; the few
// functions that note a time on an open trace change only that trace (and take the event they match).
import { podKey, type PodLike } from "../pod/pod-like.ts";
import { formatAmount, formatThresholdAmount } from "./message.ts";
import { type Signal, signalIsCount } from "./signals.ts";
import type { CycleReport, EvictionState } from "./state.ts";
import type { CycleRecord } from "./trace.ts";

export interface EvictionTraceRecord {
  kind: "eviction";
  pod: string;
  uid: string;
  signal: string;
  /** Observed value of the signal in the deciding cycle ("243Mi"), and in bytes (or count). */
  observed: string | null;
  observedValue: number | null;
  threshold: string | null;
  gracePeriodSeconds: number;
  message: string;
  /** What started the deciding cycle. */
  trigger: { kind: "kernel"; reason: string } | { kind: "periodic" };
  timestamps: {
    thresholdCrossed: string;
    decision: string;
    stopSignalSent: string | null;
    containerExited: string | null;
    memoryBelowThreshold: string | null;
  };
  /** Milliseconds from the crossing (kernel event, else first observation) to each step. */
  latencyMs: {
    decision: number;
    stopSignalSent: number | null;
    containerExited: number | null;
    belowThreshold: number | null;
    detectionToSignal: number | null;
    /** The deciding cycle started, and had its summary (where the decision time goes). */
    cycleStarted?: number | null;
    statsRead?: number | null;
    /** Decided on the v2 working-set thread: when it saw the victim take its signal (null: not seen within its wait; absent: no wait, as on v1). */
    signalTaken?: number | null;
  };
  ranked: CycleRecord["ranked"];
  nodeConditions: string[];
  /** "notifier-thread": decided and signalled by the kernel notifier thread (kernel/fast-evict.ts). */
  decidedBy?: "notifier-thread";
}

/** An eviction being traced: what is known of it so far (epoch ms). */
export interface OpenTrace {
  uid: string;
  pod: string;
  decisionMs: number;
  /** The deciding cycle's start and summary time. */
  cycleMs?: number;
  statsMs?: number;
  gracePeriodSeconds: number;
  message: string;
  signal?: string;
  observed?: string;
  observedValue?: number;
  threshold?: string;
  crossedMs?: number;
  detectionMs?: number;
  trigger?: EvictionTraceRecord["trigger"];
  stopSentMs?: number;
  exitedMs?: number;
  belowMs?: number;
  ranked?: CycleRecord["ranked"];
  conditions?: string[];
  observedLatency: boolean;
  decidedBy?: "notifier-thread";
  signalTakenMs?: number | null;
}

/** A trace opened at the decision: the moment the cycle called the kill with its victim. */
export function openTrace(uid: string, pod: PodLike, decisionMs: number, gracePeriodSeconds: number, message: string): OpenTrace {
  return { uid, pod: podKey(pod), decisionMs, gracePeriodSeconds, message, observedLatency: false };
}

/** The notifier thread's own times (its clock), for a trace it decided. */
export interface NotifierThreadTimes {
  /** When it woke for the crossing (or kernel event) it decided on. */
  wokeAtMs: number;
  decisionMs: number;
  stopSentMs: number;
  /** v2: when the victim took its signal (null: not seen within the thread's wait); v1: absent. */
  signalTakenMs?: number | null;
}

/** A kernel event the tracer heard: when (epoch ms, at the notifier thread's wake-up) and why. */
export interface KernelEvent {
  atMs: number;
  reason: string;
}

/** RFC 3339 with microseconds from fractional epoch milliseconds. */
export function isoMicros(ms: number | undefined): string | null {
  if (ms === undefined) return null;
  const micros = String(Math.floor((ms % 1) * 1000)).padStart(3, "0");
  return new Date(Math.floor(ms)).toISOString().replace("Z", `${micros}Z`);
}
const iso = isoMicros;
const delta = (from: number, to: number | undefined) => (to === undefined ? null : Math.round((to - from) * 1000) / 1000);

/** The record of a traced eviction: crossed at its kernel event, first observation or else decision. */
export function traceRecord(o: OpenTrace): EvictionTraceRecord {
  const crossed = o.crossedMs ?? o.decisionMs;
  return {
    kind: "eviction",
    pod: o.pod,
    uid: o.uid,
    signal: o.signal ?? "unknown",
    observed: o.observed ?? null,
    observedValue: o.observedValue ?? null,
    threshold: o.threshold ?? null,
    gracePeriodSeconds: o.gracePeriodSeconds,
    message: o.message,
    trigger: o.trigger ?? { kind: "periodic" },
    timestamps: {
      thresholdCrossed: iso(crossed)!,
      decision: iso(o.decisionMs)!,
      stopSignalSent: iso(o.stopSentMs),
      containerExited: iso(o.exitedMs),
      memoryBelowThreshold: iso(o.belowMs),
    },
    latencyMs: {
      decision: delta(crossed, o.decisionMs)!,
      stopSignalSent: delta(crossed, o.stopSentMs),
      containerExited: delta(crossed, o.exitedMs),
      belowThreshold: delta(crossed, o.belowMs),
      detectionToSignal: o.detectionMs === undefined ? null : delta(o.detectionMs, o.stopSentMs),
      cycleStarted: delta(crossed, o.cycleMs),
      statsRead: delta(crossed, o.statsMs),
      ...(o.signalTakenMs !== undefined ? { signalTaken: o.signalTakenMs === null ? null : delta(crossed, o.signalTakenMs) } : {}),
    },
    ranked: o.ranked ?? [],
    nodeConditions: o.conditions ?? [],
    ...(o.decidedBy ? { decidedBy: o.decidedBy } : {}),
  };
}

/** The record's one log line, as key=value fields. */
export function traceLogFields(rec: EvictionTraceRecord): Record<string, unknown> {
  return {
    pod: rec.pod,
    signal: rec.signal,
    observed: rec.observed ?? undefined,
    threshold: rec.threshold ?? undefined,
    trigger: rec.trigger.kind === "kernel" ? "kernel" : "periodic",
    decisionMs: rec.latencyMs.decision,
    stopSignalMs: rec.latencyMs.stopSignalSent ?? undefined,
    exitedMs: rec.latencyMs.containerExited ?? undefined,
    belowThresholdMs: rec.latencyMs.belowThreshold ?? "never",
    detectionToSignalMs: rec.latencyMs.detectionToSignal ?? undefined,
    rank: rec.ranked.map((r) => r.pod).join(",") || undefined,
    decidedBy: rec.decidedBy,
  };
}

/**
 * Takes from `events` those that happened before a cycle started at `timeMs`: they belong to it, and the
 * earliest is its trigger. They arrive in the order they were received, not the order they happened: a
 * crossing whose thread first waited for its victim (v2, up to 30 ms) comes after a PSI event that
 * happened later.
 */
export function takeCycleTrigger(events: KernelEvent[], timeMs: number): KernelEvent | undefined {
  let kernel: KernelEvent | undefined;
  for (let k = 0; k < events.length; ) {
    const ev = events[k]!;
    if (ev.atMs > timeMs) {
      k++;
      continue;
    }
    events.splice(k, 1);
    if (!kernel || ev.atMs < kernel.atMs) kernel = ev;
  }
  return kernel;
}

/** Takes from `events` the one nearest the notifier thread's wake-up at `wokeAtMs`, if any. */
export function takeNearestEvent(events: KernelEvent[], wokeAtMs: number): KernelEvent | undefined {
  let k = -1;
  for (let j = 0; j < events.length; j++) if (k < 0 || Math.abs(events[j]!.atMs - wokeAtMs) < Math.abs(events[k]!.atMs - wokeAtMs)) k = j;
  return k >= 0 ? events.splice(k, 1)[0] : undefined;
}

/**
 * The notifier thread decided and signalled this eviction itself: its decision and first signal times
 * replace the main thread's, and its wake-up is the trigger — a kernel one by definition, whatever the
 * cycle matching made of it. The cycle record that adopted it may have matched no kernel event: the
 * event's stamp (now − lag, on the main thread) and the thread's decision stamp are separate clock reads
 * on two threads, and the event can land after the decision. The event nearest the wake-up is the one
 * this eviction answered: taken from `events`.
 */
export function noteNotifierThreadEviction(o: OpenTrace, t: NotifierThreadTimes, events: KernelEvent[]): void {
  o.decidedBy = "notifier-thread";
  o.signalTakenMs = t.signalTakenMs;
  o.decisionMs = t.decisionMs;
  if (o.trigger?.kind !== "kernel") o.trigger = { kind: "kernel", reason: takeNearestEvent(events, t.wokeAtMs)?.reason ?? "notifier thread wake-up" };
  o.detectionMs = Math.min(o.detectionMs ?? t.wokeAtMs, t.wokeAtMs);
  o.crossedMs = Math.min(o.crossedMs ?? t.wokeAtMs, t.wokeAtMs, t.decisionMs);
  o.stopSentMs = t.stopSentMs;
}

/**
 * What the deciding cycle tells of an eviction: its signal, the observation and threshold, when the
 * threshold was crossed (its kernel event, its first observation, the decision — the earliest; already
 * set when the notifier thread's record came first), the trigger, the ranking and the conditions.
 */
export function noteDecidingCycle(
  o: OpenTrace,
  signal: Signal,
  report: CycleReport,
  state: Pick<EvictionState, "firstObservedAt">,
  kernel: KernelEvent | undefined,
  rec: CycleRecord,
): void {
  o.signal = signal;
  const obs = report.observations[signal];
  const t = report.met.find((x) => x.signal === signal);
  if (obs) {
    o.observedValue = obs.available;
    o.observed = formatAmount(obs.available, signalIsCount(signal));
    if (t) o.threshold = formatThresholdAmount(t, obs.capacity);
  }
  const first = t ? state.firstObservedAt.get(t) : undefined;
  o.crossedMs = Math.min(kernel?.atMs ?? Infinity, first ?? Infinity, o.decisionMs, o.crossedMs ?? Infinity);
  o.detectionMs = Math.min(kernel?.atMs ?? report.timeMs, o.detectionMs ?? Infinity);
  o.cycleMs = report.timeMs;
  o.statsMs = report.statsAtMs;
  if (o.trigger?.kind !== "kernel") o.trigger = kernel ? { kind: "kernel", reason: kernel.reason } : { kind: "periodic" };
  o.ranked = rec.ranked;
  o.conditions = rec.nodeConditions;
}

/** What a later cycle means for a decided eviction: memory back below its threshold, still waiting, or given up on after `timeoutMs`. */
export function recovery(o: OpenTrace, report: CycleReport, timeoutMs: number): "below" | "waiting" | "timed out" {
  const obs = report.observations[o.signal as Signal];
  const stillMet = report.met.some((t) => t.signal === o.signal);
  if (o.belowMs === undefined && report.timeMs > o.decisionMs && obs && !stillMet) return "below";
  if (report.timeMs - o.decisionMs > timeoutMs) return "timed out";
  return "waiting";
}
