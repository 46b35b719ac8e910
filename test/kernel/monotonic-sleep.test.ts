import { afterEach, describe, expect, test } from "bun:test";
import { Eventfd } from "../../src/kernel/eventfd.ts";
import { MonotonicSleeper } from "../../src/kernel/monotonic-sleep.ts";

// That a wall clock stepped back does not lengthen the sleep needs a clock to step: the v2 guest's
// (test/integration/v2/working-set-fast.test.ts). Here: the wake-up and its reset.
describe("MonotonicSleeper", () => {
  const open: { close(): void }[] = [];
  afterEach(() => {
    for (const o of open.splice(0)) o.close();
  });

  test("a signal on the wake fd ends the sleep at once, and the next sleep sleeps again", () => {
    const wake = new Eventfd();
    const sleeper = new MonotonicSleeper(wake.fd);
    open.push(sleeper, wake);
    wake.signal();
    wake.signal();
    // Woken, not timed out (a missed wake-up would block this thread the whole 30 s: the test's timeout).
    expect(sleeper.sleep(30_000)).toBe(true);
    // Both signals were taken with it: the next sleep times out.
    expect(sleeper.sleep(1)).toBe(false);
    expect(wake.drain()).toBe(0);
  });

  test("without a wake fd it sleeps out its timeout; sub-ms sleeps round up to 1 ms", () => {
    const sleeper = new MonotonicSleeper();
    open.push(sleeper);
    const t0 = performance.now();
    expect(sleeper.sleep(0.2)).toBe(false);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(0.9);
  });
});
