// Per-pod stats read straight from the pod's cgroups and the node's directories (what upstream's
// cadvisor_stats_provider / cri_stats_provider assemble from cAdvisor and CRI). Each function here
// takes explicit paths and returns one Summary API piece, so tests drive them with a temp-dir fake
// cgroup tree. The orchestration (which pod, which paths, caching, CRI) is summary-provider.ts.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseFlatKeyed } from "../kernel/cgroup-parse.ts";
import type { ContainerStats, CPUStats, FsStats, VolumeStats } from "./summary.ts";

export const DEFAULT_CGROUP_MOUNT = "/sys/fs/cgroup";
export const DEFAULT_POD_LOGS_DIR = "/var/log/pods";
export const EMPTY_DIR_PLUGIN_DIR = "kubernetes.io~empty-dir";

export class PodStatsError extends Error {
  override name = "PodStatsError";
}

/** Where one cgroup (a path relative to the hierarchy root) lives in each controller we read. */
export interface CgroupDirs {
  version: 1 | 2;
  memory: string;
  cpu: string;
  pids: string;
  /** v2: the cgroup's directory (io.stat); v1: its blkio directory. */
  io: string;
}

/**
 * cgroup v1: `<mount>/<controller>/<rel>` (memory, cpuacct, pids, blkio); v2 (a unified mount, detected by
 * `<mount>/cgroup.controllers`): every controller's files sit in `<mount>/<rel>`.
 */
export function cgroupDirs(mountRoot: string, rel: string, version?: 1 | 2): CgroupDirs {
  const r = rel.replace(/^\/+/, "");
  const v = version ?? (existsSync(join(mountRoot, "cgroup.controllers")) ? 2 : 1);
  if (v === 2) {
    const d = join(mountRoot, r);
    return { version: 2, memory: d, cpu: d, pids: d, io: d };
  }
  return {
    version: 1,
    memory: join(mountRoot, "memory", r),
    cpu: join(mountRoot, "cpuacct", r),
    pids: join(mountRoot, "pids", r),
    io: join(mountRoot, "blkio", r),
  };
}

/** Pure: cpuacct.usage (v1, ns) or cpu.stat usage_usec (v2) → cumulative CPU nanoseconds. */
export function parseCpuUsageNs(text: string, version: 1 | 2, where = "cpu usage"): number {
  if (version === 1) {
    const t = text.trim();
    if (!/^\d+$/.test(t)) throw new PodStatsError(`${where}: cpuacct.usage ${JSON.stringify(t)} is not an integer (nanoseconds)`);
    return Number(t);
  }
  const usec = parseFlatKeyed(text, where).usage_usec;
  if (usec === undefined) throw new PodStatsError(`${where}: cpu.stat has no usage_usec line`);
  return usec * 1000;
}

export function readCpuUsageNs(dirs: Pick<CgroupDirs, "cpu" | "version">): number {
  const file = join(dirs.cpu, dirs.version === 1 ? "cpuacct.usage" : "cpu.stat");
  return parseCpuUsageNs(readFileSync(file, "utf8"), dirs.version, file);
}

export interface CpuSample {
  usageNs: number;
  timeMs: number;
}

/** Per-cgroup CPU rate state: the sample rates are measured from, and the last rate computed. */
export interface CpuRateState {
  base: CpuSample;
  nanoCores?: number;
}

/** Rates over shorter windows are noise (two summaries asked for a few ms apart). */
export const DEFAULT_MIN_CPU_WINDOW_MS = 1000;

/**
 * Pure: advances a cgroup's CPU rate state with a new sample. usageNanoCores is the average rate
 * (ns of CPU per s of wall time) since the base sample once at least minWindowMs passed; before that
 * the previous rate is repeated. No rate on the first sample; a counter that went backwards (the
 * cgroup was recreated) restarts from the new sample.
 */
export function nextCpuRate(state: CpuRateState | undefined, sample: CpuSample, minWindowMs = DEFAULT_MIN_CPU_WINDOW_MS): CpuRateState {
  if (!state || sample.usageNs < state.base.usageNs || sample.timeMs < state.base.timeMs) return { base: sample };
  const dt = sample.timeMs - state.base.timeMs;
  if (dt < minWindowMs || dt === 0) return state;
  return { base: sample, nanoCores: Math.round(((sample.usageNs - state.base.usageNs) * 1000) / dt) };
}

/** Pure: CPUStats for a sample given the cgroup's rate state after that sample. */
export function cpuStats(sample: CpuSample, state: CpuRateState, time: string): CPUStats {
  const out: CPUStats = { time, usageCoreNanoSeconds: sample.usageNs };
  if (state.nanoCores !== undefined) out.usageNanoCores = state.nanoCores;
  return out;
}

/** Pure: number of pids in a cgroup.procs text. */
export function countProcs(text: string): number {
  let n = 0;
  for (const line of text.split("\n")) if (line.trim() !== "") n++;
  return n;
}

/** Processes in a cgroup and all its descendants (a process is in exactly one cgroup of a hierarchy). */
export function countProcsTree(dir: string, maxDepth = 8): number {
  let n = countProcs(readFileSync(join(dir, "cgroup.procs"), "utf8"));
  if (maxDepth <= 0) return n;
  for (const ent of readdirSync(dir, { withFileTypes: true })) {
    if (!ent.isDirectory()) continue;
    try {
      n += countProcsTree(join(dir, ent.name), maxDepth - 1);
    } catch {
      // a container cgroup removed while we walk
    }
  }
  return n;
}

/**
 * process_count of a pod: `pids.current` of its pids cgroup (tasks, the unit the pid limits and the
 * node's rlimit.curproc count) when present, else the processes listed in cgroup.procs of the pod's
 * memory cgroup tree.
 */
export function podProcessCount(dirs: Pick<CgroupDirs, "pids" | "memory">): number {
  const pidsCurrent = join(dirs.pids, "pids.current");
  let text: string;
  try {
    text = readFileSync(pidsCurrent, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    return countProcsTree(dirs.memory);
  }
  const t = text.trim();
  if (!/^\d+$/.test(t)) throw new PodStatsError(`${pidsCurrent}: ${JSON.stringify(t)} is not an integer`);
  return Number(t);
}

/** The first process found in a cgroup or its children (a pod's processes live in its containers' cgroups). */
export function firstPid(dir: string, depth = 3): number | undefined {
  const text = readFileSync(join(dir, "cgroup.procs"), "utf8");
  const pid = Number(text.split("\n").find((l) => l.trim() !== ""));
  if (Number.isInteger(pid) && pid > 0) return pid;
  if (depth === 0) return undefined;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const found = firstPid(join(dir, e.name), depth - 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** /var/log/pods/<namespace>_<name>_<uid> (upstream BuildPodLogsDirectory). */
export function podLogsDirectory(podLogsDir: string, ref: { namespace: string; name: string; uid: string }): string {
  return join(podLogsDir, `${ref.namespace}_${ref.name}_${ref.uid}`);
}

/** <rootDir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<volume> (upstream emptyDir plugin path). */
export function emptyDirPath(rootDir: string, uid: string, volume: string): string {
  return join(rootDir, "pods", uid, "volumes", EMPTY_DIR_PLUGIN_DIR, volume);
}

/** Pure: used bytes/inodes on a filesystem whose capacity/free figures come from `fs` (its statfs). */
export function fsUsage(fs: FsStats | undefined, used: { usedBytes: number; inodesUsed: number }, time: string): FsStats {
  const out: FsStats = { time, usedBytes: used.usedBytes, inodesUsed: used.inodesUsed };
  if (fs) {
    if (fs.availableBytes !== undefined) out.availableBytes = fs.availableBytes;
    if (fs.capacityBytes !== undefined) out.capacityBytes = fs.capacityBytes;
    if (fs.inodesFree !== undefined) out.inodesFree = fs.inodesFree;
    if (fs.inodes !== undefined) out.inodes = fs.inodes;
  }
  return out;
}

const add = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : a + b);

/**
 * Pure: the pod's ephemeral-storage as upstream calcEphemeralStorage: every container's rootfs
 * (writable layer) and logs, the local ephemeral volumes (disk emptyDirs; a `medium: Memory`
 * emptyDir is RAM and is left out), and pod-level log files; capacity/free of the nodefs. Log inodes
 * count too (the CRI stats provider measures them exactly).
 */
export function ephemeralStorage(
  containers: readonly ContainerStats[],
  diskVolumes: readonly VolumeStats[],
  podLogs: FsStats | undefined,
  nodefs: FsStats | undefined,
  time: string,
): FsStats {
  const out = fsUsage(nodefs, { usedBytes: 0, inodesUsed: 0 }, time);
  let used: number | undefined;
  let inodes: number | undefined;
  for (const c of containers) {
    used = add(add(used, c.rootfs?.usedBytes), c.logs?.usedBytes);
    inodes = add(add(inodes, c.rootfs?.inodesUsed), c.logs?.inodesUsed);
  }
  for (const v of diskVolumes) {
    used = add(used, v.usedBytes);
    inodes = add(inodes, v.inodesUsed);
  }
  used = add(used, podLogs?.usedBytes);
  inodes = add(inodes, podLogs?.inodesUsed);
  out.usedBytes = used ?? 0;
  out.inodesUsed = inodes ?? 0;
  return out;
}
