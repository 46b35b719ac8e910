import { describe, expect, test } from "bun:test";
import { createBackOff, formatBackOff } from "../../src/pod/backoff.ts";

describe("restart back-off", () => {
  test("10 s doubling to 5 min", () => {
    const b = createBackOff();
    const seen: number[] = [];
    let t = 0;
    for (let i = 0; i < 8; i++) {
      b.next("k", t);
      seen.push(b.delayMs("k"));
      t += b.delayMs("k");
    }
    expect(seen).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
  });

  test.each([
    // [ms after next(), since (finishedAt offset) or undefined, in back-off?]
    [0, undefined, true],
    [9_999, undefined, true],
    [10_000, undefined, false],
    [5_000, 2_000, true], // finished 2 s after the restart decision: 3 s into back-off
    [13_500, 3_000, false],
  ] as const)("after %d ms (since %p) in back-off = %p", (dt, since, want) => {
    const b = createBackOff();
    b.next("k", 1_000);
    expect(b.isInBackOff("k", 1_000 + dt, since === undefined ? undefined : 1_000 + since)).toBe(want);
  });

  test("resets to 10 s after 10 min without restarts", () => {
    const b = createBackOff();
    b.next("k", 0);
    b.next("k", 10_000);
    b.next("k", 30_000);
    expect(b.delayMs("k")).toBe(40_000);
    b.next("k", 30_000 + 600_001);
    expect(b.delayMs("k")).toBe(10_000);
    expect(b.isInBackOff("other", 0)).toBe(false);
    b.gc(30_000 + 600_001 + 600_001);
    expect(b.delayMs("k")).toBe(0);
  });

  test.each([
    [10_000, "10s"],
    [160_000, "2m40s"],
    [300_000, "5m0s"],
  ])("formatBackOff(%d) = %s", (ms, s) => expect(formatBackOff(ms)).toBe(s));
});
