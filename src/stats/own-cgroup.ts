// The "kubelet" system container of the Summary API: bunlet's own cgroup. Upstream's container
// manager finds the kubelet's cgroup from its pid when kubeletCgroups is not set (getContainer on
// /proc/<pid>/cgroup) and the summary reports that cgroup's memory and cpu with the kubelet's start
// time. A process in the root cgroup ("/") has no container of its own: nothing is reported then.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CgroupDirs } from "./pods.ts";

/** Pure: /proc/<pid>/cgroup text → the process's cgroup per v1 controller ("memory", "cpuacct", …) or "" for the v2 unified line. */
export function parseProcCgroup(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === "0" && m[2] === "") out.set("", m[3]!);
    for (const c of m[2]!.split(",")) if (c) out.set(c, m[3]!);
  }
  return out;
}

/**
 * Pure: the cgroup directories of a process from its /proc/<pid>/cgroup, for the hierarchy at
 * `mountRoot` (v1 per-controller mounts or a v2 unified mount); undefined when it sits in the root
 * memory cgroup or the hierarchy has no line for memory.
 */
export function ownCgroupDirs(procCgroup: string, mountRoot: string, version: 1 | 2): CgroupDirs | undefined {
  const paths = parseProcCgroup(procCgroup);
  if (version === 2) {
    const rel = paths.get("");
    if (rel === undefined || rel === "/") return undefined;
    const d = join(mountRoot, rel);
    return { version: 2, memory: d, cpu: d, pids: d, io: d };
  }
  const mem = paths.get("memory");
  if (mem === undefined || mem === "/") return undefined;
  const at = (controller: string, fallback: string) => join(mountRoot, controller, paths.get(controller) ?? fallback);
  return { version: 1, memory: join(mountRoot, "memory", mem), cpu: at("cpuacct", mem), pids: at("pids", mem), io: at("blkio", mem) };
}

/** bunlet's own cgroup directories (read once: a process's cgroup does not change under the kubelet). */
export function readOwnCgroupDirs(mountRoot: string, version: 1 | 2, procRoot = "/proc"): CgroupDirs | undefined {
  return ownCgroupDirs(readFileSync(join(procRoot, "self", "cgroup"), "utf8"), mountRoot, version);
}
