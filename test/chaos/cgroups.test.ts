// The chaos harness's view of cgroups on each host it runs on (scripts/chaos/lib/cgroups.ts): paths
// per version and driver, and the memory counters read from v1 or v2 files (temp-dir fakes).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  cgroupDir,
  detectLayout,
  kubepodsDir,
  memoryLimitBytes,
  memoryLimitCounters,
  memoryUsageBytes,
  podDir,
  runtimeCgroupDriver,
  workingSetBytes,
  type CgroupLayout,
} from "../../scripts/chaos/lib/cgroups.ts";

const v1: CgroupLayout = { mount: "/cg", version: 1, driver: "cgroupfs", cgroupRoot: "/bunlet-chaos-1" };
const v2: CgroupLayout = { mount: "/cg", version: 2, driver: "cgroupfs", cgroupRoot: "/bunlet-chaos-1" };
const v2systemd: CgroupLayout = { mount: "/cg", version: 2, driver: "systemd", cgroupRoot: "/" };

describe("paths", () => {
  test.each([
    ["v1 cgroupfs kubepods", kubepodsDir(v1), "/cg/memory/bunlet-chaos-1/kubepods"],
    ["v1 cgroupfs pod (pids)", podDir(v1, "pids", "u-1", "BestEffort"), "/cg/pids/bunlet-chaos-1/kubepods/besteffort/podu-1"],
    ["v1 cgroupRoot itself", cgroupDir(v1, "memory", []), "/cg/memory/bunlet-chaos-1"],
    ["v2 cgroupfs kubepods", kubepodsDir(v2), "/cg/bunlet-chaos-1/kubepods"],
    ["v2 cgroupfs Guaranteed pod", podDir(v2, "memory", "u-1", "Guaranteed"), "/cg/bunlet-chaos-1/kubepods/podu-1"],
    ["v2 systemd kubepods", kubepodsDir(v2systemd), "/cg/kubepods.slice"],
    ["v2 systemd Burstable pod", podDir(v2systemd, "pids", "u-1", "Burstable"), "/cg/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podu_1.slice"],
  ])("%s", (_name, got, want) => {
    expect(got).toBe(want);
  });

  test("the driver follows the runtime's (BUNLET_CONTAINERD_SYSTEMD_CGROUP); systemd ignores cgroupRoot", () => {
    expect(runtimeCgroupDriver({})).toBe("cgroupfs");
    expect(runtimeCgroupDriver({ BUNLET_CONTAINERD_SYSTEMD_CGROUP: "1" })).toBe("systemd");
    expect(runtimeCgroupDriver({ BUNLET_CONTAINERD_SYSTEMD_CGROUP: "false" })).toBe("cgroupfs");
    expect(() => runtimeCgroupDriver({ BUNLET_CONTAINERD_SYSTEMD_CGROUP: "yes" })).toThrow(/BUNLET_CONTAINERD_SYSTEMD_CGROUP="yes": want 1\/true or 0\/false/);
    expect(detectLayout("/r", "/nonexistent", { BUNLET_CONTAINERD_SYSTEMD_CGROUP: "1" })).toEqual({
      mount: "/nonexistent",
      version: 1,
      driver: "systemd",
      cgroupRoot: "/",
    });
    expect(detectLayout("/r", "/nonexistent", {})).toEqual({ mount: "/nonexistent", version: 1, driver: "cgroupfs", cgroupRoot: "/r" });
  });
});

describe("memory files of either version", () => {
  const root = mkdtempSync(join(tmpdir(), `bunlet-chaos-cg-${process.pid}-`));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const cg = (name: string, files: Record<string, string>) => {
    const d = join(root, name);
    mkdirSync(d, { recursive: true });
    for (const [f, t] of Object.entries(files)) writeFileSync(join(d, f), t);
    return d;
  };
  const d1 = cg("v1", {
    "memory.usage_in_bytes": "1000\n",
    "memory.stat": "inactive_file 1\ntotal_inactive_file 300\n",
    "memory.limit_in_bytes": "4096\n",
    "memory.failcnt": "2\n",
    "memory.oom_control": "oom_kill_disable 0\nunder_oom 1\noom_kill 3\n",
    "memory.max_usage_in_bytes": "2000\n",
  });
  const d2 = cg("v2", {
    "memory.current": "1000\n",
    "memory.stat": "anon 500\nfile 500\ninactive_file 200\n",
    "memory.max": "max\n",
    "memory.events": "low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\noom_group_kill 0\n",
    "memory.peak": "3000\n",
  });

  test("usage: usage_in_bytes / memory.current alone, 0 when unreadable", () => {
    expect(memoryUsageBytes(1, d1)).toBe(1000);
    expect(memoryUsageBytes(2, d2)).toBe(1000);
    expect(memoryUsageBytes(2, join(root, "gone"))).toBe(0);
  });

  test("working set = usage − inactive file", () => {
    expect(workingSetBytes(1, d1)).toBe(700);
    expect(workingSetBytes(2, d2)).toBe(800);
    expect(workingSetBytes(2, join(root, "gone"))).toBe(0);
  });

  test("limit: bytes, none when max or unreadable", () => {
    expect(memoryLimitBytes(1, d1)).toBe(4096);
    expect(memoryLimitBytes(2, d2)).toBeUndefined();
    expect(memoryLimitBytes(2, join(root, "gone"))).toBeUndefined();
  });

  test("limit hits, OOM kills and peak: failcnt/oom_control/max_usage (v1), memory.events/peak (v2)", () => {
    expect(memoryLimitCounters(1, d1)).toEqual({ limitHits: 2, oomKills: 3, underOom: 1, peakBytes: 2000 });
    expect(memoryLimitCounters(2, d2)).toEqual({ limitHits: 5, oomKills: 1, underOom: 1, peakBytes: 3000 });
    expect(memoryLimitCounters(2, join(root, "gone"))).toEqual({ limitHits: 0, oomKills: 0, underOom: 0, peakBytes: 0 });
  });
});
