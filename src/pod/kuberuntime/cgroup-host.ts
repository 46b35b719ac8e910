// Detects, once at start, what the host's cgroups offer for container resources: cgroup v2 at the
// mount (libcontainer IsCgroup2UnifiedMode) and the swap controller (upstream swapControllerAvailable:
// memory.memsw.limit_in_bytes on v1; on v2 memory.swap.max in the kubelet's own cgroup, since the root
// cgroup has none).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ContainerCgroupHost } from "./resources.ts";

/** The v2 path of a process from /proc/<pid>/cgroup text (the "0::<path>" line), undefined on pure v1. */
export function unifiedCgroupPath(procCgroup: string): string | undefined {
  return /^0::(.*)$/m.exec(procCgroup)?.[1];
}

export function detectContainerCgroupHost(opts: { mountRoot?: string; procSelfCgroup?: string; singleProcessOOMKill?: boolean } = {}): ContainerCgroupHost {
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
  return { unified, swapController, singleProcessOOMKill: opts.singleProcessOOMKill };
}
