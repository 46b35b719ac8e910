// The eviction trace: one record per eviction, from the threshold crossing to memory back below it.
// Timestamps come from four places, joined by pod UID:
//   kernel notifier fired        → onKernelEvent (the cycle that starts after it is attributed to it)
//   decision                     → the wrapped killPod, called by the cycle the moment it picks a victim
//   stop signal sent / exited    → onStopContainer: the first of the direct signal to the victim's
//                                  init (a stop granting ≤ 1 s, see kuberuntime/direct-signal.ts) and
//                                  the CRI StopContainer RPC for its container; exited when that RPC
//                                  returns (the container has exited)
//   memory back below threshold  → the first later cycle whose observation no longer meets it
// The record is appended to --eviction-trace (JSON lines) and logged as one line once recovered
// (or after recoveryTimeoutMs). Recording allocates a few small objects per eviction, nothing on the
// hot path is awaited.
import { appendFile } from "node:fs/promises";
import { cycleRecord, type CycleRecord, type CycleReport, type EvictionState, type KillPodFunc } from "../eviction/index.ts";
import { formatAmount, formatThresholdAmount } from "../eviction/message.ts";
import { signalIsCount, type Signal } from "../eviction/signals.ts";
import { kv, log } from "../log.ts";
import { podKey, podUid } from "../pod/pod-like.ts";
import type { Histogram, Registry } from "../server/metrics.ts";
import type { StopContainerEvent } from "./runtime.ts";

export const DETECTION_TO_SIGNAL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

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

interface Open {
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

/** The notifier thread's own times (its clock), for onNotifierThreadEviction. */
export interface NotifierThreadTimes {
  /** When it woke for the crossing (or kernel event) it decided on. */
  wokeAtMs: number;
  decisionMs: number;
  stopSentMs: number;
  /** v2: when the victim took its signal (null: not seen within the thread's wait); v1: absent. */
  signalTakenMs?: number | null;
}

export interface EvictionTracer {
  /**
   * A kernel notifier fired (call before manager.trigger). `lagMs`: how long before now the notifier
   * thread woke for it (the hop to the main thread), so the crossing is stamped at the wake-up.
   */
  onKernelEvent(reason: string, lagMs?: number): void;
  /** Wraps the kill function the eviction manager calls with its victim. */
  wrapKillPod(kill: KillPodFunc): KillPodFunc;
  onStopContainer(e: StopContainerEvent): void;
  /**
   * The kernel notifier thread decided and signalled this eviction itself (call right after the
   * manager adopted it): its decision and first signal times replace the main thread's, and its
   * wake-up is the trigger — a kernel one by definition, whatever the cycle matching made of it.
   */
  onNotifierThreadEviction(uid: string, t: NotifierThreadTimes): void;
  /** The manager's onCycle hook. */
  onCycle(report: CycleReport, state: Pick<EvictionState, "firstObservedAt">): void;
  /** Records written so far (tests, /debug). */
  records(): readonly EvictionTraceRecord[];
  /** Finishes open records (memoryBelowThreshold null) and waits for pending writes. */
  close(): Promise<void>;
}

export interface EvictionTracerOpts {
  /** --eviction-trace file; without it records are only logged. */
  file?: string;
  metrics?: Registry;
  /** Epoch milliseconds (fractional allowed); the eviction manager's clock. */
  now: () => number;
  /** A record not recovered by then is written with memoryBelowThreshold null (default 60 s). */
  recoveryTimeoutMs?: number;
  /** Test hook instead of appending to `file`. */
  write?: (line: string) => void | Promise<void>;
  /** How many records records() keeps (default 100). */
  keep?: number;
  /** Threshold signals whose latency series start at zero (rate() then sees the first eviction). */
  signals?: readonly string[];
}

/** RFC 3339 with microseconds from fractional epoch milliseconds. */
export function isoMicros(ms: number | undefined): string | null {
  if (ms === undefined) return null;
  const micros = String(Math.floor((ms % 1) * 1000)).padStart(3, "0");
  return new Date(Math.floor(ms)).toISOString().replace("Z", `${micros}Z`);
}
const iso = isoMicros;
const delta = (from: number, to: number | undefined) => (to === undefined ? null : Math.round((to - from) * 1000) / 1000);

export function createEvictionTracer(opts: EvictionTracerOpts): EvictionTracer {
  const recoveryTimeoutMs = opts.recoveryTimeoutMs ?? 60_000;
  const keep = opts.keep ?? 100;
  const open = new Map<string, Open>();
  const done: EvictionTraceRecord[] = [];
  const kernelEvents: { atMs: number; reason: string }[] = [];
  let writes: Promise<unknown> = Promise.resolve();
  let histogram: Histogram | undefined;
  if (opts.metrics) {
    histogram = opts.metrics.histogram({
      name: "bunlet_eviction_detection_to_signal_seconds",
      help: "Time from detecting an eviction threshold (kernel notification, or the start of the eviction cycle that observed it) to sending the victim's stop signal, by eviction signal",
      labelNames: ["eviction_signal"],
      buckets: DETECTION_TO_SIGNAL_BUCKETS,
    });
    for (const eviction_signal of opts.signals ?? []) histogram.seed({ eviction_signal });
  }
  const write = opts.write ?? (opts.file ? (line: string) => appendFile(opts.file!, line) : undefined);

  function observeLatency(o: Open) {
    if (o.observedLatency || o.signal === undefined || o.stopSentMs === undefined || o.detectionMs === undefined) return;
    o.observedLatency = true;
    histogram?.observe(Math.max(0, o.stopSentMs - o.detectionMs) / 1000, { eviction_signal: o.signal });
  }

  /** A record is complete once memory is back below the threshold and the container has exited. */
  function maybeFinish(o: Open) {
    if (o.signal !== undefined && o.belowMs !== undefined && o.exitedMs !== undefined) finish(o);
  }

  function finish(o: Open) {
    open.delete(o.uid);
    const crossed = o.crossedMs ?? o.decisionMs;
    const rec: EvictionTraceRecord = {
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
    done.push(rec);
    if (done.length > keep) done.shift();
    log.info(
      `eviction trace ${kv({
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
      })}`,
    );
    if (write) {
      const line = `${JSON.stringify(rec)}\n`;
      writes = writes
        .then(() => write(line))
        .catch((e: unknown) => log.warn(`eviction trace: append failed ${kv({ file: opts.file, error: (e as Error).message })}`));
    }
  }

  return {
    onKernelEvent(reason, lagMs = 0) {
      if (kernelEvents.length >= 64) kernelEvents.shift();
      kernelEvents.push({ atMs: opts.now() - Math.max(0, lagMs), reason });
    },
    wrapKillPod(kill) {
      return (pod, grace, status) => {
        const uid = podUid(pod);
        // Decision time first: nothing before the kill call.
        const decisionMs = opts.now();
        open.set(uid, { uid, pod: podKey(pod), decisionMs, gracePeriodSeconds: grace, message: status.message, observedLatency: false });
        return kill(pod, grace, status).finally(() => {
          const o = open.get(uid);
          if (!o) return;
          o.exitedMs ??= opts.now();
          maybeFinish(o);
        });
      };
    },
    onNotifierThreadEviction(uid, { wokeAtMs, decisionMs, stopSentMs, signalTakenMs }) {
      const o = open.get(uid);
      if (!o) return;
      o.decidedBy = "notifier-thread";
      o.signalTakenMs = signalTakenMs;
      o.decisionMs = decisionMs;
      // The thread's wake-up is this eviction's trigger. The cycle record that adopted it may have matched
      // no kernel event: the event's stamp (now − lag, on the main thread) and the thread's decision stamp
      // are separate clock reads on two threads, and the event can land after the decision (a likely
      // cause of one fast-ramp CI run that read "periodic"; not proven). The event nearest the wake-up is
      // the one this eviction answered: taken from the queue.
      if (o.trigger?.kind !== "kernel") {
        let k = -1;
        for (let j = 0; j < kernelEvents.length; j++)
          if (k < 0 || Math.abs(kernelEvents[j]!.atMs - wokeAtMs) < Math.abs(kernelEvents[k]!.atMs - wokeAtMs)) k = j;
        const ev = k >= 0 ? kernelEvents.splice(k, 1)[0] : undefined;
        o.trigger = { kind: "kernel", reason: ev?.reason ?? "notifier thread wake-up" };
      }
      o.detectionMs = Math.min(o.detectionMs ?? wokeAtMs, wokeAtMs);
      o.crossedMs = Math.min(o.crossedMs ?? wokeAtMs, wokeAtMs, decisionMs);
      o.stopSentMs = stopSentMs;
      observeLatency(o);
    },
    onStopContainer(e) {
      if (!e.podUid) return;
      const o = open.get(e.podUid);
      if (!o) return;
      if (e.phase === "sent" && o.stopSentMs === undefined) {
        o.stopSentMs = e.atMs;
        observeLatency(o);
      }
      if (e.phase === "done" && !e.error) {
        o.exitedMs = Math.max(o.exitedMs ?? 0, e.atMs);
        maybeFinish(o);
      }
    },
    onCycle(report, state) {
      // Kernel events that happened before this cycle started belong to it; the earliest is its trigger.
      // They arrive in the order they were received, not the order they happened: a crossing whose thread
      // first waited for its victim (v2, up to 30 ms) comes after a PSI event that happened later.
      let kernel: { atMs: number; reason: string } | undefined;
      for (let k = 0; k < kernelEvents.length; ) {
        const ev = kernelEvents[k]!;
        if (ev.atMs > report.timeMs) {
          k++;
          continue;
        }
        kernelEvents.splice(k, 1);
        if (!kernel || ev.atMs < kernel.atMs) kernel = ev;
      }
      if (report.error) return;
      let rec: CycleRecord | undefined;
      for (const e of report.evicted ?? []) {
        const o = open.get(podUid(e.pod));
        if (!o || o.signal !== undefined) continue;
        rec ??= cycleRecord(report, state);
        const signal = e.signal as Signal;
        o.signal = e.signal;
        const obs = report.observations[signal];
        const t = report.met.find((x) => x.signal === signal);
        if (obs) {
          o.observedValue = obs.available;
          o.observed = formatAmount(obs.available, signalIsCount(signal));
          if (t) o.threshold = formatThresholdAmount(t, obs.capacity);
        }
        const first = t ? state.firstObservedAt.get(t) : undefined;
        // Already set when the notifier thread's record came first (its wake-up: the earlier, kept).
        o.crossedMs = Math.min(kernel?.atMs ?? Infinity, first ?? Infinity, o.decisionMs, o.crossedMs ?? Infinity);
        o.detectionMs = Math.min(kernel?.atMs ?? report.timeMs, o.detectionMs ?? Infinity);
        o.cycleMs = report.timeMs;
        o.statsMs = report.statsAtMs;
        if (o.trigger?.kind !== "kernel") o.trigger = kernel ? { kind: "kernel", reason: kernel.reason } : { kind: "periodic" };
        o.ranked = rec.ranked;
        o.conditions = rec.nodeConditions;
        observeLatency(o);
      }
      for (const o of [...open.values()]) {
        if (o.signal === undefined) continue;
        const obs = report.observations[o.signal as Signal];
        const stillMet = report.met.some((t) => t.signal === o.signal);
        if (o.belowMs === undefined && report.timeMs > o.decisionMs && obs && !stillMet) {
          o.belowMs = report.timeMs;
          maybeFinish(o);
        } else if (report.timeMs - o.decisionMs > recoveryTimeoutMs) {
          finish(o);
        }
      }
    },
    records: () => done,
    async close() {
      for (const o of [...open.values()]) finish(o);
      await writes;
    },
  };
}
