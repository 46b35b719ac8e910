// Pod, container and system-container stats read from their cgroups (upstream
// pkg/kubelet/stats/cadvisor_stats_provider.go, the cgroup files read here instead of through cAdvisor):
// directories found once, CPU rates carried from pass to pass, pod memory files kept open for the pressure path.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { containerCgroupLeaves } from "../cri/container-cgroup.ts";
import type { PodLike } from "../pod/pod-like.ts";
import { cgroupMemoryStats } from "./cgroup.ts";
import { createKeptFiles } from "./kept-files.ts";
import { readNetworkStats } from "./network.ts";
import { readOwnCgroupDirs } from "./own-cgroup.ts";
import { cgroupDirs, cpuStats, firstPid, nextCpuRate, podProcessCount, readCpuUsageNs, type CgroupDirs } from "./pods.ts";
import { cgroupSwapStats } from "./swap.ts";
import { isEnoent, type CpuRound, type SummaryContext, type SummaryPass } from "./summary-context.ts";
import { SYSTEM_CONTAINER_KUBELET, type ContainerStats, type CPUStats, type MemoryStats, type PodStats, type SwapStats } from "./summary.ts";

/** The fields of a PodStats its cgroup gives. */
export type PodCgroupStats = Pick<PodStats, "memory" | "cpu" | "process_stats" | "network" | "swap">;

export interface CgroupStats {
  /** The cgroup at `rel` in each controller (v1 or v2 detected once, on first use). */
  dirsOf(rel: string): CgroupDirs;
  /** The pod's cgroup; undefined when it has none yet (not started) or any more (torn down). */
  podDirs(pod: PodLike, uid: string): CgroupDirs | undefined;
  /** Memory, CPU, process count, swap and (own network namespace only) network of a pod whose cgroup exists. */
  podStats(pod: PodLike, uid: string, dirs: CgroupDirs, pass: SummaryPass): PodCgroupStats;
  /** The pod's memory read now through its kept files (the pressure path); a new pod's cgroup is looked up once. */
  freshPodMemory(pod: PodLike, uid: string, time: string): MemoryStats | undefined;
  /** A running container's cgroup, found once and remembered while full passes see it. */
  containerDirsOf(pod: CgroupDirs, id: string, seen: Set<string>): CgroupDirs | undefined;
  /** The same without recording it as seen (containerMemory between summaries). */
  knownContainerDirs(pod: CgroupDirs, id: string): CgroupDirs | undefined;
  /** A container's memory, CPU and swap from its cgroup, each undefined when unreadable. */
  containerStats(uid: string, name: string, dirs: CgroupDirs, pass: SummaryPass): { memory?: MemoryStats; cpu?: CPUStats; swap?: SwapStats };
  /** The cgroup's CPU, its rate against the last pass's (or this pass's) sample of the same directory. */
  sampleCpu(pass: SummaryPass, dirs: CgroupDirs): CPUStats;
  /** The "kubelet" system container: bunlet's own cgroup; undefined when there is none (or it is off). */
  kubeletContainer(pass: SummaryPass): ContainerStats | undefined;
  /** Keeps a pass's CPU states: a full pass replaces them (cgroups gone are forgotten), a partial one adds. */
  commitRound(round: CpuRound, full: boolean): void;
  /** After a full pass: forgets the container cgroups it did not see and the pods not in `live`. */
  forget(seen: ReadonlySet<string>, live: ReadonlySet<string>): void;
}

/** A container's cgroup under its pod's, by the names runtimes and drivers give it (containerCgroupLeaves). */
export function containerCgroupDirs(pod: CgroupDirs, id: string): CgroupDirs | undefined {
  for (const name of containerCgroupLeaves(id)) {
    if (existsSync(join(pod.memory, name)))
      return { version: pod.version, memory: join(pod.memory, name), cpu: join(pod.cpu, name), pids: join(pod.pids, name), io: join(pod.io, name) };
  }
  return undefined;
}

export function createCgroupStats(ctx: SummaryContext): CgroupStats {
  const { opts, mountRoot, attempt } = ctx;
  // Cgroup v1 vs v2 is a property of the mount: detect once.
  let cgroupVersion: 1 | 2 | undefined;
  const dirsOf = (rel: string): CgroupDirs => {
    const d = cgroupDirs(mountRoot, rel, cgroupVersion);
    cgroupVersion = d.version;
    return d;
  };

  // CPU rate state per cgroup directory, as the last full pass left it.
  let cpuStates: CpuRound = new Map();
  const sampleCpu = (pass: SummaryPass, dirs: CgroupDirs): CPUStats => {
    const sample = { usageNs: readCpuUsageNs(dirs), timeMs: pass.nowMs };
    const state = nextCpuRate(pass.round.get(dirs.cpu) ?? cpuStates.get(dirs.cpu), sample, opts.minCpuWindowMs);
    pass.round.set(dirs.cpu, state);
    return cpuStats(sample, state, pass.time);
  };

  // The memory cgroup of each pod a pass found (the pressure path reads it again without a lookup).
  const memoryDirs = new Map<string, string>();
  /** Pod memory files kept open for the pressure path (stats/kept-files.ts); 3 per pod. */
  const podFiles = createKeptFiles(4096);
  /** A pod cgroup that went away since it was found (pod torn down) is no error: the field is omitted. */
  const podMemory = (uid: string, dir: string, time: string): MemoryStats | undefined => {
    try {
      return cgroupMemoryStats(dir, time, podFiles);
    } catch (e) {
      podFiles.forget(dir);
      if (!existsSync(dir)) memoryDirs.delete(uid);
      else if (!isEnoent(e)) ctx.fail(uid, "memory", e);
      return undefined;
    }
  };

  // Each running container's cgroup as found once (two existsSync and four joins per container per
  // summary otherwise); a full pass forgets the containers it did not see.
  const containerDirs = new Map<string, CgroupDirs>();
  const containerKey = (pod: CgroupDirs, id: string) => `${pod.memory}\0${id}`;

  // bunlet's own cgroup, found once (and not again when /proc/self/cgroup could not be read).
  let kubeletDirs: CgroupDirs | null | undefined = opts.kubeletContainer === false ? null : undefined;
  const kubeletStartTime = opts.kubeletStartTime ?? new Date(performance.timeOrigin).toISOString();

  return {
    dirsOf,
    podDirs(pod, uid) {
      const rel = attempt(uid, "cgroup", () => opts.podCgroupPath(pod));
      return rel === undefined ? undefined : dirsOf(rel);
    },
    podStats(pod, uid, dirs, pass) {
      const out: PodCgroupStats = {};
      if (!existsSync(dirs.memory)) return out;
      memoryDirs.set(uid, dirs.memory);
      const memory = attempt(uid, "memory", () => cgroupMemoryStats(dirs.memory, pass.time, podFiles));
      if (memory) out.memory = memory;
      const cpu = attempt(uid, "cpu", () => sampleCpu(pass, dirs));
      if (cpu) out.cpu = cpu;
      const count = attempt(uid, "process_stats", () => podProcessCount(dirs));
      if (count !== undefined) out.process_stats = { process_count: count };
      // addSwapStats: the pod cgroup's swap, as cAdvisor reports it for the pod.
      const swap = attempt(uid, "swap", () => cgroupSwapStats(dirs.memory, dirs.version, pass.time));
      if (swap) out.swap = swap;
      // The pod's own network namespace (a hostNetwork pod's is the node's, reported there).
      if (!(pod.spec as { hostNetwork?: boolean }).hostNetwork) {
        const network = attempt(uid, "network", () => {
          const pid = firstPid(dirs.memory);
          return pid === undefined ? undefined : readNetworkStats(pid, pass.time, opts.procRoot);
        });
        if (network) out.network = network;
      }
      return out;
    },
    freshPodMemory(pod, uid, time) {
      // The pod's memory cgroup as the last full pass found it; a new pod's is looked up once.
      let dir = memoryDirs.get(uid);
      if (dir === undefined) {
        const rel = attempt(uid, "cgroup", () => opts.podCgroupPath(pod));
        const d = rel === undefined ? undefined : dirsOf(rel).memory;
        if (d !== undefined && existsSync(d)) memoryDirs.set(uid, (dir = d));
      }
      return dir === undefined ? undefined : podMemory(uid, dir, time);
    },
    containerDirsOf(pod, id, seen) {
      const key = containerKey(pod, id);
      seen.add(key);
      let d = containerDirs.get(key);
      if (d === undefined) {
        d = containerCgroupDirs(pod, id);
        if (d) containerDirs.set(key, d);
      }
      return d;
    },
    knownContainerDirs: (pod, id) => containerDirs.get(containerKey(pod, id)) ?? containerCgroupDirs(pod, id),
    containerStats(uid, name, dirs, pass) {
      const memory = attempt(uid, `container ${name} memory`, () => cgroupMemoryStats(dirs.memory, pass.time));
      const cpu = attempt(uid, `container ${name} cpu`, () => sampleCpu(pass, dirs));
      const swap = attempt(uid, `container ${name} swap`, () => cgroupSwapStats(dirs.memory, dirs.version, pass.time));
      return { memory, cpu, swap };
    },
    sampleCpu,
    kubeletContainer(pass) {
      if (kubeletDirs === undefined) {
        kubeletDirs =
          attempt("node", "kubelet cgroup", () => {
            const version = cgroupVersion ?? cgroupDirs(mountRoot, "").version;
            return readOwnCgroupDirs(mountRoot, version, opts.procRoot);
          }) ?? null;
      }
      if (!kubeletDirs) return undefined;
      const dirs = kubeletDirs;
      const c: ContainerStats = { name: SYSTEM_CONTAINER_KUBELET, startTime: kubeletStartTime };
      const memory = attempt("node", "kubelet memory", () => cgroupMemoryStats(dirs.memory, pass.time));
      if (memory) c.memory = memory;
      const cpu = attempt("node", "kubelet cpu", () => sampleCpu(pass, dirs));
      if (cpu) c.cpu = cpu;
      const swap = attempt("node", "kubelet swap", () => cgroupSwapStats(dirs.memory, dirs.version, pass.time));
      if (swap) c.swap = swap;
      return c;
    },
    commitRound(round, full) {
      if (full) cpuStates = round;
      else for (const [k, v] of round) cpuStates.set(k, v);
    },
    forget(seen, live) {
      for (const key of containerDirs.keys()) if (!seen.has(key)) containerDirs.delete(key);
      for (const [uid, dir] of memoryDirs) {
        if (live.has(uid)) continue;
        memoryDirs.delete(uid);
        podFiles.forget(dir);
      }
    },
  };
}
