import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cgroupMemoryStats, CgroupStatsError, memoryStatsFromFiles, pickFlatKeyed, rootMemoryStatsV2, type CgroupMemoryFiles } from "../../src/stats/cgroup.ts";
import { parseFlatKeyed } from "../../src/kernel/cgroup-parse.ts";

const T = "2026-01-01T00:00:00.000Z";
const v1stat = (inactive: number) =>
  `cache 999\nrss 1\ninactive_file 7\ntotal_cache 5000\ntotal_rss 3000\ntotal_inactive_file ${inactive}\ntotal_pgfault 42\ntotal_pgmajfault 3\n`;
const v2stat = (inactive: number) => `anon 3000\nfile 5000\ninactive_file ${inactive}\nactive_file 10\npgfault 42\npgmajfault 3\n`;

describe("memoryStatsFromFiles", () => {
  test.each<[string, CgroupMemoryFiles, object]>([
    [
      "v1 uses hierarchical total_* fields",
      { version: 1, usage: "10000\n", stat: v1stat(4000) },
      { time: T, usageBytes: 10000, workingSetBytes: 6000, rssBytes: 3000, pageFaults: 42, majorPageFaults: 3 },
    ],
    [
      "v1 working set floors at 0",
      { version: 1, usage: "1000\n", stat: v1stat(4000) },
      { time: T, usageBytes: 1000, workingSetBytes: 0, rssBytes: 3000, pageFaults: 42, majorPageFaults: 3 },
    ],
    [
      "v1 limit gives availableBytes = limit − workingSet",
      { version: 1, usage: "10000\n", stat: v1stat(4000), limit: "16000\n" },
      { time: T, usageBytes: 10000, workingSetBytes: 6000, rssBytes: 3000, pageFaults: 42, majorPageFaults: 3, availableBytes: 10000 },
    ],
    [
      "v1 unlimited (page-rounded 2^63−1) gives no availableBytes",
      { version: 1, usage: "10000\n", stat: v1stat(4000), limit: "9223372036854771712\n" },
      { time: T, usageBytes: 10000, workingSetBytes: 6000, rssBytes: 3000, pageFaults: 42, majorPageFaults: 3 },
    ],
    [
      "v2 uses inactive_file and anon",
      { version: 2, usage: "10000\n", stat: v2stat(2500), limit: "max\n" },
      { time: T, usageBytes: 10000, workingSetBytes: 7500, rssBytes: 3000, pageFaults: 42, majorPageFaults: 3 },
    ],
    [
      "v2 limit",
      { version: 2, usage: "10000\n", stat: v2stat(2500), limit: "8000\n" },
      { time: T, usageBytes: 10000, workingSetBytes: 7500, rssBytes: 3000, pageFaults: 42, majorPageFaults: 3, availableBytes: 500 },
    ],
  ])("%s", (_name, files, want) => {
    expect(memoryStatsFromFiles(files, T)).toEqual(want as never);
  });

  test("a bad usage value names the cgroup", () => {
    expect(() => memoryStatsFromFiles({ version: 1, usage: "abc", stat: "" }, T, "/cg/x")).toThrow(CgroupStatsError);
    expect(() => memoryStatsFromFiles({ version: 1, usage: "abc", stat: "" }, T, "/cg/x")).toThrow(/\/cg\/x: memory usage "abc"/);
  });
});

describe("cgroupMemoryStats reads a cgroup directory", () => {
  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));
  const cgroup = (files: Record<string, string>) => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-cgroup-${process.pid}-`));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };

  test.each<[string, Record<string, string>, object]>([
    [
      "v1 with a limit",
      { "memory.usage_in_bytes": "10000\n", "memory.stat": v1stat(4000), "memory.limit_in_bytes": "16000\n" },
      { usageBytes: 10000, workingSetBytes: 6000, availableBytes: 10000 },
    ],
    ["v1 without a limit file", { "memory.usage_in_bytes": "10000\n", "memory.stat": v1stat(4000) }, { usageBytes: 10000, workingSetBytes: 6000 }],
    [
      "v2 (memory.current, memory.max)",
      { "memory.current": "10000\n", "memory.stat": v2stat(2500), "memory.max": "8000\n" },
      { usageBytes: 10000, workingSetBytes: 7500, availableBytes: 500 },
    ],
  ])("%s", (_name, files, want) => {
    expect(cgroupMemoryStats(cgroup(files), T)).toMatchObject({ time: T, ...want });
  });

  test("a directory without memory files: CgroupStatsError with code ENOENT (callers treat a removed cgroup as no stats)", () => {
    const d = cgroup({ "cpu.shares": "2\n" });
    let err: unknown;
    try {
      cgroupMemoryStats(d, T);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CgroupStatsError);
    expect((err as NodeJS.ErrnoException).code).toBe("ENOENT");
    expect((err as Error).message).toContain(`${d}: neither memory.usage_in_bytes`);
    rmSync(d, { recursive: true });
    expect(() => cgroupMemoryStats(join(d, "gone"), T)).toThrow(/is this a memory cgroup/);
  });

  test("memory.stat missing is an error naming the file", () => {
    const d = cgroup({ "memory.usage_in_bytes": "1\n" });
    expect(() => cgroupMemoryStats(d, T)).toThrow(/memory\.stat/);
  });
});

describe("rootMemoryStatsV2 (the cgroup v2 root: memory.stat, no memory.current)", () => {
  test.each<[string, string, object]>([
    [
      "usage = anon + file, working set = usage − inactive_file, rss = anon",
      "anon 3000\nfile 5000\nkernel_stack 64\ninactive_file 2500\nactive_file 2500\npgfault 42\npgmajfault 3\n",
      { time: T, usageBytes: 8000, workingSetBytes: 5500, rssBytes: 3000, pageFaults: 42, majorPageFaults: 3 },
    ],
    ["no fault counters, no inactive_file", "anon 10\nfile 0\n", { time: T, usageBytes: 10, workingSetBytes: 10, rssBytes: 10 }],
  ])("%s", (_name, stat, want) => {
    expect(rootMemoryStatsV2(stat, T)).toEqual(want as never);
  });

  test("a memory.stat without anon/file names the file", () => {
    expect(() => rootMemoryStatsV2("total_rss 1\n", T, "/cg")).toThrow(/\/cg\/memory.stat: no anon or file line/);
  });
});

describe("pickFlatKeyed", () => {
  test.each<[string, string, Record<string, number>]>([
    ["first line and later lines", "total_rss 5\ncache 1\ntotal_pgfault 7\n", { total_rss: 5, total_pgfault: 7 }],
    ["a key is matched whole, not as a suffix", "inactive_file 1\ntotal_inactive_file 9\n", { total_inactive_file: 9 }],
    ["no trailing newline; absent keys are left out", "total_rss 5", { total_rss: 5 }],
    ["negative values", "total_rss -1\n", { total_rss: -1 }],
  ])("%s", (_, text, want) => {
    expect(pickFlatKeyed(text, ["total_inactive_file", "total_rss", "total_pgfault", "total_pgmajfault"], "memory.stat")).toEqual(want);
  });
  test("a wanted value that is not an integer names the file and key", () => {
    expect(() => pickFlatKeyed("cache 1\ntotal_rss x1\n", ["total_rss"], "/cg/p/memory.stat")).toThrow('/cg/p/memory.stat: total_rss "x1" is not an integer');
  });
  test("agrees with the full parser on the host's memory.stat", () => {
    const text = readFileSync("/sys/fs/cgroup/memory/memory.stat", "utf8");
    const keys = ["total_inactive_file", "total_rss", "total_pgfault", "total_pgmajfault", "cache", "rss"];
    const full = parseFlatKeyed(text);
    expect(pickFlatKeyed(text, keys, "memory.stat")).toEqual(Object.fromEntries(keys.filter((k) => k in full).map((k) => [k, full[k]!])));
  });
});
