import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createDirUsageCache, createFlatDirUsageReader, walkDirUsage, type DirUsage } from "../../src/stats/dir-usage.ts";
import {
  cgroupDirs,
  countProcs,
  countProcsTree,
  emptyDirPath,
  ephemeralStorage,
  fsUsage,
  nextCpuRate,
  parseCpuUsageNs,
  podLogsDirectory,
  podProcessCount,
  PodStatsError,
  readCpuUsageNs,
} from "../../src/stats/pods.ts";
import type { FsStats } from "../../src/stats/summary.ts";

const T = "2026-01-01T00:00:00.000Z";
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), `bunlet-pods-${process.pid}-`));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function put(files: Record<string, string>) {
  for (const [p, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), content);
  }
}

describe("cgroupDirs", () => {
  test("v1: one directory per controller, leading slash ignored", () => {
    expect(cgroupDirs("/m", "/kubepods/pod1", 1)).toEqual({
      version: 1,
      memory: "/m/memory/kubepods/pod1",
      cpu: "/m/cpuacct/kubepods/pod1",
      pids: "/m/pids/kubepods/pod1",
      io: "/m/blkio/kubepods/pod1",
    });
  });
  test("v2 detected from cgroup.controllers: one directory", () => {
    put({ "cgroup.controllers": "memory pids\n" });
    expect(cgroupDirs(root, "kubepods/pod1")).toEqual({
      version: 2,
      memory: join(root, "kubepods/pod1"),
      cpu: join(root, "kubepods/pod1"),
      pids: join(root, "kubepods/pod1"),
      io: join(root, "kubepods/pod1"),
    });
  });
});

describe("parseCpuUsageNs", () => {
  test.each([
    ["123456789\n", 1, 123456789],
    ["usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n", 2, 1_500_000],
  ] as const)("%j (v%d) → %d ns", (text, v, ns) => {
    expect(parseCpuUsageNs(text, v)).toBe(ns);
  });
  test.each([
    ["abc", 1, /cpuacct.usage "abc" is not an integer/],
    ["user_usec 1\n", 2, /no usage_usec/],
  ] as const)("%j (v%d) throws naming the problem", (text, v, re) => {
    expect(() => parseCpuUsageNs(text, v, "/x")).toThrow(re);
  });
  test("readCpuUsageNs reads the v1 file", () => {
    put({ "cpuacct/p/cpuacct.usage": "42\n" });
    expect(readCpuUsageNs(cgroupDirs(root, "p", 1))).toBe(42);
  });
});

describe("nextCpuRate", () => {
  test.each([
    ["first sample: no rate", undefined, { usageNs: 5e9, timeMs: 1000 }, { base: { usageNs: 5e9, timeMs: 1000 } }],
    ["half a core over 2 s", { base: { usageNs: 0, timeMs: 0 } }, { usageNs: 1e9, timeMs: 2000 }, { base: { usageNs: 1e9, timeMs: 2000 }, nanoCores: 5e8 }],
    [
      "window too short: previous rate kept, base kept",
      { base: { usageNs: 0, timeMs: 0 }, nanoCores: 7 },
      { usageNs: 1e9, timeMs: 500 },
      { base: { usageNs: 0, timeMs: 0 }, nanoCores: 7 },
    ],
    [
      "counter went backwards: restart",
      { base: { usageNs: 9e9, timeMs: 0 }, nanoCores: 7 },
      { usageNs: 1e9, timeMs: 5000 },
      { base: { usageNs: 1e9, timeMs: 5000 } },
    ],
  ] as const)("%s", (_name, state, sample, want) => {
    expect(nextCpuRate(state, sample, 1000)).toEqual(want);
  });
});

describe("process count", () => {
  test("countProcs ignores blank lines", () => {
    expect(countProcs("1\n2\n\n3\n")).toBe(3);
    expect(countProcs("")).toBe(0);
  });
  test("pids.current wins when the pids cgroup exists", () => {
    put({ "pids/p/pids.current": "7\n", "memory/p/cgroup.procs": "1\n" });
    expect(podProcessCount(cgroupDirs(root, "p", 1))).toBe(7);
  });
  test("else cgroup.procs summed over the memory cgroup tree", () => {
    put({ "memory/p/cgroup.procs": "1\n", "memory/p/c1/cgroup.procs": "2\n3\n", "memory/p/c2/cgroup.procs": "", "memory/p/c2/x/cgroup.procs": "4\n" });
    expect(countProcsTree(join(root, "memory/p"))).toBe(4);
    expect(podProcessCount(cgroupDirs(root, "p", 1))).toBe(4);
  });
  test("a malformed pids.current throws naming the file", () => {
    put({ "pids/p/pids.current": "max\n" });
    expect(() => podProcessCount(cgroupDirs(root, "p", 1))).toThrow(/pids.current: "max" is not an integer/);
  });
  test("no cgroup at all: ENOENT", () => {
    expect(() => podProcessCount(cgroupDirs(root, "nope", 1))).toThrow(expect.objectContaining({ code: "ENOENT" }));
  });
});

describe("paths", () => {
  test("pod log directory and emptyDir path as upstream", () => {
    expect(podLogsDirectory("/var/log/pods", { namespace: "ns", name: "web", uid: "u1" })).toBe("/var/log/pods/ns_web_u1");
    expect(emptyDirPath("/var/lib/kubelet", "u1", "cache")).toBe("/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache");
  });
});

describe("dir usage", () => {
  test("walk counts allocated blocks and inodes (dirs included, hard links once)", async () => {
    put({ "v/a": "x".repeat(10_000), "v/sub/b": "y".repeat(5000) });
    linkSync(join(root, "v/a"), join(root, "v/sub/a-link"));
    const u = await walkDirUsage(join(root, "v"));
    // v, a, sub, b: four inodes (the link is the same inode as a).
    expect(u.inodesUsed).toBe(4);
    expect(u.truncated).toBe(false);
    const st = (p: string) => Bun.file(join(root, p)).size;
    expect(st("v/a")).toBe(10_000);
    // At least the file bytes rounded to blocks, no more than 4 KiB of slack per inode plus dirs.
    expect(u.usedBytes).toBeGreaterThanOrEqual(15_000);
    expect(u.usedBytes).toBeLessThan(15_000 + 4 * 8192);
  });
  test("walk stops at maxEntries and says so", async () => {
    put(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`v/f${i}`, "z"])));
    const u = await walkDirUsage(join(root, "v"), { maxEntries: 5 });
    expect(u.truncated).toBe(true);
    expect(u.inodesUsed).toBe(6);
  });
  test("walk of a missing root rejects with ENOENT", async () => {
    await expect(walkDirUsage(join(root, "missing"))).rejects.toMatchObject({ code: "ENOENT" });
  });
  test("flat reader: files only, not recursive; with or without the dir itself", () => {
    put({ "l/0.log": "a".repeat(100), "l/1.log": "b", "l/sub/x": "c" });
    const r = createFlatDirUsageReader();
    expect(r.usage(join(root, "l"), { filesOnly: true }).inodesUsed).toBe(2);
    expect(r.usage(join(root, "l")).inodesUsed).toBe(3);
  });

  test("flat reader: fresh sizes every call, listing refreshed when the directory changes", () => {
    put({ "l/0.log": "a" });
    const r = createFlatDirUsageReader();
    const dir = join(root, "l");
    const first = r.usage(dir);
    expect(first.inodesUsed).toBe(2);
    // Growing a file leaves the dir mtime alone; its new size must still show.
    writeFileSync(join(dir, "0.log"), "a".repeat(64 * 1024));
    expect(r.usage(dir).usedBytes).toBeGreaterThanOrEqual(first.usedBytes + 60 * 1024);
    put({ "l/0.log.20260101-000000": "b" });
    expect(r.usage(dir).inodesUsed).toBe(3);
    rmSync(join(dir, "0.log"));
    expect(r.usage(dir, { filesOnly: true }).inodesUsed).toBe(1);
  });

  test("cache: walks once per TTL, serves stale while refreshing, drops forgotten paths", async () => {
    let now = 0;
    let walks = 0;
    let result: DirUsage = { usedBytes: 1, inodesUsed: 1, truncated: false };
    const cache = createDirUsageCache({
      now: () => now,
      ttlMs: 10_000,
      walk: async () => {
        walks++;
        return result;
      },
    });
    expect(await cache.get("/v")).toEqual(result);
    now = 9_999;
    expect((await cache.get("/v")).usedBytes).toBe(1);
    expect(walks).toBe(1);
    now = 10_000;
    result = { usedBytes: 2, inodesUsed: 1, truncated: false };
    // Stale value now, the refresh lands for the next call.
    expect((await cache.get("/v")).usedBytes).toBe(1);
    expect(walks).toBe(2);
    await Bun.sleep(0);
    expect((await cache.get("/v")).usedBytes).toBe(2);
    cache.retain(new Set());
    expect(cache.size()).toBe(0);
  });
});

describe("ephemeralStorage", () => {
  const nodefs: FsStats = { time: T, capacityBytes: 1000, availableBytes: 400, inodes: 50, inodesFree: 20, usedBytes: 600, inodesUsed: 30 };
  test("sums rootfs, logs, disk volumes and pod logs; capacity from nodefs", () => {
    const got = ephemeralStorage(
      [
        { name: "a", rootfs: fsUsage(nodefs, { usedBytes: 10, inodesUsed: 1 }, T), logs: fsUsage(nodefs, { usedBytes: 5, inodesUsed: 2 }, T) },
        { name: "b", logs: fsUsage(nodefs, { usedBytes: 7, inodesUsed: 1 }, T) },
      ],
      [{ name: "v", ...fsUsage(nodefs, { usedBytes: 100, inodesUsed: 3 }, T) }],
      fsUsage(nodefs, { usedBytes: 1, inodesUsed: 1 }, T),
      nodefs,
      T,
    );
    expect(got).toEqual({ time: T, capacityBytes: 1000, availableBytes: 400, inodes: 50, inodesFree: 20, usedBytes: 123, inodesUsed: 8 });
  });
  test("nothing measured: zero usage", () => {
    expect(ephemeralStorage([], [], undefined, undefined, T)).toEqual({ time: T, usedBytes: 0, inodesUsed: 0 });
  });
});

test("PodStatsError is an Error", () => {
  expect(new PodStatsError("x")).toBeInstanceOf(Error);
});
