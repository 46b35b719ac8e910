import { describe, expect, test } from "bun:test";
import { cpuQuotaPerSecUSec, parentSlice, transientSlice, UINT64_MAX, v2ResourceProperties } from "../../src/pod/systemd-slices.ts";

describe("systemd transient slices (libcontainer systemd manager, v2)", () => {
  test.each([
    [["kubepods"], "-.slice"],
    [["kubepods", "burstable"], "kubepods.slice"],
    [["kubepods", "burstable", "podab-cd"], "kubepods-burstable.slice"],
    [["kubepods", "podab-cd"], "kubepods.slice"],
  ])("parent of %p is %s", (name, want) => expect(parentSlice(name)).toBe(want));

  // quota µs per period → µs per second, rounded up to whole percents (10 ms) of a CPU
  test.each([
    [50_000, 100_000, 500_000n, 50_000],
    [10_000, 100_000, 100_000n, 10_000],
    [1_000, 100_000, 10_000n, 1_000],
    [1_500, 100_000, 20_000n, 2_000], // 1.5 % → 2 %, and the cgroupfs quota follows
    [25_000, 50_000, 500_000n, 25_000],
    [-1, 100_000, UINT64_MAX, -1],
    [0, 100_000, UINT64_MAX, 0],
  ])("CPUQuotaPerSecUSec of quota %d period %d", (quota, period, perSec, adjusted) => {
    expect(cpuQuotaPerSecUSec(quota, period)).toEqual({ perSecUSec: perSec, quotaUs: adjusted });
  });

  const props = (cfg: Parameters<typeof v2ResourceProperties>[0], version = 252) =>
    Object.fromEntries(v2ResourceProperties(cfg, version).map((p) => [p.name, p.value]));
  test.each([
    [
      "guaranteed pod",
      { memoryLimitBytes: 64 * 2 ** 20, cpuShares: 512, cpuQuotaUs: 50_000, cpuPeriodUs: 100_000, pidsLimit: 1024 },
      252,
      { MemoryMax: 67_108_864n, CPUWeight: 20n, CPUQuotaPeriodUSec: 100_000n, CPUQuotaPerSecUSec: 500_000n, TasksMax: 1024n },
    ],
    ["old systemd: no CPUQuotaPeriodUSec", { cpuQuotaUs: 50_000, cpuPeriodUs: 100_000 }, 241, { CPUQuotaPerSecUSec: 500_000n }],
    ["besteffort QoS", { cpuShares: 2 }, 252, { CPUWeight: 1n }],
    ["unlimited memory and pids", { memoryLimitBytes: -1, pidsLimit: -1 }, 252, { MemoryMax: UINT64_MAX, TasksMax: UINT64_MAX }],
    ["nothing set", {}, 252, {}],
  ] as const)("properties of %s", (_n, cfg, version, want) => expect(props(cfg, version)).toEqual(want));

  test("a pod slice: Wants= its QoS slice, accounting on, no default dependencies, then its resources", () => {
    const u = transientSlice(["kubepods", "burstable", "podab-cd"], { cpuShares: 102 }, { systemdVersion: 252 });
    expect(u.name).toBe("kubepods-burstable-podab_cd.slice");
    expect(u.parent).toBe("kubepods-burstable.slice");
    expect(u.mode).toBe("replace");
    expect(u.properties).toEqual([
      { name: "Description", signature: "s", value: "libcontainer container kubepods-burstable-podab_cd.slice" },
      { name: "Wants", signature: "as", value: ["kubepods-burstable.slice"] },
      { name: "MemoryAccounting", signature: "b", value: true },
      { name: "CPUAccounting", signature: "b", value: true },
      { name: "IOAccounting", signature: "b", value: true },
      { name: "TasksAccounting", signature: "b", value: true },
      { name: "DefaultDependencies", signature: "b", value: false },
      { name: "CPUWeight", signature: "t", value: 4n },
    ]);
  });
});
