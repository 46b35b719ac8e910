import { expect, test } from "bun:test";
import { createManualClock } from "../../src/manual-clock.ts";
import { gcWhenSettled } from "../../src/wire/settle-gc.ts";

test("one collection once the runtime stayed unchanged for the quiet time after its last change; none while idle", () => {
  const clock = createManualClock(0);
  let change: () => void = () => undefined;
  let collections = 0;
  const stop = gcWhenSettled({ onRuntimeChange: (fn) => ((change = fn), () => undefined), gc: () => collections++, clock, quietMs: 10_000 });
  clock.advance(60_000);
  expect(collections).toBe(0); // idle: nothing changed
  // A burst: a change every second for 5 s, then quiet.
  for (let i = 0; i < 5; i++) {
    change();
    clock.advance(1_000);
  }
  clock.advance(8_999);
  expect(collections).toBe(0); // 9.999 s after the last change
  clock.advance(1);
  expect(collections).toBe(1);
  clock.advance(60_000);
  expect(collections).toBe(1);
  change();
  stop();
  clock.advance(60_000);
  expect(collections).toBe(1); // stopped: the pending one is dropped
});
