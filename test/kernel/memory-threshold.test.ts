import { describe, expect, test } from "bun:test";
import { MemcgThresholdError, memcgThresholdBytes, memoryStatsForSignal, thresholdAmountBytes } from "../../src/kernel/memory-threshold.ts";

const Gi = 1024 ** 3;
const Mi = 1024 ** 2;

describe("memcgThresholdBytes", () => {
  test.each([
    // available, workingSet, usage, threshold → memcg threshold
    ["node", 3 * Gi, 1 * Gi, 2 * Gi, { quantity: 1 * Gi }, 4 * Gi],
    ["allocatable", 4 * Gi, 1 * Gi, 3 * Gi, { quantity: 1 * Gi }, 6 * Gi],
    ["no inactive file", 900 * Mi, 100 * Mi, 100 * Mi, { quantity: 100 * Mi }, 900 * Mi],
    // 10% of capacity 1000Mi (float32 fraction as the parser stores it): trunc(1000Mi × 0.1f)
    [
      "percentage",
      900 * Mi,
      100 * Mi,
      150 * Mi,
      { percentage: Math.fround(Math.fround(10) / 100) },
      1000 * Mi - Math.trunc(1000 * Mi * Math.fround(0.1)) + 50 * Mi,
    ],
  ])("%s", (_name, available, workingSet, usage, value, want) => {
    expect(memcgThresholdBytes({ availableBytes: available, workingSetBytes: workingSet, usageBytes: usage }, value)).toBe(want);
  });

  test("20% of 1000Mi matches upstream's float32 result", () => {
    expect(thresholdAmountBytes({ percentage: Math.fround(Math.fround(20) / 100) }, 1000 * Mi)).toBe(209_715_203);
  });

  test.each([[undefined], [{ availableBytes: 1, workingSetBytes: 1 }], [{ usageBytes: 1, workingSetBytes: 1 }], [{ usageBytes: 1, availableBytes: 1 }]])(
    "missing fields throw naming the stats: %j",
    (mem) => {
      expect(() => memcgThresholdBytes(mem, { quantity: 1 }, "node.memory")).toThrow(MemcgThresholdError);
      expect(() => memcgThresholdBytes(mem, { quantity: 1 }, "node.memory")).toThrow(/node\.memory: usageBytes, workingSetBytes and availableBytes/);
    },
  );
});

describe("memoryStatsForSignal", () => {
  const node = { time: "n", usageBytes: 1 };
  const pods = { time: "p", usageBytes: 2 };
  test.each([
    ["memory.available", { node: { nodeName: "x", memory: node }, pods: [] }, node, "node.memory"],
    [
      "allocatableMemory.available",
      { node: { nodeName: "x", memory: node, systemContainers: [{ name: "kubelet" }, { name: "pods", memory: pods }] }, pods: [] },
      pods,
      'node.systemContainers["pods"].memory',
    ],
    ["allocatableMemory.available", { node: { nodeName: "x", memory: node }, pods: [] }, undefined, 'node.systemContainers["pods"].memory'],
  ] as const)("%s", (signal, summary, mem, where) => {
    expect(memoryStatsForSignal(summary as never, signal)).toEqual({ mem, where } as never);
  });
});
