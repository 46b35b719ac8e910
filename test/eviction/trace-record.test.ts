import { describe, expect, test } from "bun:test";
import { isoMicros, type KernelEvent, takeCycleTrigger, takeNearestEvent } from "../../src/eviction/trace-record.ts";

test.each([
  [0, "1970-01-01T00:00:00.000000Z"],
  [1.5, "1970-01-01T00:00:00.001500Z"],
  [1_700_000_000_123.456, "2023-11-14T22:13:20.123456Z"],
])("isoMicros(%p)", (ms, want) => expect(isoMicros(ms)).toBe(want));

const ev = (atMs: number, reason = `at ${atMs}`): KernelEvent => ({ atMs, reason });

describe("takeCycleTrigger: the events before a cycle are its own, the earliest its trigger", () => {
  test.each([
    ["none", [], 100, undefined, []],
    ["all after the cycle started: left for a later one", [ev(150)], 100, undefined, [150]],
    ["received out of order: the earliest wins", [ev(90), ev(80), ev(120)], 100, 80, [120]],
    ["at the cycle's start counts as before", [ev(100)], 100, 100, []],
  ])("%s", (_name, events, timeMs, want, left) => {
    const queue = [...events];
    expect(takeCycleTrigger(queue, timeMs)?.atMs).toBe(want);
    expect(queue.map((e) => e.atMs)).toEqual(left);
  });
});

describe("takeNearestEvent: the notifier thread's wake-up matched to the event it answered", () => {
  test.each([
    ["none", [], 100, undefined, []],
    ["the nearest, before or after", [ev(80), ev(103), ev(140)], 100, 103, [80, 140]],
    ["a tie: the first received", [ev(95), ev(105)], 100, 95, [105]],
  ])("%s", (_name, events, wokeAtMs, want, left) => {
    const queue = [...events];
    expect(takeNearestEvent(queue, wokeAtMs)?.atMs).toBe(want);
    expect(queue.map((e) => e.atMs)).toEqual(left);
  });
});
