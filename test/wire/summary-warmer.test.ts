import { describe, expect, test } from "bun:test";
import { parseQuantity } from "../../src/config/quantity.ts";
import type { Threshold } from "../../src/eviction/threshold.ts";
import type { Summary } from "../../src/stats/summary.ts";
import { createWarmPlan, memoryThresholdsNear, WARM_FAR_EVERY, WARM_TICKS_AFTER_CHANGE } from "../../src/wire/summary-warmer.ts";

const Gi = 1024 ** 3;
const hard = (signal: Threshold["signal"], value: Threshold["value"]): Threshold => ({ signal, operator: "LessThan", value, gracePeriodMs: 0 });
const memory100Mi = hard("memory.available", { quantity: parseQuantity("100Mi") });
const allocatable10pc = hard("allocatableMemory.available", { percentage: 0.1 });
const nodefs = hard("nodefs.available", { percentage: 0.1 });

const summary = (nodeAvailGi: number, podsAvailGi?: number): Summary => ({
  node: {
    nodeName: "n",
    memory: { time: "", availableBytes: nodeAvailGi * Gi, workingSetBytes: (8 - nodeAvailGi) * Gi },
    systemContainers:
      podsAvailGi === undefined ? [] : [{ name: "pods", memory: { time: "", availableBytes: podsAvailGi * Gi, workingSetBytes: (4 - podsAvailGi) * Gi } }],
  },
  pods: [],
});

describe("memoryThresholdsNear", () => {
  test.each([
    ["node far from memory.available (6 of 8 GiB free)", [memory100Mi], summary(6), false],
    ["node within a quarter of capacity of memory.available", [memory100Mi], summary(1.5), true],
    ["allocatable near its 10 % threshold, node far", [memory100Mi, allocatable10pc], summary(6, 0.8), true],
    ["allocatable far too", [memory100Mi, allocatable10pc], summary(6, 3.5), false],
    ["no memory figures: assumed near", [memory100Mi], { node: { nodeName: "n" }, pods: [] } as Summary, true],
    ["no summary yet: assumed near", [memory100Mi], undefined, true],
    ["no memory threshold at all", [nodefs], summary(0.1), false],
  ] as const)("%s", (_name, thresholds, s, want) => {
    expect(memoryThresholdsNear(thresholds, s)).toBe(want);
  });
});

describe("createWarmPlan", () => {
  test("far from the thresholds: the memory-only summary every WARM_FAR_EVERY ticks, the first at once", () => {
    const plan = createWarmPlan();
    const ticks = Array.from({ length: 3 * WARM_FAR_EVERY }, () => plan.tick("a", false).memoryOnly);
    expect(ticks.filter(Boolean).length).toBe(3);
    expect(ticks[0]).toBe(true);
    expect(ticks[WARM_FAR_EVERY]).toBe(true);
  });

  test("near a threshold: every tick", () => {
    const plan = createWarmPlan();
    expect(Array.from({ length: 4 }, () => plan.tick("a", true).memoryOnly)).toEqual([true, true, true, true]);
  });

  test("the full summary at a change and for WARM_TICKS_AFTER_CHANGE ticks after, then not until the next change", () => {
    const plan = createWarmPlan();
    const full = (key: string, n: number) => Array.from({ length: n }, () => plan.tick(key, false).full);
    expect(full("a", WARM_TICKS_AFTER_CHANGE + 2)).toEqual([true, ...Array(WARM_TICKS_AFTER_CHANGE - 1).fill(true), false, false]);
    expect(full("a,b", 1)).toEqual([true]);
  });

  test("a pod then its containers (two changes in a row): both warmed; a burst (a change at every tick) waits for the pods to settle", () => {
    const plan = createWarmPlan();
    expect(["a", "a:c1", "a:c1"].map((k) => plan.tick(k, false).full)).toEqual([true, true, true]);
    const burst = ["a:c1,b", "a:c1,b:c2", "a:c1,b:c2,d", "a:c1,b:c2,d:c3", "a:c1,b:c2,d:c3,e"];
    expect(burst.map((k) => plan.tick(k, false).full)).toEqual([true, true, false, false, false]);
    expect(plan.tick(burst.at(-1)!, false).full).toBe(true);
  });
});
