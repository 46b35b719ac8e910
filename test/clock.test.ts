import { describe, expect, test } from "bun:test";
import { preciseClock, wallClock } from "../src/clock.ts";

test("preciseClock is the wall clock to sub-ms: never behind Date.now() (which truncates) nor a full ms ahead", () => {
  const clock = preciseClock();
  let fractional = false;
  for (let i = 0; i < 10_000; i++) {
    const before = Date.now();
    const t = clock.now();
    const after = Date.now();
    // Date.now() truncates to the ms: the precise time lies in [before, after + 1), give or take the
    // few µs performance.timeOrigin and CLOCK_REALTIME drift apart (measured: −0.003 to +1.000 ms).
    // A Date.now()-anchored clock runs up to 1 ms early and fails the first bound.
    expect(t).toBeGreaterThanOrEqual(before - 0.01);
    expect(t).toBeLessThan(after + 1 + 0.01);
    if (t % 1 !== 0) fractional = true;
  }
  expect(fractional).toBe(true);
});

describe("wallClock: a monotonic clock kept on the wall clock", () => {
  /** A monotonic clock running `ppm` fast against a wall clock that starts at 1e12 ms. */
  function drifting(ppm: number) {
    let wall = 1e12 + 0.25;
    let perf = 0;
    return {
      now: wallClock(
        () => perf,
        () => Math.floor(wall),
        wall,
      ),
      advance(ms: number) {
        wall += ms;
        perf += ms * (1 + ppm / 1e6);
      },
      wall: () => wall,
    };
  }
  test.each([
    ["monotonic fast by 500 ppm (NTP slewing the wall clock back)", 500],
    ["monotonic slow by 500 ppm", -500],
    ["no drift", 0],
  ])("%s: after an hour of 1 s steps it is still within Date.now()'s millisecond", (_n, ppm) => {
    const d = drifting(ppm);
    for (let i = 0; i < 3600; i++) d.advance(1000 + (i % 7) * 0.13);
    const t = d.now();
    expect(t).toBeGreaterThanOrEqual(Math.floor(d.wall()));
    expect(t).toBeLessThanOrEqual(Math.floor(d.wall()) + 1);
    // Anchored at timeOrigin alone it would be 1.8 s off after an hour at 500 ppm.
  });
  test("a reading taken earlier maps to the wall time it was taken at", () => {
    const d = drifting(0);
    d.advance(10);
    const earlier = 5; // perf ms
    expect(d.now(earlier)).toBeCloseTo(1e12 + 0.25 + 5, 6);
  });
});
