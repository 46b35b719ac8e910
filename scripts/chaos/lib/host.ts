// Host facts and cgroup v1 files the scenarios read and clean up (only below their own cgroupRoot).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CGROUP_MOUNT, removeCgroupTree } from "../../../test/support/cgroup.ts";

/** Kills what is left in a cgroup subtree and removes it bottom-up (test/support/cgroup.ts). */
export { CGROUP_MOUNT, removeCgroupTree };

export const MIB = 1024 * 1024;

/** Reads a cgroup v1 file, undefined when the cgroup or file is gone. */
export function readCgroupFile(dir: string, file: string): string | undefined {
  try {
    return readFileSync(join(dir, file), "utf8");
  } catch {
    return undefined;
  }
}

/** Parses "key value" lines (memory.stat, memory.oom_control). */
export function flatKeyed(text: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of (text ?? "").split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && Number.isFinite(Number(v))) out[k] = Number(v);
  }
  return out;
}

/** Total OOM kills the kernel reports (/proc/vmstat oom_kill, kernel ≥ 4.13). */
export function hostOomKills(): number {
  return flatKeyed(readFileSync("/proc/vmstat", "utf8")).oom_kill ?? 0;
}

export function memTotalBytes(): number {
  const m = /^MemTotal:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"));
  if (!m) throw new Error("/proc/meminfo has no MemTotal line");
  return Number(m[1]) * 1024;
}

/** Tasks on the node as bunlet's pid.available counts them (/proc/loadavg field 4). */
export function hostTaskCount(): number {
  const m = /\s\d+\/(\d+)\s/.exec(readFileSync("/proc/loadavg", "utf8"));
  return m ? Number(m[1]) : 0;
}

export function hostMaxPid(): number {
  const n = (p: string) => Number(readFileSync(p, "utf8").trim());
  return Math.min(n("/proc/sys/kernel/pid_max"), n("/proc/sys/kernel/threads-max"));
}
