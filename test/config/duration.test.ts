import { describe, expect, test } from "bun:test";
import { canonicalDuration, durationMs, durationSeconds, formatDuration, parseDuration } from "../../src/config/duration.ts";

describe("Go duration text", () => {
  test.each([
    ["1m", "1m0s", 60_000],
    ["90s", "1m30s", 90_000],
    ["1h", "1h0m0s", 3_600_000],
    ["2h45m", "2h45m0s", 9_900_000],
    ["1.5h", "1h30m0s", 5_400_000],
    ["3600s", "1h0m0s", 3_600_000],
    ["100ms", "100ms", 100],
    ["0.5ms", "500µs", 0.5],
    ["1.5s", "1.5s", 1500],
    [".5s", "500ms", 500],
    ["1.s", "1s", 1000],
    ["1us", "1µs", 0.001],
    ["1µs", "1µs", 0.001],
    ["1μs", "1µs", 0.001],
    ["1ns", "1ns", 0.000001],
    ["0", "0s", 0],
    ["0s", "0s", 0],
    ["-1m", "-1m0s", -60_000],
    ["+5s", "5s", 5000],
    ["1h2m3s4ms", "1h2m3.004s", 3_723_004],
    ["1m0s", "1m0s", 60_000],
  ])("%p → %p (%p ms)", (input, canonical, ms) => {
    expect(canonicalDuration(input)).toBe(canonical);
    expect(durationMs(input)).toBeCloseTo(ms, 9);
  });

  test.each([
    ["", 'time: invalid duration ""'],
    ["30", 'time: missing unit in duration "30"'],
    ["1.5", 'time: missing unit in duration "1.5"'],
    ["1h1", 'time: missing unit in duration "1h1"'],
    ["1x", 'time: unknown unit "x" in duration "1x"'],
    ["1e3s", 'time: unknown unit "e" in duration "1e3s"'],
    ["1m-1s", 'time: unknown unit "m-" in duration "1m-1s"'],
    ["s", 'time: invalid duration "s"'],
    ["-", 'time: invalid duration "-"'],
    [".s", 'time: invalid duration ".s"'],
  ])("%p fails with Go's message", (input, message) => {
    expect(() => parseDuration(input)).toThrow(message);
  });

  test.each([
    [0, "0s"],
    [999, "999ns"],
    [1500, "1.5µs"],
    [1e9, "1s"],
    [61e9, "1m1s"],
    [3600e9 + 1e6, "1h0m0.001s"],
  ])("formatDuration(%p) → %p", (ns, text) => {
    expect(formatDuration(ns)).toBe(text);
  });

  test("durationSeconds", () => {
    expect(durationSeconds("1m30s")).toBe(90);
  });
});
