import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseMeminfo } from "../../src/stats/node.ts";
import { cgroupSwapStats, nodeSwapStats, swapStatsFromFiles } from "../../src/stats/swap.ts";

const T = "2026-12-01T08:00:00.000Z";

describe("nodeSwapStats (cAdvisor's root: SwapTotal − SwapFree used, the rest available)", () => {
  test.each([
    ["swap in use", "SwapTotal:       1048576 kB\nSwapFree:         786432 kB\n", { swapUsageBytes: 256 * 2 ** 20, swapAvailableBytes: 768 * 2 ** 20 }],
    ["no swap", "SwapTotal:             0 kB\nSwapFree:              0 kB\n", { swapUsageBytes: 0, swapAvailableBytes: 0 }],
    ["no swap lines", "MemTotal:        4000000 kB\n", { swapUsageBytes: 0, swapAvailableBytes: 0 }],
  ])("%s", (_name, text, want) => expect(nodeSwapStats(parseMeminfo(text), T)).toEqual({ time: T, ...want }));
});

describe("swapStatsFromFiles (cadvisorInfoToSwapStats)", () => {
  test.each([
    ["limited", 4096, "16384\n", { swapUsageBytes: 4096, swapAvailableBytes: 12288 }],
    ["max: no available bytes", 4096, "max\n", { swapUsageBytes: 4096 }],
    ["v1 unlimited (2^63 rounded): no available bytes", 0, "9223372036854771712\n", { swapUsageBytes: 0 }],
    ["NoSwap (0)", 0, "0\n", { swapUsageBytes: 0, swapAvailableBytes: 0 }],
    ["no limit file: cAdvisor's zero limit", 0, undefined, { swapUsageBytes: 0, swapAvailableBytes: 0 }],
    ["used over the limit: 0 available", 8192, "4096", { swapUsageBytes: 8192, swapAvailableBytes: 0 }],
  ] as const)("%s", (_name, used, limit, want) => expect(swapStatsFromFiles(used, limit, T)).toEqual({ time: T, ...want }));
});

describe("cgroupSwapStats", () => {
  const root = mkdtempSync(join(tmpdir(), "bunlet-swap-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const dir = (name: string, files: Record<string, string>) => {
    const d = join(root, name);
    mkdirSync(d);
    for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
    return d;
  };

  test("v2: memory.swap.current and memory.swap.max", () => {
    const d = dir("v2", { "memory.swap.current": "65536\n", "memory.swap.max": "1048576\n" });
    expect(cgroupSwapStats(d, 2, T)).toEqual({ time: T, swapUsageBytes: 65536, swapAvailableBytes: 1048576 - 65536 });
  });
  test("v2 without swap accounting: 0 used, 0 available", () => {
    expect(cgroupSwapStats(dir("v2-none", {}), 2, T)).toEqual({ time: T, swapUsageBytes: 0, swapAvailableBytes: 0 });
  });
  test("v2: a malformed memory.swap.current is an error naming the file", () => {
    const d = dir("v2-bad", { "memory.swap.current": "lots\n" });
    expect(() => cgroupSwapStats(d, 2, T)).toThrow(`${d}/memory.swap.current: "lots" is not a number`);
  });
  test("v1: total_swap of memory.stat, memory.memsw.limit_in_bytes", () => {
    const d = dir("v1", { "memory.stat": "total_rss 100\ntotal_swap 4096\n", "memory.memsw.limit_in_bytes": "9223372036854771712\n" });
    expect(cgroupSwapStats(d, 1, T)).toEqual({ time: T, swapUsageBytes: 4096 });
  });
  test("v1 without memsw (no swap accounting): 0 used, 0 available", () => {
    expect(cgroupSwapStats(dir("v1-none", { "memory.stat": "total_rss 100\ntotal_swap 4096\n" }), 1, T)).toEqual({
      time: T,
      swapUsageBytes: 0,
      swapAvailableBytes: 0,
    });
  });
});
