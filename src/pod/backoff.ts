// Container restart back-off, as upstream client-go flowcontrol.Backoff used by kuberuntime with
// initial 10 s and max 5 min (kubelet.go: backOffPeriod, MaxContainerBackOff): each restart doubles
// the delay; an entry untouched for 2 × max (10 min) has "expired" and starts over at 10 s, which is
// how a container that ran fine for 10 minutes gets a fresh back-off.
import type { BackOff } from "./runtime.ts";

export const INITIAL_BACKOFF_MS = 10_000;
export const MAX_BACKOFF_MS = 300_000;

export interface ContainerBackOff extends BackOff {
  delayMs(key: string): number;
  /** Drops expired entries (upstream GC, run from housekeeping). */
  gc(nowMs: number): void;
  reset(key: string): void;
}

export function createBackOff(initialMs = INITIAL_BACKOFF_MS, maxMs = MAX_BACKOFF_MS): ContainerBackOff {
  const entries = new Map<string, { delayMs: number; lastUpdateMs: number }>();
  const expired = (eventMs: number, lastUpdateMs: number) => eventMs - lastUpdateMs > 2 * maxMs;

  return {
    next(key, nowMs) {
      const e = entries.get(key);
      if (!e || expired(nowMs, e.lastUpdateMs)) {
        entries.set(key, { delayMs: initialMs, lastUpdateMs: nowMs });
        return;
      }
      e.delayMs = Math.min(e.delayMs * 2, maxMs);
      e.lastUpdateMs = nowMs;
    },
    isInBackOff(key, nowMs, sinceMs) {
      const e = entries.get(key);
      if (!e || expired(nowMs, e.lastUpdateMs)) return false;
      return nowMs - (sinceMs ?? e.lastUpdateMs) < e.delayMs;
    },
    delayMs: (key) => entries.get(key)?.delayMs ?? 0,
    gc(nowMs) {
      for (const [k, e] of entries) if (expired(nowMs, e.lastUpdateMs)) entries.delete(k);
    },
    reset: (key) => void entries.delete(key),
  };
}

/** Go's time.Duration String for whole seconds/minutes as upstream prints back-off ("10s", "2m40s", "5m0s"). */
export function formatBackOff(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`;
}
