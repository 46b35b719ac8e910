// Node-level stats for the Summary API, read from the kernel on every call (no cAdvisor):
// memory from the root memory cgroup (v1: its usage files; v2, whose root has no memory.current:
// anon + file of the root memory.stat as runc emulates it for cAdvisor; else /proc/meminfo),
// swap from /proc/meminfo (stats/swap.ts), nodefs/imagefs from statfs, network from /proc/self/net/dev, rlimit from
// /proc, and the "pods" system container from the pod cgroup root. Cheap enough to call every
// second (a handful of small file reads and two statfs calls; see test/stats/node.test.ts).
// nodeStats({ memoryOnly: true }) is the pressure path's: the root and "pods" memory cgroups only
// (three small reads each, no statfs or /proc), about half the full read's time during a memory
// ramp (0.4–0.9 ms instead of 0.7–1.8 ms, measured inside the reaction benchmark).
import { existsSync, readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { isAbsolute, join } from "node:path";
import { realClock, type Clock } from "../clock.ts";
import { cgroupMemoryStats, rootMemoryStatsV2 } from "./cgroup.ts";
import { createKeptFiles, type KeptFiles } from "./kept-files.ts";
import { fsStats } from "./fs.ts";
import { networkStats, parseNetDevInterfaces } from "./network.ts";
import { rlimitStats, type ProcPaths } from "./process.ts";
import { cgroupSwapStats, nodeSwapStats } from "./swap.ts";
import { SYSTEM_CONTAINER_PODS, type ContainerStats, type MemoryStats, type NodeStats } from "./summary.ts";

export { cgroupMemoryStats } from "./cgroup.ts";

export const DEFAULT_MEMORY_CGROUP_ROOT = "/sys/fs/cgroup/memory";

export interface NodeStatsProviderOptions {
  /** nodefs: the kubelet root dir (--root-dir). */
  rootDir: string;
  /** imagefs: the container runtime's image store (containerd's root), when known; a function when it
   * is learnt later (from the runtime's ImageFsInfo once it answers). */
  imageFsDir?: string | (() => string | undefined);
  /**
   * v1 memory cgroup mount; default /sys/fs/cgroup/memory when present, else the cgroup v2 mount
   * (cgroupMountRoot) when it is one, else (or with null) /proc/meminfo.
   */
  memoryCgroupRoot?: string | null;
  /** Where cgroups are mounted (default /sys/fs/cgroup): a cgroup2 mount there is used when no v1 memory controller is. */
  cgroupMountRoot?: string;
  /** Pod cgroup root, absolute or relative to the memory cgroup root (e.g. "kubepods", "kubepods.slice"). */
  podsCgroup?: string;
  /**
   * The kubepods memory limit bunlet wants. When the kernel holds a larger one (the write was refused
   * with EBUSY and is being retried), the "pods" availableBytes is computed against the wanted one, so
   * allocatable eviction reclaims toward it and the retried write can succeed.
   */
  podsMemoryLimitBytes?: () => number | undefined;
  clock?: Pick<Clock, "now">;
  nodeName?: string;
  /** Test hooks: alternative /proc files. */
  procPaths?: Partial<ProcPaths> & { meminfo?: string; stat?: string; netDev?: string };
  /** A part of the stats could not be read; it is left out (its signals become absent). */
  onError?(err: Error): void;
}

export interface NodeStatsRequest {
  /** The pressure path's read: node and "pods" memory only (no statfs, /proc or startTime). */
  memoryOnly?: boolean;
}

export interface NodeStatsProvider {
  nodeStats(req?: NodeStatsRequest): NodeStats;
  /** Memory capacity (MemTotal) in bytes, read once. */
  readonly memoryCapacityBytes: number;
}

/** Pure: /proc/meminfo text → field values in bytes (kB lines × 1024). */
export function parseMeminfo(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const m = /^([^:]+):\s+(\d+)(?:\s+kB)?\s*$/.exec(line);
    if (m) out[m[1]!] = Number(m[2]) * (line.trimEnd().endsWith("kB") ? 1024 : 1);
  }
  return out;
}

/** Pure: node memory from the root cgroup's stats and MemTotal (docs/eviction-contract.md#node-memory). */
export function nodeMemoryStats(root: MemoryStats, capacityBytes: number): MemoryStats {
  const ws = root.workingSetBytes ?? 0;
  const out: MemoryStats = { ...root, availableBytes: Math.max(0, capacityBytes - ws) };
  return out;
}

/** Pure: "pods" memory with availableBytes against min(the kernel's limit, the wanted one). */
export function capPodsMemory(m: MemoryStats, wantedLimitBytes: number | undefined): MemoryStats {
  if (wantedLimitBytes === undefined || m.workingSetBytes === undefined) return m;
  const byWanted = Math.max(0, wantedLimitBytes - m.workingSetBytes);
  return m.availableBytes === undefined || byWanted < m.availableBytes ? { ...m, availableBytes: byWanted } : m;
}

/** Pure: node memory from /proc/meminfo when no memory cgroup is mounted (cgroup v2 root). */
export function meminfoMemoryStats(meminfo: Record<string, number>, time: string): MemoryStats {
  const total = meminfo.MemTotal ?? 0;
  const usage = total - (meminfo.MemFree ?? 0);
  const ws = Math.max(0, usage - (meminfo["Inactive(file)"] ?? 0));
  return { time, usageBytes: usage, workingSetBytes: ws, availableBytes: Math.max(0, total - ws) };
}

export function createNodeStatsProvider(opts: NodeStatsProviderOptions): NodeStatsProvider {
  const clock = opts.clock ?? realClock;
  const meminfoPath = opts.procPaths?.meminfo ?? "/proc/meminfo";
  const netDevPath = opts.procPaths?.netDev ?? "/proc/self/net/dev";
  const onError = opts.onError ?? (() => {});
  const { memRoot, unifiedRoot } = memoryRoots(opts);
  const podsPath =
    opts.podsCgroup === undefined
      ? undefined
      : isAbsolute(opts.podsCgroup)
        ? opts.podsCgroup
        : join(memRoot ?? unifiedRoot ?? DEFAULT_MEMORY_CGROUP_ROOT, opts.podsCgroup);
  const capacity = parseMeminfo(readFileSync(meminfoPath, "utf8")).MemTotal ?? 0;
  // The root and kubepods memory files stay open: the pressure path reads them even out of fds.
  const kept = createKeptFiles(16);
  const startTime = bootTime(opts.procPaths?.stat ?? "/proc/stat");
  const nodeName = opts.nodeName ?? hostname();
  const procPaths: ProcPaths = {
    pidMax: opts.procPaths?.pidMax ?? "/proc/sys/kernel/pid_max",
    threadsMax: opts.procPaths?.threadsMax ?? "/proc/sys/kernel/threads-max",
    loadavg: opts.procPaths?.loadavg ?? "/proc/loadavg",
  };

  const attempt = <T>(what: string, fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (e) {
      onError(new Error(`node stats: ${what}: ${(e as Error).message}`));
      return undefined;
    }
  };

  return {
    memoryCapacityBytes: capacity,
    nodeStats(req) {
      const time = new Date(clock.now()).toISOString();
      const stats: NodeStats = { nodeName };
      const memory = attempt("memory", () =>
        memRoot
          ? nodeMemoryStats(cgroupMemoryStats(memRoot, time, kept), capacity)
          : unifiedRoot
            ? nodeMemoryStats(rootMemoryStatsV2(kept.read(join(unifiedRoot, "memory.stat")), time, unifiedRoot), capacity)
            : meminfoMemoryStats(parseMeminfo(readFileSync(meminfoPath, "utf8")), time),
      );
      if (memory) stats.memory = memory;
      if (req?.memoryOnly) {
        if (podsPath !== undefined) {
          const pods = attempt(`pods cgroup ${podsPath}`, () => capPodsMemory(cgroupMemoryStats(podsPath, time, kept), opts.podsMemoryLimitBytes?.()));
          if (pods) stats.systemContainers = [{ name: SYSTEM_CONTAINER_PODS, memory: pods }];
        }
        return stats;
      }
      if (startTime) stats.startTime = startTime;
      const fs = attempt(`nodefs ${opts.rootDir}`, () => fsStats(opts.rootDir, time));
      if (fs) stats.fs = fs;
      const dir = typeof opts.imageFsDir === "function" ? opts.imageFsDir() : opts.imageFsDir;
      if (dir !== undefined) {
        const imageFs = attempt(`imagefs ${dir}`, () => fsStats(dir, time));
        if (imageFs) stats.runtime = { imageFs };
      }
      stats.rlimit = rlimitStats(time, procPaths);
      // bunlet runs in the host's network namespace: its net/dev is the node's.
      const network = attempt("network", () => networkStats(parseNetDevInterfaces(readFileSync(netDevPath, "utf8")), time));
      if (network) stats.network = network;
      const swap = attempt("swap", () => nodeSwapStats(parseMeminfo(readFileSync(meminfoPath, "utf8")), time));
      if (swap) stats.swap = swap;
      if (podsPath !== undefined) {
        const pods = attempt(`pods cgroup ${podsPath}`, () => podsContainer(podsPath, time, opts.podsMemoryLimitBytes?.(), kept));
        if (pods) {
          const swap = attempt(`pods cgroup ${podsPath} swap`, () => cgroupSwapStats(podsPath, unifiedRoot && !memRoot ? 2 : 1, time));
          stats.systemContainers = [swap ? { ...pods, swap } : pods];
        }
      }
      return stats;
    },
  };
}

/** v1 memory mount, else the v2 unified mount (with a root memory.stat), else neither (/proc/meminfo). */
function memoryRoots(opts: NodeStatsProviderOptions): { memRoot?: string; unifiedRoot?: string } {
  if (opts.memoryCgroupRoot === null) return {};
  if (opts.memoryCgroupRoot !== undefined) return { memRoot: opts.memoryCgroupRoot };
  const mount = opts.cgroupMountRoot ?? "/sys/fs/cgroup";
  const v1 = join(mount, "memory");
  if (existsSync(join(v1, "memory.usage_in_bytes"))) return { memRoot: v1 };
  if (existsSync(join(mount, "cgroup.controllers")) && existsSync(join(mount, "memory.stat"))) return { unifiedRoot: mount };
  return {};
}

function podsContainer(path: string, time: string, wantedLimitBytes: number | undefined, kept: KeptFiles): ContainerStats {
  const c: ContainerStats = { name: SYSTEM_CONTAINER_PODS, memory: capPodsMemory(cgroupMemoryStats(path, time, kept), wantedLimitBytes) };
  try {
    c.startTime = statSync(path).ctime.toISOString();
  } catch {}
  return c;
}

function bootTime(statPath: string): string | undefined {
  try {
    const m = /^btime\s+(\d+)$/m.exec(readFileSync(statPath, "utf8"));
    return m ? new Date(Number(m[1]) * 1000).toISOString() : undefined;
  } catch {
    return undefined;
  }
}
