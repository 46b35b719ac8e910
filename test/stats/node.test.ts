import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fsStatsFromStatfs } from "../../src/stats/fs.ts";
import { createNodeStatsProvider, meminfoMemoryStats, nodeMemoryStats, parseMeminfo } from "../../src/stats/node.ts";

const MEMINFO = "MemTotal:       1000 kB\nMemFree:         200 kB\nInactive(file):  100 kB\nHugePages_Total:       0\n";

describe("pure node stats", () => {
  test("parseMeminfo converts kB to bytes and keeps counts", () => {
    expect(parseMeminfo(MEMINFO)).toEqual({ MemTotal: 1024000, MemFree: 204800, "Inactive(file)": 102400, HugePages_Total: 0 });
  });

  test("nodeMemoryStats: available = capacity − workingSet (floored at 0)", () => {
    expect(nodeMemoryStats({ time: "T", usageBytes: 700, workingSetBytes: 600 }, 1000)).toEqual({
      time: "T",
      usageBytes: 700,
      workingSetBytes: 600,
      availableBytes: 400,
    });
    expect(nodeMemoryStats({ time: "T", workingSetBytes: 1600 }, 1000).availableBytes).toBe(0);
  });

  test("meminfoMemoryStats: usage = MemTotal − MemFree, ws = usage − Inactive(file)", () => {
    expect(meminfoMemoryStats(parseMeminfo(MEMINFO), "T")).toEqual({ time: "T", usageBytes: 819200, workingSetBytes: 716800, availableBytes: 307200 });
  });

  test.each([
    [
      { type: 0, bsize: 4096, blocks: 100, bfree: 40, bavail: 30, files: 50, ffree: 20, namelen: 255, frsize: 4096, flags: 0 },
      { time: "T", capacityBytes: 409600, availableBytes: 122880, usedBytes: 245760, inodes: 50, inodesFree: 20, inodesUsed: 30 },
    ],
  ])("fsStatsFromStatfs", (s, want) => {
    expect(fsStatsFromStatfs(s, "T")).toEqual(want);
  });
});

describe("createNodeStatsProvider", () => {
  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  test("meminfo fallback, injected clock, missing rootDir left out with an error", () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-node-${process.pid}-`));
    writeFileSync(join(dir, "meminfo"), MEMINFO);
    writeFileSync(join(dir, "stat"), "cpu 1 2 3\nbtime 1700000000\n");
    writeFileSync(join(dir, "pid_max"), "32768\n");
    writeFileSync(join(dir, "threads-max"), "100000\n");
    writeFileSync(join(dir, "loadavg"), "0 0 0 1/77 1\n");
    const errors: string[] = [];
    const p = createNodeStatsProvider({
      rootDir: join(dir, "missing-root"),
      imageFsDir: dir,
      memoryCgroupRoot: null,
      clock: { now: () => Date.UTC(2026, 0, 2, 3, 4, 5) },
      nodeName: "n1",
      procPaths: {
        meminfo: join(dir, "meminfo"),
        stat: join(dir, "stat"),
        pidMax: join(dir, "pid_max"),
        threadsMax: join(dir, "threads-max"),
        loadavg: join(dir, "loadavg"),
        netDev: join(dir, "net-dev"),
      },
      onError: (e) => errors.push(e.message),
    });
    writeFileSync(join(dir, "net-dev"), "Inter-|\n face |\n  eth0: 5 1 0 0 0 0 0 0 6 1 0 0 0 0 0 0\n");
    const s = p.nodeStats();
    expect(s.network).toEqual({
      time: "2026-01-02T03:04:05.000Z",
      name: "eth0",
      rxBytes: 5,
      rxErrors: 0,
      txBytes: 6,
      txErrors: 0,
      interfaces: [{ name: "eth0", rxBytes: 5, rxErrors: 0, txBytes: 6, txErrors: 0 }],
    });
    expect(p.memoryCapacityBytes).toBe(1024000);
    expect(s.nodeName).toBe("n1");
    expect(s.startTime).toBe("2023-11-14T22:13:20.000Z");
    expect(s.rlimit).toEqual({ time: "2026-01-02T03:04:05.000Z", maxpid: 32768, curproc: 77 });
    expect(s.fs).toBeUndefined();
    expect(errors.some((e) => e.includes("missing-root") && e.includes("ENOENT"))).toBe(true);
    expect(s.runtime?.imageFs?.time).toBe("2026-01-02T03:04:05.000Z");
    expect(s.memory).toEqual({ time: "2026-01-02T03:04:05.000Z", usageBytes: 819200, workingSetBytes: 716800, availableBytes: 307200 });
    expect(s.systemContainers).toBeUndefined();
    // No swap lines: the node reports none used, none available, as cAdvisor's root does.
    expect(s.swap).toEqual({ time: "2026-01-02T03:04:05.000Z", swapUsageBytes: 0, swapAvailableBytes: 0 });
    writeFileSync(join(dir, "meminfo"), `${MEMINFO}SwapTotal:      2048 kB\nSwapFree:       1536 kB\n`);
    expect(p.nodeStats().swap).toEqual({ time: "2026-01-02T03:04:05.000Z", swapUsageBytes: 512 * 1024, swapAvailableBytes: 1536 * 1024 });
    expect(p.nodeStats({ memoryOnly: true }).swap).toBeUndefined();
  });

  test("memoryOnly reads the root and pods memory cgroups and nothing else (no statfs, /proc, startTime)", () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-node-${process.pid}-`));
    writeFileSync(join(dir, "meminfo"), MEMINFO);
    writeFileSync(join(dir, "stat"), "btime 1700000000\n");
    const stat = (inactive: number) => `total_inactive_file ${inactive}\ntotal_rss 1\n`;
    writeFileSync(join(dir, "memory.usage_in_bytes"), "600000\n");
    writeFileSync(join(dir, "memory.stat"), stat(100000));
    mkdirSync(join(dir, "kubepods"));
    writeFileSync(join(dir, "kubepods", "memory.usage_in_bytes"), "300000\n");
    writeFileSync(join(dir, "kubepods", "memory.stat"), stat(50000));
    writeFileSync(join(dir, "kubepods", "memory.limit_in_bytes"), "800000\n");
    const errors: string[] = [];
    const p = createNodeStatsProvider({
      rootDir: join(dir, "missing-root"),
      imageFsDir: join(dir, "missing-imagefs"),
      memoryCgroupRoot: dir,
      podsCgroup: "kubepods",
      clock: { now: () => Date.UTC(2026, 0, 2, 3, 4, 5) },
      nodeName: "n1",
      procPaths: {
        meminfo: join(dir, "meminfo"),
        stat: join(dir, "stat"),
        pidMax: join(dir, "missing"),
        threadsMax: join(dir, "missing"),
        loadavg: join(dir, "missing"),
      },
      onError: (e) => errors.push(e.message),
    });
    const time = "2026-01-02T03:04:05.000Z";
    expect(p.nodeStats({ memoryOnly: true })).toEqual({
      nodeName: "n1",
      memory: { time, usageBytes: 600000, workingSetBytes: 500000, rssBytes: 1, availableBytes: 1024000 - 500000 },
      systemContainers: [{ name: "pods", memory: { time, usageBytes: 300000, workingSetBytes: 250000, rssBytes: 1, availableBytes: 550000 } }],
    });
    // The missing root dir and imagefs would have been reported by a full read.
    expect(errors).toEqual([]);
    p.nodeStats();
    expect(errors.some((e) => e.includes("missing-root"))).toBe(true);
  });

  test("cgroup v2 mount: node memory from the root memory.stat (anon + file), pods from kubepods.slice's memory.current", () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-node-${process.pid}-`));
    const mount = join(dir, "cgroup");
    mkdirSync(join(mount, "kubepods.slice"), { recursive: true });
    writeFileSync(join(dir, "meminfo"), MEMINFO);
    writeFileSync(join(dir, "stat"), "btime 1700000000\n");
    writeFileSync(join(mount, "cgroup.controllers"), "cpuset cpu io memory pids\n");
    writeFileSync(join(mount, "memory.stat"), "anon 400000\nfile 200000\ninactive_file 100000\npgfault 9\npgmajfault 1\n");
    writeFileSync(join(mount, "kubepods.slice", "memory.current"), "300000\n");
    writeFileSync(join(mount, "kubepods.slice", "memory.stat"), "anon 200000\nfile 100000\ninactive_file 50000\n");
    writeFileSync(join(mount, "kubepods.slice", "memory.max"), "800000\n");
    writeFileSync(join(mount, "kubepods.slice", "memory.swap.current"), "4096\n");
    writeFileSync(join(mount, "kubepods.slice", "memory.swap.max"), "max\n");
    const errors: string[] = [];
    const p = createNodeStatsProvider({
      rootDir: dir,
      cgroupMountRoot: mount,
      podsCgroup: "kubepods.slice",
      clock: { now: () => Date.UTC(2026, 0, 2, 3, 4, 5) },
      nodeName: "n1",
      procPaths: {
        meminfo: join(dir, "meminfo"),
        stat: join(dir, "stat"),
        pidMax: join(dir, "missing"),
        threadsMax: join(dir, "missing"),
        loadavg: join(dir, "missing"),
      },
      onError: (e) => errors.push(e.message),
    });
    const time = "2026-01-02T03:04:05.000Z";
    const want = {
      nodeName: "n1",
      memory: { time, usageBytes: 600000, workingSetBytes: 500000, rssBytes: 400000, pageFaults: 9, majorPageFaults: 1, availableBytes: 1024000 - 500000 },
      systemContainers: [{ name: "pods", memory: { time, usageBytes: 300000, workingSetBytes: 250000, rssBytes: 200000, availableBytes: 550000 } }],
    };
    expect(p.nodeStats({ memoryOnly: true })).toEqual(want);
    const full = p.nodeStats();
    expect(full.memory).toEqual(want.memory);
    expect(full.systemContainers?.[0]).toMatchObject(want.systemContainers[0]!);
    // The full read adds the "pods" container's swap (cAdvisor's, for every system container).
    expect(full.systemContainers?.[0]?.swap).toEqual({ time, swapUsageBytes: 4096 });
    expect(errors.filter((e) => e.includes("memory") || e.includes("pods"))).toEqual([]);
  });

  test("statfs numbers match df -B1 and df -i for the same mount", async () => {
    const p = createNodeStatsProvider({ rootDir: "/", imageFsDir: tmpdir() });
    const df = async (args: string[]) => {
      const out = await new Response(Bun.spawn(["df", ...args, "/"]).stdout).text();
      return out.trim().split("\n")[1]!.trim().split(/\s+/).slice(1, 4).map(Number);
    };
    // Free space moves with other writers; compare the stable totals exactly and the rest loosely.
    const [size, used, avail] = await df(["-B1"]);
    const [inodes, iused, ifree] = await df(["-i"]);
    const fs = p.nodeStats().fs!;
    expect(fs.capacityBytes).toBe(size!);
    expect(fs.inodes).toBe(inodes!);
    expect(Math.abs(fs.usedBytes! - used!)).toBeLessThan(64 * 1024 * 1024);
    expect(Math.abs(fs.availableBytes! - avail!)).toBeLessThan(64 * 1024 * 1024);
    expect(Math.abs(fs.inodesUsed! - iused!)).toBeLessThan(10000);
    expect(Math.abs(fs.inodesFree! - ifree!)).toBeLessThan(10000);
  });
});
