import { describe, expect, test } from "bun:test";
import { cpuMaxValue, cpuWeightFromShares, parseControllers, subtreeControlLine, unifiedResourceFiles } from "../../src/pod/unified-resources.ts";

describe("cgroup v2 resource values", () => {
  // upstream getCPUWeight: 1 + ((shares - 2) * 9999) / 262142, capped at 10000
  test.each([
    [2, 1],
    [3, 1],
    [102, 4],
    [512, 20],
    [1024, 39],
    [2048, 79],
    [262_143, 9999],
    [262_144, 10_000],
    [1_000_000, 10_000],
  ])("cpu.weight of cpu.shares %d is %d", (shares, weight) => expect(cpuWeightFromShares(shares)).toBe(weight));

  test.each([
    [undefined, undefined, undefined],
    [50_000, 100_000, "50000 100000"],
    [0, 100_000, "max 100000"],
    [-1, 100_000, "max 100000"],
    [1000, undefined, "1000"],
  ])("cpu.max of quota %p period %p is %p", (quota, period, want) => expect(cpuMaxValue(quota, period)).toBe(want));

  test.each([
    [
      "kubepods",
      { memoryLimitBytes: 1 << 30, cpuShares: 2048, pidsLimit: 4_194_304 },
      [
        ["memory.max", "1073741824"],
        ["cpu.weight", "79"],
        ["pids.max", "4194304"],
      ],
    ],
    [
      "guaranteed pod",
      { cpuShares: 512, cpuQuotaUs: 50_000, cpuPeriodUs: 100_000, memoryLimitBytes: 64 << 20, pidsLimit: 1024 },
      [
        ["memory.max", "67108864"],
        ["cpu.weight", "20"],
        ["cpu.max", "50000 100000"],
        ["pids.max", "1024"],
      ],
    ],
    ["besteffort pod", { cpuShares: 2 }, [["cpu.weight", "1"]]],
    [
      "unlimited memory and pids",
      { memoryLimitBytes: -1, pidsLimit: -1 },
      [
        ["memory.max", "max"],
        ["pids.max", "max"],
      ],
    ],
    ["unset values write nothing", { memoryLimitBytes: 0, pidsLimit: 0 }, []],
    [
      "unified wins over a converted value",
      { cpuShares: 1024, unified: { "cpu.weight": "100", "memory.high": "1000" } },
      [
        ["cpu.weight", "100"],
        ["memory.high", "1000"],
      ],
    ],
  ] as const)("files of %s", (_name, cfg, want) => {
    expect(unifiedResourceFiles(cfg).map((f) => [f.file, f.value])).toEqual(want.map((w) => [...w]));
  });

  test("each file names its controller", () => {
    const files = unifiedResourceFiles({
      memoryLimitBytes: 1,
      cpuShares: 2,
      cpuQuotaUs: 1000,
      cpuPeriodUs: 100_000,
      pidsLimit: 5,
      unified: { "io.weight": "10" },
    });
    expect(files.map((f) => f.controller)).toEqual(["memory", "cpu", "cpu", "pids", "io"]);
  });

  test("controller lists", () => {
    expect(parseControllers("cpuset cpu io memory pids\n")).toEqual(["cpuset", "cpu", "io", "memory", "pids"]);
    expect(parseControllers("\n")).toEqual([]);
    expect(subtreeControlLine(["cpu", "memory", "pids"])).toBe("+cpu +memory +pids");
  });
});
