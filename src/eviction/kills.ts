// In-flight evictions: kills run in the background (never awaited by the cycle), are recorded so a
// pod is not killed twice at the same urgency, and expire after grace + cleanup timeout.
import { kv, log as defaultLog } from "../log.ts";
import { podKey, podUid, type PodLike } from "../pod/pod-like.ts";
import { EVICTED_REASON } from "./message.ts";
import { IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, POD_CLEANUP_TIMEOUT_MS, type EvictionState, type InFlightKill } from "./state.ts";
import type { EvictionDeps, KillStatus } from "./types.ts";

/** Starts a kill without awaiting it and records it as in flight. */
export function startKill(deps: EvictionDeps, state: EvictionState, pod: PodLike, grace: number, status: KillStatus, signal: string): void {
  const logger = deps.logger ?? defaultLog;
  const uid = podUid(pod);
  const entry: InFlightKill = { pod, uid, gracePeriodSeconds: grace, startedAtMs: deps.clock.now(), settled: false, signal };
  state.inFlight.set(uid, entry);
  deps.recorder?.({
    object: { kind: "Pod", name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
    type: "Warning",
    reason: EVICTED_REASON,
    message: status.message,
    annotations: status.annotations,
  });
  let p: Promise<void>;
  try {
    p = deps.killPod(pod, grace, status);
  } catch (e) {
    p = Promise.reject(e);
  }
  p.then(
    () => logger.info(`pod is evicted successfully ${kv({ pod: podKey(pod), grace })}`),
    (e: unknown) => logger.error(`pod failed to evict ${kv({ pod: podKey(pod), grace, error: (e as Error)?.message ?? String(e) })}`),
  ).finally(() => {
    entry.settled = true;
  });
}

/** How long an eviction may take before the pod counts as a candidate again (grace + cleanup). */
export const killExpiryMs = (k: InFlightKill): number => Math.max(0, k.gracePeriodSeconds) * 1000 + POD_CLEANUP_TIMEOUT_MS;

/**
 * Drops in-flight kills whose pod is gone, and finished kills whose pod outlived grace + 30 s
 * (a failed kill: the pod may be tried again, as upstream retries it after its cleanup wait).
 * Returns the ones still pending.
 */
export function pendingKills(deps: EvictionDeps, state: EvictionState, active: readonly PodLike[]): InFlightKill[] {
  const activeUids = new Set(active.map(podUid));
  const now = deps.clock.now();
  for (const [uid, k] of state.inFlight) {
    const cleaned = deps.podCleanedUp ? deps.podCleanedUp(k.pod) : !activeUids.has(uid);
    if (k.settled && (cleaned || now - k.startedAtMs >= killExpiryMs(k))) state.inFlight.delete(uid);
  }
  return [...state.inFlight.values()];
}

/**
 * The in-flight kills this cycle waits for instead of evicting another pod: any unexpired one for a soft
 * threshold; for a hard one, those already at the immediate grace (a softer one is escalated instead).
 */
export function blockingKills(pending: readonly InFlightKill[], hard: boolean, now: number): InFlightKill[] {
  return pending.filter((k) => {
    const urgentEnough = !hard || k.gracePeriodSeconds <= IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS;
    const notExpired = now - k.startedAtMs < killExpiryMs(k);
    return urgentEnough && notExpired;
  });
}
