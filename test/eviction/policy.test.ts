import { describe, expect, test } from "bun:test";
import { blockingKills } from "../../src/eviction/kills.ts";
import { statsAgeSeconds } from "../../src/eviction/observations.ts";
import {
  noEvictionNote,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  notifierRefreshDue,
  thresholdsFirstObservedAt,
  thresholdsMetGracePeriod,
  thresholdsMetWithHysteresis,
} from "../../src/eviction/policy.ts";
import type { NodeConditionType } from "../../src/eviction/signals.ts";
import type { InFlightKill } from "../../src/eviction/state.ts";
import type { Observations, Threshold } from "../../src/eviction/threshold.ts";
import { Gi, Mi, pod, thresholds } from "./helpers.ts";

const [memHard, diskSoft] = thresholds({
  evictionHard: { "memory.available": "100Mi" },
  evictionSoft: { "nodefs.available": "10%" },
  evictionSoftGracePeriod: { "nodefs.available": "1m30s" },
  evictionMinimumReclaim: { "memory.available": "50Mi" },
  enforceNodeAllocatable: [],
}) as [Threshold, Threshold];
const mem = (available: number): Observations => ({ "memory.available": { available, capacity: 4 * Gi, timeMs: 0 } });

describe("thresholdsMetWithHysteresis", () => {
  const cases: [string, number, Threshold[], number][] = [
    ["met now", 90 * Mi, [], 1],
    ["not met, did not act last sync", 120 * Mi, [], 0],
    ["not met, acted last sync and short of min-reclaim", 120 * Mi, [memHard], 1],
    ["not met, acted last sync and reclaimed past min-reclaim", 160 * Mi, [memHard], 0],
    ["met now and acted last sync: listed once", 90 * Mi, [memHard], 1],
  ];
  test.each(cases)("%s", (_n, available, lastMet, want) => {
    expect(thresholdsMetWithHysteresis([memHard], lastMet, mem(available)).length).toBe(want);
  });
});

describe("grace clocks", () => {
  const cases: [string, Threshold[], Map<Threshold, number>, [Threshold, number][]][] = [
    ["newly met: stamped now", [memHard], new Map(), [[memHard, 1000]]],
    ["still met: keeps its first time", [memHard], new Map([[memHard, 400]]), [[memHard, 400]]],
    ["no longer met: forgotten", [], new Map([[memHard, 400]]), []],
  ];
  test.each(cases)("thresholdsFirstObservedAt: %s", (_n, met, last, want) => {
    expect([...thresholdsFirstObservedAt(met, last, 1000)]).toEqual(want);
  });

  const graceCases: [string, number, Threshold[]][] = [
    ["a hard threshold acts at once; a soft one not before its grace", 1000, [memHard]],
    ["a soft one one ms short of its grace", 90_000 - 1, [memHard]],
    ["a soft one at its grace", 90_000, [memHard, diskSoft]],
  ];
  test.each(graceCases)("thresholdsMetGracePeriod: %s", (_n, now, want) => {
    expect(
      thresholdsMetGracePeriod(
        [memHard, diskSoft],
        new Map([
          [memHard, now],
          [diskSoft, 0],
        ]),
        now,
      ),
    ).toEqual(want);
  });
});

describe("condition clocks", () => {
  test.each([
    ["observed now: stamped", ["MemoryPressure"], [], [["MemoryPressure", 50]]],
    ["not observed now: keeps its time", [], [["DiskPressure", 10]], [["DiskPressure", 10]]],
    ["observed again: restamped", ["DiskPressure"], [["DiskPressure", 10]], [["DiskPressure", 50]]],
  ] as [string, NodeConditionType[], [NodeConditionType, number][], [NodeConditionType, number][]][])(
    "nodeConditionsLastObservedAt: %s",
    (_n, observed, last, want) => {
      expect([...nodeConditionsLastObservedAt(observed, new Map(last), 50)]).toEqual(want);
    },
  );

  test.each([
    ["within the period", [["MemoryPressure", 0]], 299_999, ["MemoryPressure"]],
    ["at the period's end: no longer", [["MemoryPressure", 0]], 300_000, []],
    [
      "fixed order whatever the map's",
      [
        ["PIDPressure", 0],
        ["DiskPressure", 0],
        ["MemoryPressure", 0],
      ],
      1,
      ["MemoryPressure", "DiskPressure", "PIDPressure"],
    ],
  ] as [string, [NodeConditionType, number][], number, NodeConditionType[]][])("nodeConditionsObservedSince: %s", (_n, last, now, want) => {
    expect(nodeConditionsObservedSince(new Map(last), 300_000, now)).toEqual(want);
  });
});

describe("notifierRefreshDue", () => {
  test.each([
    ["never armed", undefined, 0, false, true],
    ["full cycle, 10 s ago: not yet", 0, 10_000, false, false],
    ["full cycle, over 10 s ago", 0, 10_001, false, true],
    ["kernel cycle, over 10 s ago: left to the next full cycle", 0, 10_001, true, false],
    ["kernel cycle, over 20 s ago: overdue", 0, 20_001, true, true],
  ] as [string, number | undefined, number, boolean, boolean][])("%s", (_n, last, now, memoryOnly, want) => {
    expect(notifierRefreshDue(last, now, memoryOnly)).toBe(want);
  });
});

describe("noEvictionNote", () => {
  test.each([
    ["every candidate static", 2, 2, 0, "all 2 candidate pods are static pods, which are never evicted (set evictStaticPods: true to allow it)"],
    ["static and critical", 3, 1, 1, "unable to evict any pods: 2 critical (static 1), 1 already being evicted"],
    ["all already being evicted", 2, 0, 0, "unable to evict any pods: 0 critical (static 0), 2 already being evicted"],
  ] as [string, number, number, number, string][])("%s", (_n, ranked, staticSkipped, criticalSkipped, want) => {
    expect(noEvictionNote(ranked, staticSkipped, criticalSkipped)).toBe(want);
  });
});

describe("blockingKills", () => {
  const kill = (name: string, gracePeriodSeconds: number, startedAtMs: number): InFlightKill => ({
    pod: pod(name),
    uid: `uid-${name}`,
    gracePeriodSeconds,
    startedAtMs,
    settled: false,
    signal: "memory.available",
  });
  test.each([
    ["soft: any running kill blocks", false, kill("a", 30, 0), 1_000, 1],
    ["hard: a soft kill does not block (it is escalated)", true, kill("a", 30, 0), 1_000, 0],
    ["hard: an immediate kill blocks", true, kill("a", 1, 0), 1_000, 1],
    ["an expired kill (grace + 30 s cleanup) does not block", false, kill("a", 1, 0), 31_000, 0],
  ] as [string, boolean, InFlightKill, number, number][])("%s", (_n, hard, k, now, want) => {
    expect(blockingKills([k], hard, now).length).toBe(want);
  });
});

describe("statsAgeSeconds", () => {
  test("the age of each threshold's stats; a zero time has none", () => {
    const obs: Observations = {
      "memory.available": { available: 1, capacity: 2, timeMs: 9_000 },
      "nodefs.available": { available: 1, capacity: 2, timeMs: 0 },
    };
    expect(statsAgeSeconds([memHard, diskSoft], obs, 10_500)).toEqual({ "memory.available": 1.5 });
  });
  test("stats from the future are 0 s old", () => {
    expect(statsAgeSeconds([memHard], { "memory.available": { available: 1, capacity: 2, timeMs: 11_000 } }, 10_000)).toEqual({ "memory.available": 0 });
  });
});
