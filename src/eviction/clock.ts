// Injected time: the real clock, and a fake one that tests and `eviction simulate` advance by hand.
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface FakeClock extends Clock {
  set(ms: number): void;
  /** Moves time forward, firing due timers in order (each may schedule more). */
  advance(ms: number): void;
  pendingTimers(): number;
}

export function createFakeClock(startMs = 0): FakeClock {
  let now = startMs;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const fireDue = (until: number) => {
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of timers) if (e[1].at <= until && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      timers.delete(next[0]);
      now = Math.max(now, next[1].at);
      next[1].fn();
    }
    now = Math.max(now, until);
  };
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = ++seq;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return id;
    },
    clearTimeout(h) {
      timers.delete(h as number);
    },
    set(ms) {
      now = ms;
    },
    advance(ms) {
      fireDue(now + ms);
    },
    pendingTimers: () => timers.size,
  };
}
