// A manual clock: timers fire only when the test advances time.
import type { Clock, TimerHandle } from "../../src/pod/clock.ts";

export interface FakeClock extends Clock {
  /** Moves time forward, firing due timers in order and letting their promise chains settle. */
  advance(ms: number): Promise<void>;
  pending(): number;
}

export function createFakeClock(startMs = Date.UTC(2026, 0, 1)): FakeClock {
  let now = startMs;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
    await new Promise((r) => setImmediate(r));
  };
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = ++seq;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return { id };
    },
    clearTimeout(h: TimerHandle) {
      timers.delete(h.id as number);
    },
    async advance(ms) {
      const end = now + ms;
      await settle();
      for (;;) {
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const e of timers) if (e[1].at <= end && (!next || e[1].at < next[1].at || (e[1].at === next[1].at && e[0] < next[0]))) next = e;
        if (!next) break;
        timers.delete(next[0]);
        now = Math.max(now, next[1].at);
        next[1].fn();
        await settle();
      }
      now = end;
      await settle();
    },
    pending: () => timers.size,
  };
}

/** Polls `cond` until true (bounded); for waits on real I/O such as fs.watch events. */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
