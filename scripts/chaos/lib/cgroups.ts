// Where a scenario's cgroups are and what their memory files say, on every host the suite runs on:
//   cgroup v1 + cgroupfs: <mount>/<controller>/<cgroupRoot>/kubepods/burstable/pod<uid>
//   cgroup v2 + cgroupfs: <mount>/<cgroupRoot>/kubepods/burstable/pod<uid>
//   systemd (v1 or v2):   …/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice
// (the driver ignores cgroupRoot, as bunlet's and upstream's systemd driver do). The driver follows the
// runtime's: BUNLET_CONTAINERD_SYSTEMD_CGROUP=1 (containerd's runc SystemdCgroup = true, read by
// test/support/containerd.ts and scripts/host/containerd.sh) means cgroupDriver systemd.
// Memory counters are read from whichever files the version has: usage_in_bytes / memory.current,
// total_inactive_file / inactive_file, failcnt / memory.events max, oom_control / memory.events,
// max_usage_in_bytes / memory.peak.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupDirPath, podCgroupName, qosCgroupName, type CgroupDriver } from "../../../src/pod/cgroups-config.ts";
import type { QOSClass } from "../../../src/pod/qos.ts";

export type CgroupVersion = 1 | 2;

export interface CgroupLayout {
  mount: string;
  version: CgroupVersion;
  driver: CgroupDriver;
  /** The KubeletConfiguration cgroupRoot the harness gives bunlet ("/" with the systemd driver). */
  cgroupRoot: string;
}

/** Reads a cgroup file, undefined when the cgroup or file is gone. */
export function readCgroupFile(dir: string, file: string): string | undefined {
  try {
    return readFileSync(join(dir, file), "utf8");
  } catch {
    return undefined;
  }
}

/** Parses "key value" lines (memory.stat, memory.events, memory.oom_control). */
export function flatKeyed(text: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of (text ?? "").split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && Number.isFinite(Number(v))) out[k] = Number(v);
  }
  return out;
}

/** The runtime's cgroup driver as the test containerd is configured (BUNLET_CONTAINERD_SYSTEMD_CGROUP). */
export function runtimeCgroupDriver(env: Record<string, string | undefined> = process.env): CgroupDriver {
  const v = env.BUNLET_CONTAINERD_SYSTEMD_CGROUP ?? "";
  if (v === "1" || v === "true") return "systemd";
  if (v === "" || v === "0" || v === "false") return "cgroupfs";
  throw new Error(`BUNLET_CONTAINERD_SYSTEMD_CGROUP=${JSON.stringify(v)}: want 1/true or 0/false`);
}

export function detectLayout(harnessRoot: string, mount = "/sys/fs/cgroup", env: Record<string, string | undefined> = process.env): CgroupLayout {
  const version: CgroupVersion = existsSync(join(mount, "cgroup.controllers")) ? 2 : 1;
  const driver = runtimeCgroupDriver(env);
  return { mount, version, driver, cgroupRoot: driver === "systemd" ? "/" : harnessRoot };
}

/** A cgroup's directory for one controller (v1) or the unified hierarchy (v2); `name` as ["kubepods", "burstable"]. */
export function cgroupDir(l: CgroupLayout, controller: string, name: string[]): string {
  const rel = name.length === 0 ? l.cgroupRoot : cgroupDirPath(l.driver, l.cgroupRoot, name);
  return l.version === 2 ? join(l.mount, rel) : join(l.mount, controller, rel);
}

export const kubepodsDir = (l: CgroupLayout, controller = "memory") => cgroupDir(l, controller, qosCgroupName("Guaranteed"));
export const podDir = (l: CgroupLayout, controller: string, uid: string, qos: QOSClass) => cgroupDir(l, controller, podCgroupName(qos, uid));

/** Usage (v1 memory.usage_in_bytes, v2 memory.current): one small read, an upper bound of the working set. 0 when unreadable. */
export function memoryUsageBytes(version: CgroupVersion, dir: string): number {
  return Number(readCgroupFile(dir, version === 1 ? "memory.usage_in_bytes" : "memory.current") ?? 0);
}

/** Working set as the kubelet computes it: usage − inactive file pages, floored at 0. */
export function workingSetBytes(version: CgroupVersion, dir: string): number {
  const usage = memoryUsageBytes(version, dir);
  const stat = flatKeyed(readCgroupFile(dir, "memory.stat"));
  return Math.max(0, usage - ((version === 1 ? stat.total_inactive_file : stat.inactive_file) ?? 0));
}

/** The cgroup's memory limit in bytes; undefined when unlimited or unreadable. */
export function memoryLimitBytes(version: CgroupVersion, dir: string): number | undefined {
  const t = readCgroupFile(dir, version === 1 ? "memory.limit_in_bytes" : "memory.max")?.trim();
  if (t === undefined || t === "max") return undefined;
  const n = Number(t);
  return Number.isFinite(n) && n < 2 ** 62 ? n : undefined;
}

/** What a memory cgroup's kernel counters say about its limit being hit (0 when unreadable). */
export interface MemoryLimitCounters {
  /** Times usage hit the limit: v1 memory.failcnt, v2 memory.events `max`. */
  limitHits: number;
  /** OOM kills inside: v1 memory.oom_control oom_kill, v2 memory.events oom_kill. */
  oomKills: number;
  /** v1 memory.oom_control under_oom (0/1 now); v2 memory.events `oom` (OOM events so far). */
  underOom: number;
  /** Peak usage: v1 memory.max_usage_in_bytes, v2 memory.peak (kernel ≥ 5.19). */
  peakBytes: number;
}

export function memoryLimitCounters(version: CgroupVersion, dir: string): MemoryLimitCounters {
  if (version === 1) {
    const oc = flatKeyed(readCgroupFile(dir, "memory.oom_control"));
    return {
      limitHits: Number(readCgroupFile(dir, "memory.failcnt") ?? 0),
      oomKills: oc.oom_kill ?? 0,
      underOom: oc.under_oom ?? 0,
      peakBytes: Number(readCgroupFile(dir, "memory.max_usage_in_bytes") ?? 0),
    };
  }
  const ev = flatKeyed(readCgroupFile(dir, "memory.events"));
  return { limitHits: ev.max ?? 0, oomKills: ev.oom_kill ?? 0, underOom: ev.oom ?? 0, peakBytes: Number(readCgroupFile(dir, "memory.peak") ?? 0) };
}
