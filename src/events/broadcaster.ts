// The kubelet's event pipeline (client-go tools/record: EventBroadcaster + recorder + recordToSink):
//   recorder.event() → one log line ("Event occurred", as StartStructuredLogging) → bounded queue
//   (1000, the oldest dropped when full) → one writer: correlate (correlator.ts) → POST, or PATCH the
//   count of an event seen before (sink-writer.ts) → an unreachable API server is retried 12 times,
//   10 s apart (the first wait randomised), while new events queue behind.
// recorder.event() never waits: the sync loop, the eviction manager and the node status loop record
// and move on. Without a sink (standalone mode) events are logged only.
import type { Clock } from "../clock.ts";
import { metav1Time } from "../kube/types.ts";
import { kv, log } from "../log.ts";
import { createEventCorrelator, monotonicNanoHex } from "./correlator.ts";
import { recordToSink, refText } from "./sink-writer.ts";
import type { CoreEvent, EventRecorder, EventSink } from "./types.ts";

export type { EventSink } from "./types.ts";

export interface EventBroadcasterOptions {
  clock: Clock;
  /** Source component ("kubelet") and host (the node name). */
  component: string;
  host: string;
  /** Queue events until a sink starts (API-server mode); false: log only. */
  queueForSink: boolean;
  maxQueued?: number;
  retrySleepMs?: number;
  maxTries?: number;
  rand?: () => number;
}

export interface EventBroadcaster {
  recorder: EventRecorder;
  startRecordingToSink(sink: EventSink): void;
  stop(): void;
  /** Events dropped because the queue was full. */
  dropped(): number;
  /** Resolves once the queue is empty and nothing is being written (tests). */
  whenIdle(): Promise<void>;
}

export const MAX_QUEUED_EVENTS = 1000;
export const MAX_TRIES_PER_EVENT = 12;
export const RETRY_SLEEP_MS = 10_000;

export function createEventBroadcaster(o: EventBroadcasterOptions): EventBroadcaster {
  const maxQueued = o.maxQueued ?? MAX_QUEUED_EVENTS;
  const sleepMs = o.retrySleepMs ?? RETRY_SLEEP_MS;
  const maxTries = o.maxTries ?? MAX_TRIES_PER_EVENT;
  const rand = o.rand ?? Math.random;
  const suffix = monotonicNanoHex();
  const correlator = createEventCorrelator({ now: () => o.clock.now(), nameSuffix: suffix });
  const queue: CoreEvent[] = [];
  let sink: EventSink | undefined;
  let draining: Promise<void> | undefined;
  let stopped = false;
  let dropped = 0;
  let wake: (() => void) | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((r) => {
      const h = o.clock.setTimeout(() => ((wake = undefined), r()), ms);
      wake = () => (o.clock.clearTimeout(h), (wake = undefined), r());
    });

  /**
   * The writer starts on a later turn of the event loop, never inside record(): a kill on the
   * eviction fast path records "Killing" right after its StopContainer and must not pay for the
   * correlation and the request (log lines are deferred the same way, see src/log.ts).
   */
  let scheduled = false;
  function scheduleDrain(): void {
    if (scheduled || draining || !sink || stopped) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      drain();
    });
  }

  function drain(): void {
    if (draining || !sink || stopped) return;
    draining = (async () => {
      const deps = { sink: sink!, correlator, sleep, stopped: () => stopped, maxTries, sleepMs, rand };
      while (queue.length && !stopped)
        await recordToSink(queue.shift()!, deps).catch((e) => log.error(`event not written ${kv({ error: (e as Error).message })}`));
    })().finally(() => {
      draining = undefined;
      if (queue.length && !stopped) scheduleDrain();
    });
  }

  function makeEvent(
    ref: CoreEvent["involvedObject"],
    type: CoreEvent["type"],
    reason: string,
    message: string,
    annotations?: Record<string, string>,
  ): CoreEvent {
    const nowMs = o.clock.now();
    const t = metav1Time(nowMs);
    return {
      metadata: { name: `${ref.name}.${suffix(nowMs)}`, namespace: ref.namespace || "default", ...(annotations ? { annotations } : {}) },
      involvedObject: ref,
      reason,
      message,
      source: { component: o.component, host: o.host },
      firstTimestamp: t,
      lastTimestamp: t,
      count: 1,
      type,
      eventTime: null,
      reportingComponent: o.component,
      reportingInstance: o.host,
    };
  }

  return {
    recorder: {
      event(ref, type, reason, message, annotations) {
        const ev = makeEvent(ref, type, reason, message, annotations);
        log.info(`Event occurred ${kv({ object: refText(ev), fieldPath: ref.fieldPath, kind: ref.kind, apiVersion: ref.apiVersion, type, reason, message })}`);
        if (stopped || (!sink && !o.queueForSink)) return;
        queue.push(ev);
        if (queue.length > maxQueued) {
          queue.shift();
          if (dropped++ % 100 === 0) log.warn(`Event queue full; dropping the oldest events ${kv({ maxQueued, dropped })}`);
        }
        scheduleDrain();
      },
    },
    startRecordingToSink(s) {
      sink = s;
      scheduleDrain();
    },
    stop() {
      stopped = true;
      queue.length = 0;
      wake?.();
    },
    dropped: () => dropped,
    async whenIdle() {
      while (draining || scheduled) await (draining ?? new Promise((r) => setImmediate(r)));
    },
  };
}
