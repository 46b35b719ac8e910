// Detects, once at start, what the host's cgroups offer for container resources: cgroup v2 at the
// mount (libcontainer IsCgroup2UnifiedMode) and the swap controller (upstream swapControllerAvailable:
// memory.memsw.limit_in_bytes on v1; on v2 memory.swap.max in the kubelet's own cgroup, since the root
// cgroup has none); with the node's swap (SwapTotal of /proc/meminfo, cAdvisor's machineInfo.SwapCapacity)
// and the configured memorySwap.swapBehavior, for the container's swap (swap.ts).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ContainerCgroupHost } from "./resources.ts";

/** The v2 path of a process from /proc/<pid>/cgroup text (the "0::<path>" line), undefined on pure v1. */
export function unifiedCgroupPath(procCgroup: string): string | undefined {
  return /^0::(.*)$/m.exec(procCgroup)?.[1];
}

/** SwapTotal of /proc/meminfo text, in bytes (0 when absent). */
export function swapTotalBytes(meminfo: string): number {
  const m = /^SwapTotal:\s+(\d+) kB/m.exec(meminfo);
  return m ? Number(m[1]) * 1024 : 0;
}

export interface ContainerCgroupHostOptions {
  mountRoot?: string;
  procSelfCgroup?: string;
  /** Default /proc/meminfo. */
  procMeminfo?: string;
  singleProcessOOMKill?: boolean;
  /** KubeletConfiguration memorySwap.swapBehavior. */
  swapBehavior?: string;
}

export function detectContainerCgroupHost(opts: ContainerCgroupHostOptions = {}): ContainerCgroupHost {
  const mountRoot = opts.mountRoot ?? "/sys/fs/cgroup";
  const unified = existsSync(join(mountRoot, "cgroup.controllers"));
  let swapController = false;
  try {
    if (unified) {
      const own = unifiedCgroupPath(readFileSync(opts.procSelfCgroup ?? "/proc/self/cgroup", "utf8")) ?? "/";
      swapController = existsSync(join(mountRoot, own, "memory.swap.max"));
    } else {
      swapController = existsSync(join(mountRoot, "memory", "memory.memsw.limit_in_bytes"));
    }
  } catch {
    // unreadable: assume no swap controller, as upstream
  }
  let swapCapacityBytes = 0;
  try {
    swapCapacityBytes = swapTotalBytes(readFileSync(opts.procMeminfo ?? "/proc/meminfo", "utf8"));
  } catch {
    // no /proc/meminfo: no swap
  }
  return { unified, swapController, singleProcessOOMKill: opts.singleProcessOOMKill, swapBehavior: opts.swapBehavior, swapCapacityBytes };
}
