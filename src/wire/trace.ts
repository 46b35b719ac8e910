// The eviction trace: one record per eviction, from the threshold crossing to memory back below it.
// Timestamps come from four places, joined by pod UID:
//   kernel notifier fired        → onKernelEvent (the cycle that starts after it is attributed to it)
//   decision                     → the wrapped killPod, called by the cycle the moment it picks a victim
//   stop signal sent / exited    → onStopContainer: the first of the direct signal to the victim's
//                                  init (a stop granting ≤ 1 s, see kuberuntime/direct-signal.ts) and
//                                  the CRI StopContainer RPC for its container; exited when that RPC
//                                  returns (the container has exited)
//   memory back below threshold  → the first later cycle whose observation no longer meets it
// The record (eviction/trace-record.ts) is appended to --eviction-trace (JSON lines) and logged as one
// line once recovered (or after recoveryTimeoutMs). Recording allocates a few small objects per
// eviction, nothing on the hot path is awaited.
import { appendFile } from "node:fs/promises";
import { cycleRecord, type CycleRecord, type CycleReport, type EvictionState, type KillPodFunc } from "../eviction/index.ts";
import type { Signal } from "../eviction/signals.ts";
import {
  type EvictionTraceRecord,
  type KernelEvent,
  type NotifierThreadTimes,
  noteDecidingCycle,
  noteNotifierThreadEviction,
  type OpenTrace,
  openTrace,
  recovery,
  takeCycleTrigger,
  traceLogFields,
  traceRecord,
} from "../eviction/trace-record.ts";
import { kv, log } from "../log.ts";
import { podUid } from "../pod/pod-like.ts";
import type { Histogram, Registry } from "../server/metrics.ts";
import type { StopContainerEvent } from "./runtime.ts";

export const DETECTION_TO_SIGNAL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

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

/** The tracer: open traces by pod UID, finished records, and the kernel events not yet matched to a cycle. */
export function createEvictionTracer(opts: EvictionTracerOpts): EvictionTracer {
  const recoveryTimeoutMs = opts.recoveryTimeoutMs ?? 60_000;
  const keep = opts.keep ?? 100;
  const open = new Map<string, OpenTrace>();
  const done: EvictionTraceRecord[] = [];
  const kernelEvents: KernelEvent[] = [];
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

  function observeLatency(o: OpenTrace) {
    if (o.observedLatency || o.signal === undefined || o.stopSentMs === undefined || o.detectionMs === undefined) return;
    o.observedLatency = true;
    histogram?.observe(Math.max(0, o.stopSentMs - o.detectionMs) / 1000, { eviction_signal: o.signal });
  }

  /** A record is complete once memory is back below the threshold and the container has exited. */
  function maybeFinish(o: OpenTrace) {
    if (o.signal !== undefined && o.belowMs !== undefined && o.exitedMs !== undefined) finish(o);
  }

  function finish(o: OpenTrace) {
    open.delete(o.uid);
    const rec = traceRecord(o);
    done.push(rec);
    if (done.length > keep) done.shift();
    log.info(`eviction trace ${kv(traceLogFields(rec))}`);
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
        open.set(uid, openTrace(uid, pod, decisionMs, grace, status.message));
        return kill(pod, grace, status).finally(() => {
          const o = open.get(uid);
          if (!o) return;
          o.exitedMs ??= opts.now();
          maybeFinish(o);
        });
      };
    },
    onNotifierThreadEviction(uid, times) {
      const o = open.get(uid);
      if (!o) return;
      noteNotifierThreadEviction(o, times, kernelEvents);
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
      const kernel = takeCycleTrigger(kernelEvents, report.timeMs);
      if (report.error) return;
      let rec: CycleRecord | undefined;
      for (const e of report.evicted ?? []) {
        const o = open.get(podUid(e.pod));
        if (!o || o.signal !== undefined) continue;
        rec ??= cycleRecord(report, state);
        noteDecidingCycle(o, e.signal as Signal, report, state, kernel, rec);
        observeLatency(o);
      }
      for (const o of [...open.values()]) {
        if (o.signal === undefined) continue;
        const r = recovery(o, report, recoveryTimeoutMs);
        if (r === "below") {
          o.belowMs = report.timeMs;
          maybeFinish(o);
        } else if (r === "timed out") {
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
