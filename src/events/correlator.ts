// The event correlator of client-go tools/record (events_cache.go), with its defaults:
//   aggregate: more than 10 distinct messages for one (source, object, type, reason) within 10 min
//              → one event "(combined from similar events): <latest message>", counted from then on
//   observe:   an event seen before (same key) → count+1, first timestamp and name kept, sent as a
//              PATCH of {count, lastTimestamp, message}
//   spam:      a token bucket per (source, object, type) — burst 25, then one per 5 min — drops the rest
// The caches are LRUs of 4096 entries. Pure: time comes from `now`.
import { metav1Time } from "../kube/types.ts";
import type { CoreEvent, EventPatch } from "./types.ts";

export interface CorrelatorOptions {
  now: () => number;
  spamBurst?: number;
  spamQps?: number;
  maxEvents?: number;
  maxIntervalMs?: number;
  lruSize?: number;
  /** Event name suffix for a time (default nanoHex; the recorder passes its monotonic one). */
  nameSuffix?: (ms: number) => string;
}

export interface CorrelateResult {
  event?: CoreEvent;
  /** Strategic merge patch for an event already written (count > 1). */
  patch?: EventPatch;
  skip: boolean;
}

export interface EventCorrelator {
  correlate(e: CoreEvent): CorrelateResult;
  /** The server's copy after a write (name, resourceVersion), as upstream UpdateState. */
  updateState(e: CoreEvent): void;
}

export const AGGREGATE_PREFIX = "(combined from similar events): ";

/** A Map-backed LRU (golang-lru's Add/Get semantics). */
export function lru<V>(size: number) {
  const m = new Map<string, V>();
  return {
    get(k: string): V | undefined {
      const v = m.get(k);
      if (v !== undefined) {
        m.delete(k);
        m.set(k, v);
      }
      return v;
    },
    add(k: string, v: V): void {
      m.delete(k);
      m.set(k, v);
      if (m.size > size) m.delete(m.keys().next().value!);
    },
    get size() {
      return m.size;
    },
  };
}

const join = (parts: (string | undefined)[]) => parts.map((p) => p ?? "").join("");

/** getEventKey: everything that makes two events "the same". */
export function eventKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return join([e.source.component, e.source.host, o.kind, o.namespace, o.name, o.fieldPath, o.uid, o.apiVersion, e.type, e.reason, e.message]);
}

/** getSpamKey: one rate limit per source and object (and event type). */
export function spamKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return join([e.source.component, e.source.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion, e.type]);
}

/** EventAggregatorByReasonFunc: aggregate by reason, the message is what differs. */
export function aggregateKeys(e: CoreEvent): { aggregateKey: string; localKey: string } {
  const o = e.involvedObject;
  return {
    aggregateKey: join([
      e.source.component,
      e.source.host,
      o.kind,
      o.namespace,
      o.name,
      o.uid,
      o.apiVersion,
      e.type,
      e.reason,
      e.reportingComponent,
      e.reportingInstance,
    ]),
    localKey: e.message,
  };
}

/** A passive token bucket (flowcontrol.NewTokenBucketPassiveRateLimiter): TryAccept only. */
function tokenBucket(qps: number, burst: number, startMs: number) {
  let tokens = burst;
  let last = startMs;
  return (nowMs: number): boolean => {
    tokens = Math.min(burst, tokens + ((nowMs - last) / 1000) * qps);
    last = nowMs;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

export function createEventCorrelator(o: CorrelatorOptions): EventCorrelator {
  const burst = o.spamBurst ?? 25;
  const qps = o.spamQps ?? 1 / 300;
  const maxEvents = o.maxEvents ?? 10;
  const maxIntervalMs = o.maxIntervalMs ?? 600_000;
  const size = o.lruSize ?? 4096;
  const suffix = o.nameSuffix ?? monotonicNanoHex();
  const aggregates = lru<{ localKeys: Set<string>; lastMs: number }>(size);
  const observations = lru<{ count: number; firstTimestamp: string; name: string; resourceVersion?: string }>(size);
  const spam = lru<(nowMs: number) => boolean>(size);

  function aggregate(e: CoreEvent): { event: CoreEvent; key: string } {
    const nowMs = o.now();
    const { aggregateKey, localKey } = aggregateKeys(e);
    let rec = aggregates.get(aggregateKey);
    if (!rec || nowMs - rec.lastMs > maxIntervalMs) rec = { localKeys: new Set(), lastMs: 0 };
    rec.localKeys.add(localKey);
    rec.lastMs = nowMs;
    aggregates.add(aggregateKey, rec);
    if (rec.localKeys.size < maxEvents) return { event: e, key: eventKey(e) };
    // Keep the set at its maximum (upstream PopAny).
    rec.localKeys.delete(rec.localKeys.values().next().value!);
    const t = metav1Time(nowMs);
    const combined: CoreEvent = {
      ...e,
      metadata: { name: `${e.involvedObject.name}.${suffix(nowMs)}`, namespace: e.metadata.namespace },
      count: 1,
      firstTimestamp: t,
      lastTimestamp: t,
      message: AGGREGATE_PREFIX + e.message,
    };
    return { event: combined, key: aggregateKey };
  }

  function observe(e: CoreEvent, key: string): { event: CoreEvent; patch?: EventPatch } {
    const last = observations.get(key);
    let event = e;
    let patch: EventPatch | undefined;
    if (last && last.count > 0) {
      event = {
        ...e,
        metadata: { ...e.metadata, name: last.name, resourceVersion: last.resourceVersion },
        firstTimestamp: last.firstTimestamp,
        count: last.count + 1,
      };
      patch = { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message };
    }
    observations.add(key, {
      count: event.count,
      firstTimestamp: event.firstTimestamp,
      name: event.metadata.name,
      resourceVersion: event.metadata.resourceVersion,
    });
    return { event, patch };
  }

  function filtered(e: CoreEvent): boolean {
    const k = spamKey(e);
    let accept = spam.get(k);
    if (!accept) accept = tokenBucket(qps, burst, o.now());
    spam.add(k, accept);
    return !accept(o.now());
  }

  return {
    correlate(e) {
      const agg = aggregate(e);
      const observed = observe(agg.event, agg.key);
      if (filtered(observed.event)) return { skip: true };
      return { event: observed.event, patch: observed.patch, skip: false };
    },
    updateState(e) {
      observations.add(eventKey(e), { count: e.count, firstTimestamp: e.firstTimestamp, name: e.metadata.name, resourceVersion: e.metadata.resourceVersion });
    },
  };
}

/**
 * fmt.Sprintf("%x", t.UnixNano()): event names are "<object>.<hex nanoseconds>". Our clock has at
 * best microseconds, so two events of one object in the same tick get successive nanoseconds
 * instead of one name (which the API server would refuse as AlreadyExists).
 */
export function monotonicNanoHex(): (ms: number) => string {
  let last = 0n;
  return (ms) => {
    let ns = BigInt(Math.floor(ms * 1000)) * 1000n;
    if (ns <= last) ns = last + 1n;
    last = ns;
    return ns.toString(16);
  };
}
