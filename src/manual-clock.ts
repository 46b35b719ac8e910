// A clock whose time moves only when told to, synchronously: `bunlet eviction simulate` and
// `explain` step the real eviction manager through a scenario with it, and unit tests use it where
// nothing awaits between timers. Tests whose timers start promise chains (the pod lifecycle) use
// test/support/settling-clock.ts, built on this one, which lets those chains settle between timers.
import type { Clock } from "./clock.ts";

export interface ManualClock extends Clock {
  set(ms: number): void;
  /** Moves time forward, firing due timers in order (each may schedule more). */
  advance(ms: number): void;
  /** Fires the earliest timer due at or before `untilMs`, moving time to it; false when none is due. */
  fireNext(untilMs: number): boolean;
  pendingTimers(): number;
}

export function createManualClock(startMs = 0): ManualClock {
  let now = startMs;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const fireNext = (untilMs: number): boolean => {
    // Earliest first; equal times in scheduling order (ids increase, the Map keeps insertion order).
    let next: [number, { at: number; fn: () => void }] | undefined;
    for (const e of timers) if (e[1].at <= untilMs && (!next || e[1].at < next[1].at)) next = e;
    if (!next) return false;
    timers.delete(next[0]);
    now = Math.max(now, next[1].at);
    next[1].fn();
    return true;
  };
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = ++seq;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return { id };
    },
    clearTimeout(h) {
      timers.delete(h.id as number);
    },
    set(ms) {
      now = ms;
    },
    advance(ms) {
      const until = now + ms;
      while (fireNext(until));
      now = Math.max(now, until);
    },
    fireNext,
    pendingTimers: () => timers.size,
  };
}
