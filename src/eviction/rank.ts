// Ranking pods for eviction (docs/eviction-contract.md#ranking-pods). Sort keys are computed once per pod (the
// comparison then costs nothing per pair), and the sort is stable: ties keep the active-pods order
// where upstream's unstable sort would pick at random.
import type { PodLike, VolumeLike } from "../pod/pod-like.ts";
import { getPodQOS, type QOSClass } from "../pod/qos.ts";
import type { FsStats, PodStats } from "../stats/summary.ts";
import { podRequest } from "../pod/pod-resources.ts";
import type { Signal } from "./signals.ts";

export interface FsLayout {
  /** imagefs is a different device from nodefs. */
  dedicatedImageFs: boolean;
  /** writable layers (containerfs) are apart from images (KEP-4191). */
  splitContainerImageFs: boolean;
}

export type FsStatsType = "root" | "logs" | "localVolumeSource" | "images";
export type StatsFunc = (pod: PodLike) => PodStats | undefined;

export interface RankedPod {
  pod: PodLike;
  /** Stats were found for the pod (missing ones rank first, as upstream's comparators). */
  found: boolean;
  priority: number;
  /** Usage of the ranked resource (bytes, inodes or processes); 0 when unknown. */
  usage: number;
  /** Request subtracted from usage (memory or ephemeral-storage bytes; see the inode quirk). */
  request: number;
  exceedsRequest: boolean;
  /** Computed on first read: only the victim and `explain` need it. */
  readonly qos: QOSClass;
}

function ranked(pod: PodLike, found: boolean, priority: number, usage: number, request: number, exceedsRequest: boolean): RankedPod {
  let qos: QOSClass | undefined;
  return {
    pod,
    found,
    priority,
    usage,
    request,
    exceedsRequest,
    get qos() {
      return (qos ??= getPodQOS(pod));
    },
  };
}

type SortKey = number[];

const priorityOf = (p: PodLike): number => p.spec.priority ?? 0;

function fsUsed(fs: FsStats | undefined, inodes: boolean): number {
  if (!fs) return 0;
  return (inodes ? fs.inodesUsed : fs.usedBytes) ?? 0;
}

/** Volumes that live on the node's disk: hostPath, gitRepo, configMap, disk-backed emptyDir. */
export function isLocalVolume(v: VolumeLike): boolean {
  return !!(v.gitRepo || v.configMap || v.hostPath || (v.emptyDir && v.emptyDir.medium !== "Memory"));
}

/** podDiskUsage: bytes or inodes summed over the selected stat kinds. */
export function podDiskUsage(pod: PodLike, stats: PodStats, kinds: readonly FsStatsType[], inodes: boolean): number {
  let total = 0;
  for (const c of stats.containers ?? []) {
    if (kinds.includes("root")) total += fsUsed(c.rootfs, inodes);
    if (kinds.includes("logs")) total += fsUsed(c.logs, inodes);
  }
  if (kinds.includes("localVolumeSource")) {
    const local = new Set((pod.spec.volumes ?? []).filter(isLocalVolume).map((v) => v.name));
    for (const v of stats.volume ?? []) if (local.has(v.name)) total += fsUsed(v, inodes);
  }
  return total;
}

/** Which stat kinds a disk signal measures in a layout (docs/eviction-contract.md#disk-ranking). */
export function fsStatsToMeasure(signal: Signal, layout: FsLayout): FsStatsType[] {
  const family = signal.split(".")[0];
  const { dedicatedImageFs: dedicated, splitContainerImageFs: split } = layout;
  const nodefs: FsStatsType[] = !dedicated
    ? ["images", "root", "logs", "localVolumeSource"]
    : split
      ? ["logs", "localVolumeSource", "root"]
      : ["logs", "localVolumeSource"];
  const imagefs: FsStatsType[] = !dedicated ? ["images", "root", "logs", "localVolumeSource"] : split ? ["images"] : ["root", "images"];
  if (family === "nodefs") return nodefs;
  if (family === "imagefs") return imagefs;
  // containerfs follows nodefs except in the image-fs layout, where writable layers sit on imagefs.
  return dedicated && !split ? imagefs : nodefs;
}

function rankBy(pods: readonly PodLike[], stats: StatsFunc, build: (p: PodLike, s: PodStats | undefined) => { r: RankedPod; key: SortKey }): RankedPod[] {
  const rows = pods.map((p) => build(p, stats(p)));
  rows.sort((a, b) => {
    for (let i = 0; i < a.key.length; i++) {
      const d = a.key[i]! - b.key[i]!;
      if (d !== 0) return d;
    }
    return 0;
  });
  return rows.map((x) => x.r);
}

/** Memory: exceeds request first, then priority ascending, then overage descending (upstream rankMemoryPressure). */
export function rankMemoryPressure(pods: readonly PodLike[], stats: StatsFunc): RankedPod[] {
  return rankBy(pods, stats, (pod, s) => {
    const found = s !== undefined;
    const usage = s?.memory?.workingSetBytes ?? 0;
    const request = podRequest(pod, "memory");
    const exceeds = found && usage > request;
    const priority = priorityOf(pod);
    const r = ranked(pod, found, priority, usage, request, exceeds);
    return { r, key: found ? [1, exceeds ? 0 : 1, priority, request - usage] : [0, 0, priority, 0] };
  });
}

/**
 * Disk (bytes or inodes): exceeds request first, priority, then usage − ephemeral-storage request
 * descending. For inodes the "request" is 0 (none exists) but the overage still subtracts the
 * byte request — upstream's quirk, kept for compatibility (upstream rankDiskPressureFunc).
 */
export function rankDiskPressure(kinds: readonly FsStatsType[], inodes: boolean) {
  return (pods: readonly PodLike[], stats: StatsFunc): RankedPod[] =>
    rankBy(pods, stats, (pod, s) => {
      const found = s !== undefined;
      const usage = s ? podDiskUsage(pod, s, kinds, inodes) : 0;
      const storageRequest = podRequest(pod, "ephemeral-storage");
      const request = inodes ? 0 : storageRequest;
      const exceeds = found && usage > request;
      const priority = priorityOf(pod);
      const r = ranked(pod, found, priority, usage, storageRequest, exceeds);
      return { r, key: found ? [1, exceeds ? 0 : 1, priority, storageRequest - usage] : [0, 0, priority, 0] };
    });
}

/** PID: priority ascending, then process count descending, missing stats first (upstream rankPIDPressure). */
export function rankPIDPressure(pods: readonly PodLike[], stats: StatsFunc): RankedPod[] {
  return rankBy(pods, stats, (pod, s) => {
    const found = s !== undefined;
    const usage = s?.process_stats?.process_count ?? 0;
    const priority = priorityOf(pod);
    const r = ranked(pod, found, priority, usage, 0, false);
    return { r, key: [priority, found ? 1 : 0, -usage] };
  });
}

export type RankFunc = (pods: readonly PodLike[], stats: StatsFunc) => RankedPod[];

export function rankFuncFor(signal: Signal, layout: FsLayout): RankFunc {
  if (signal === "memory.available" || signal === "allocatableMemory.available") return rankMemoryPressure;
  if (signal === "pid.available") return rankPIDPressure;
  return rankDiskPressure(fsStatsToMeasure(signal, layout), signal.endsWith(".inodesFree"));
}
