import { describe, expect, test } from "bun:test";
import { parseQuantity } from "../../src/config/quantity.ts";
import { memcgThresholdBytes, notifierTargets, repeatCrossingUseful } from "../../src/eviction/notifier-thresholds.ts";
import { makeSignalObservations } from "../../src/eviction/observations.ts";
import { float32Fraction, thresholdAmount, thresholdsMet, type Observations, type Threshold } from "../../src/eviction/threshold.ts";
import { Gi, Mi, summary, thresholds } from "./helpers.ts";

describe("thresholdAmount: float32 percentages, truncated (trap 1)", () => {
  const cases: [string, number, number][] = [
    ["20% of 1000Mi", 20, 1000 * Mi, 209715203],
    ["10% of 8Gi", 10, 8 * Gi, 858993472],
    ["10.5% of 100Gi", 10.5, 100 * Gi, 11274288800],
    ["5% of 1000000 inodes", 5, 1_000_000, 50000],
  ].map(([n, p, c, r]) => [n as string, thresholdAmount({ percentage: float32Fraction(p as number) }, c as number), r as number]);
  test.each(cases)("%s", (_n, got, want) => expect(got).toBe(want));
  test("a quantity is used as is", () => {
    expect(thresholdAmount({ quantity: parseQuantity("100Mi") }, 5 * Gi)).toBe(100 * Mi);
  });
});

describe("thresholdsMet", () => {
  const [hard] = thresholds({
    evictionHard: { "memory.available": "100Mi" },
    evictionMinimumReclaim: { "memory.available": "50Mi" },
    enforceNodeAllocatable: [],
  });
  const obs = (available: number): Observations => ({ "memory.available": { available, capacity: 4 * Gi, timeMs: 0 } });
  const cases: [string, number, boolean, boolean][] = [
    ["below", 99 * Mi, false, true],
    ["exactly equal is NOT met (strict, trap 2)", 100 * Mi, false, false],
    ["above", 101 * Mi, false, false],
    ["min-reclaim raises the line to 150Mi", 140 * Mi, true, true],
    ["min-reclaim: equal to threshold+min is not met", 150 * Mi, true, false],
    ["without min-reclaim 140Mi is fine", 140 * Mi, false, false],
  ];
  test.each(cases)("%s", (_n, available, enforce, met) => {
    expect(thresholdsMet([hard!], obs(available), enforce).length).toBe(met ? 1 : 0);
  });
  test("unobserved signals are skipped", () => {
    expect(thresholdsMet([hard!], {}, false)).toEqual([]);
  });
  test("percentage thresholds use the observation capacity", () => {
    const [p] = thresholds({ evictionHard: { "nodefs.available": "20%" } }) as [Threshold];
    const o = (a: number): Observations => ({ "nodefs.available": { available: a, capacity: 1000 * Mi, timeMs: 0 } });
    expect(thresholdsMet([p], o(209715202), false).length).toBe(1);
    expect(thresholdsMet([p], o(209715203), false).length).toBe(0); // 209715200 naive would disagree
  });
});

describe("makeSignalObservations", () => {
  test("every section maps to its signals", () => {
    const s = summary({
      memAvailable: 3 * Gi,
      memWorkingSet: 1 * Gi,
      allocAvailable: 2 * Gi,
      allocWorkingSet: Gi,
      fsAvailable: 10 * Gi,
      fsCapacity: 100 * Gi,
      inodesFree: 500,
      inodes: 1000,
      imageFs: { available: 5 * Gi, capacity: 50 * Gi, inodesFree: 7, inodes: 9 },
      containerFs: { available: 6 * Gi, capacity: 60 * Gi },
      maxpid: 1000,
      curproc: 1200,
    });
    const { observations: o, warnings } = makeSignalObservations(s);
    expect(warnings).toEqual([]);
    expect(o["memory.available"]).toMatchObject({ available: 3 * Gi, capacity: 4 * Gi });
    expect(o["allocatableMemory.available"]).toMatchObject({ available: 2 * Gi, capacity: 3 * Gi });
    expect(o["nodefs.available"]).toMatchObject({ available: 10 * Gi, capacity: 100 * Gi });
    expect(o["nodefs.inodesFree"]).toMatchObject({ available: 500, capacity: 1000 });
    expect(o["imagefs.available"]).toMatchObject({ available: 5 * Gi, capacity: 50 * Gi });
    expect(o["imagefs.inodesFree"]).toMatchObject({ available: 7, capacity: 9 });
    expect(o["containerfs.available"]).toMatchObject({ available: 6 * Gi, capacity: 60 * Gi });
    expect(o["containerfs.inodesFree"]).toBeUndefined();
    // pid.available can be negative
    expect(o["pid.available"]).toMatchObject({ available: -200, capacity: 1000 });
    expect(o["memory.available"]!.timeMs).toBe(Date.UTC(2024, 0, 1));
  });
  test("absent sections are absent signals; a missing pods container is reported", () => {
    const { observations, warnings } = makeSignalObservations(summary({ memAvailable: Gi }));
    expect(Object.keys(observations)).toEqual(["memory.available"]);
    expect(warnings[0]).toContain('system container "pods" not found');
  });
  test("Go zero time counts as zero", () => {
    const s = summary({ memAvailable: Gi });
    s.node.memory!.time = "0001-01-01T00:00:00Z";
    expect(makeSignalObservations(s).observations["memory.available"]!.timeMs).toBe(0);
  });
});

describe("memcg notifier thresholds", () => {
  test.each([
    // available, workingSet, usage, threshold → memcg threshold
    [3 * Gi, 1 * Gi, 2 * Gi, "1Gi", 4 * Gi],
    [4 * Gi, 1 * Gi, 3 * Gi, "1Gi", 6 * Gi],
  ])("available=%d ws=%d usage=%d threshold=%s", (available, ws, usage, th, want) => {
    const [t] = thresholds({ evictionHard: { "memory.available": th }, enforceNodeAllocatable: [] });
    expect(memcgThresholdBytes(t!, { time: "", availableBytes: available, workingSetBytes: ws, usageBytes: usage }, "x")).toBe(want);
  });
  test("targets for hard and soft memory and allocatable thresholds; errors when stats are incomplete", () => {
    const ts = thresholds({
      evictionHard: { "memory.available": "1Gi", "nodefs.available": "10%" },
      evictionSoft: { "memory.available": "2Gi" },
      evictionSoftGracePeriod: { "memory.available": "1m" },
    });
    const s = summary({ memAvailable: 3 * Gi, memWorkingSet: Gi, allocAvailable: 4 * Gi, allocWorkingSet: Gi });
    const { targets, errors } = notifierTargets(ts, s);
    expect(errors).toEqual([]);
    expect(targets.map((t) => t.description).sort()).toEqual([
      "hard allocatable memory eviction threshold",
      "hard memory eviction threshold",
      "soft memory eviction threshold",
    ]);
    const alloc = targets.find((t) => t.cgroup === "pods")!;
    expect(alloc.thresholdBytes).toBe(5 * Gi - Gi + 50 * Mi);
    delete s.node.memory!.usageBytes;
    expect(notifierTargets(ts, s).errors.length).toBe(2);
  });
});

describe("repeatCrossingUseful: a 'still over the line' post re-runs a cycle only when it can change the decision", () => {
  const ts = thresholds({
    evictionHard: { "memory.available": "1Gi" },
    evictionSoft: { "memory.available": "2Gi" },
    evictionSoftGracePeriod: { "memory.available": "1m" },
  });
  const { targets } = notifierTargets(ts, summary({ memAvailable: 3 * Gi, memWorkingSet: Gi, allocAvailable: 4 * Gi, allocWorkingSet: Gi }));
  const target = (hard: boolean) => targets.find((t) => t.hard === hard && t.signal === "memory.available")!;
  const hard = ts.find((t) => t.gracePeriodMs === 0)!;
  const soft = ts.find((t) => t.gracePeriodMs > 0)!;
  const state = (first: [Threshold, number][], met: Threshold[]) => ({ thresholds: ts, firstObservedAt: new Map(first), thresholdsMet: met });
  const cases: [string, ReturnType<typeof state>, boolean, number, boolean][] = [
    ["the last cycle did not see the hard threshold met (read a hair under the line)", state([], []), true, 0, true],
    ["the hard threshold was met and acted on", state([[hard, 0]], [hard]), true, 5_000, false],
    ["the last cycle did not see the soft threshold met", state([[hard, 0]], [hard]), false, 0, true],
    ["the soft threshold within its grace period", state([[soft, 0]], []), false, 59_999, false],
    ["the soft threshold's grace period ended since the last cycle", state([[soft, 0]], []), false, 60_000, true],
    ["the soft threshold past its grace, acted on", state([[soft, 0]], [soft]), false, 90_000, false],
  ];
  test.each(cases)("%s", (_n, st, isHard, now, want) => expect(repeatCrossingUseful(st, target(isHard), now)).toBe(want));
  test("a target it does not know (another threshold set, or none named) is passed through", () => {
    const acted = state([[hard, 0]], [hard]);
    const index = ts.indexOf(hard);
    expect(repeatCrossingUseful(acted, { signal: "memory.available", thresholdIndex: index }, 0)).toBe(false);
    expect(repeatCrossingUseful(acted, { signal: "memory.available", thresholdIndex: 9 }, 0)).toBe(true);
    expect(repeatCrossingUseful(acted, { signal: "allocatableMemory.available", thresholdIndex: index }, 0)).toBe(true);
    expect(repeatCrossingUseful(acted, { signal: "memory.available" }, 0)).toBe(true);
  });
});
