import { describe, expect, test } from "bun:test";
import {
  anchorMoves,
  budgetAt,
  dueLateMs,
  episodeCapMs,
  episodeWait,
  DEFAULT_WORKING_SET_POLL,
  nextIntervalMs,
  notMetWindowOver,
  projectsLineWithin,
} from "../../src/kernel/working-set-schedule.ts";
import type { WorkingSetPollSettings } from "../../src/kernel/working-set-protocol.ts";

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const settings: WorkingSetPollSettings = { ...DEFAULT_WORKING_SET_POLL, notMetRetryMs: 100, imminentCapMs: 30, imminentBudgetMsPerSec: 60 };

describe("nextIntervalMs: headroom ÷ the fastest growth, clamped", () => {
  test.each([
    ["at the line", 0, 5],
    ["under the line by less than one minimum interval of growth", 4 * MiB, 5],
    ["128 MiB away at 4 GiB/s", 128 * MiB, 31.25],
    ["1 GiB away", GiB, 250],
    ["far away", 8 * GiB, 500],
    ["over the line (negative headroom)", -MiB, 5],
  ])("%s", (_name, headroom, want) => {
    expect(nextIntervalMs(headroom, settings)).toBe(want);
  });
});

describe("dueLateMs", () => {
  test.each([
    ["a new or moved target (due 0) is read at once", 0, 1000, 0],
    ["read before it was due", 1010, 1000, 0],
    ["read 7 ms late", 993, 1000, 7],
  ])("%s", (_name, dueMs, now, want) => {
    expect(dueLateMs(dueMs, now)).toBe(want);
  });
});

describe("projectsLineWithin: usage growth since the anchor, projected to the line", () => {
  // usage, anchorUsage, anchorMs, now, line, horizon
  test.each([
    ["10 MiB in 10 ms, 20 MiB to go: 20 ms ≤ 25", 80 * MiB, 70 * MiB, 0, 10, 100 * MiB, 25, true],
    ["10 MiB in 10 ms, 30 MiB to go: 30 ms > 25", 70 * MiB, 60 * MiB, 0, 10, 100 * MiB, 25, false],
    ["shrinking", 80 * MiB, 90 * MiB, 0, 10, 100 * MiB, 25, false],
    ["flat", 80 * MiB, 80 * MiB, 0, 10, 100 * MiB, 25, false],
    ["already over the line", 101 * MiB, 90 * MiB, 0, 10, 100 * MiB, 25, false],
    ["no horizon: never", 99 * MiB, 70 * MiB, 0, 10, 100 * MiB, 0, false],
    ["no anchor yet (NaN)", 99 * MiB, 0, Number.NaN, 10, 100 * MiB, 25, false],
  ])("%s", (_name, usage, anchorUsage, anchorMs, now, line, horizon, want) => {
    expect(projectsLineWithin(usage, anchorUsage, anchorMs, now, line, horizon)).toBe(want);
  });
});

describe("anchorMoves: only once RATE_SPAN_MS old", () => {
  test.each([
    ["no anchor yet", Number.NaN, 5, true],
    ["5 ms old", 100, 105, false],
    ["20 ms old", 100, 120, true],
  ])("%s", (_name, anchorMs, now, want) => {
    expect(anchorMoves(anchorMs, now)).toBe(want);
  });
});

describe("episode budget", () => {
  test.each([
    ["a fresh window", { windowMs: 0, usedMs: 50 }, 1500, { windowMs: 1500, usedMs: 0 }, 30],
    ["the same window, budget left", { windowMs: 1000, usedMs: 20 }, 1500, { windowMs: 1000, usedMs: 20 }, 30],
    ["the same window, less left than the cap", { windowMs: 1000, usedMs: 45 }, 1500, { windowMs: 1000, usedMs: 45 }, 15],
    ["the same window, spent", { windowMs: 1000, usedMs: 61 }, 1999, { windowMs: 1000, usedMs: 61 }, -1],
  ])("%s", (_name, budget, startMs, wantBudget, wantCapMs) => {
    const b = budgetAt(budget, startMs);
    expect(b).toEqual(wantBudget);
    expect(episodeCapMs(b, settings)).toBe(wantCapMs);
  });

  test("defaults: a 30 ms cap within 60 ms a second", () => {
    expect(episodeCapMs({ windowMs: 0, usedMs: 0 }, DEFAULT_WORKING_SET_POLL)).toBe(30);
    expect(episodeCapMs({ windowMs: 0, usedMs: 50 }, DEFAULT_WORKING_SET_POLL)).toBe(10);
  });
});

describe("episodeWait", () => {
  test.each([
    ["a real-time thread never spins", true, "spin", 4, "sleep"],
    ["as configured", false, "sleep", 4, "sleep"],
    ["spin with more than one CPU", false, undefined, 2, "spin"],
    ["sleep with one", false, undefined, 1, "sleep"],
  ] as const)("%s", (_name, realtime, configured, cpus, want) => {
    expect(episodeWait(realtime, configured, () => cpus)).toBe(want);
  });
});

describe("notMetWindowOver: windows of retries at least a second apart", () => {
  test.each([
    ["none began", Number.NaN, 5000, false],
    ["began 200 ms ago", 4800, 5000, false],
    ["began a second ago", 4000, 5000, true],
  ])("%s", (_name, notMetAtMs, now, want) => {
    expect(notMetWindowOver(notMetAtMs, now, settings)).toBe(want);
  });

  test("a retry window longer than a second sets the spacing", () => {
    expect(notMetWindowOver(0, 1500, { ...settings, notMetRetryMs: 2000 })).toBe(false);
    expect(notMetWindowOver(0, 2000, { ...settings, notMetRetryMs: 2000 })).toBe(true);
  });
});
