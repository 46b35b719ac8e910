// A manual clock for code whose timers start promise chains (pod workers, PLEG, probes, sources,
// image GC): advance() is async and lets those chains settle before and after each timer, so a test
// sees the state the real event loop would reach. Same timer order as src/manual-clock.ts, which it
// drives.
import type { Clock } from "../../src/clock.ts";
import { createManualClock } from "../../src/manual-clock.ts";

export interface SettlingClock extends Clock {
  /** Moves time forward, firing due timers in order and letting their promise chains settle. */
  advance(ms: number): Promise<void>;
  pending(): number;
}

export function createSettlingClock(startMs = Date.UTC(2026, 0, 1)): SettlingClock {
  const manual = createManualClock(startMs);
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
    await new Promise((r) => setImmediate(r));
  };
  return {
    now: manual.now,
    setTimeout: manual.setTimeout,
    clearTimeout: manual.clearTimeout,
    async advance(ms) {
      const end = manual.now() + ms;
      await settle();
      while (manual.fireNext(end)) await settle();
      manual.set(end);
      await settle();
    },
    pending: manual.pendingTimers,
  };
}
