// Host facts the scenarios read, and the cgroup cleanup (only below their own cgroupRoot); cgroup
// files of either version are read through ./cgroups.ts.
import { readFileSync } from "node:fs";
import { CGROUP_MOUNT, removeCgroupTree } from "../../../test/support/cgroup.ts";
import { flatKeyed, readCgroupFile } from "./cgroups.ts";

/** Kills what is left in a cgroup subtree and removes it bottom-up (test/support/cgroup.ts). */
export { CGROUP_MOUNT, removeCgroupTree, flatKeyed, readCgroupFile };

export const MIB = 1024 * 1024;

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
