// A pod's persistent volumes in the Summary API (upstream pkg/kubelet/stats volume_stat_calculator.go
// for the volumes whose plugin has metrics): a claim's local PV by statfs of its bind mount (upstream
// MetricsStatFS), a claim's CSI PV and an inline CSI volume by the driver's NodeGetVolumeStats (upstream
// metrics_csi.go); a claim's raw block volume (upstream ListBlockVolumesForPod) by its device's size
// (upstream MetricsBlock, ../pod/volumes/metrics-block.ts) for a local PV and by NodeGetVolumeStats for a
// CSI PV; a claim's volumes carry their `pvcRef`. hostPath PVs have none (upstream MetricsNil).
// Computed at most once per volumeStatsAggPeriod per pod, in the background, as upstream's per-pod
// calculators: a summary never waits on a driver longer than the first computation's 250 ms (the
// eviction manager's summaries must not hang on a stuck driver); the latest figures also feed
// kubelet_volume_stats_*.
import { statfs } from "node:fs/promises";
import { join } from "node:path";
import type { Clock } from "../clock.ts";
import type { PodLike } from "../pod/pod-like.ts";
import { podVolumeDeviceDir } from "../pod/volumes/block-volume.ts";
import { volumeClaimSource, type ClaimedVolume, type VolumeClaimSource } from "../pod/volumes/index.ts";
import { LOCAL_VOLUME_PLUGIN_DIR } from "../pod/volumes/local-volume.ts";
import { blockDeviceBytes } from "../pod/volumes/metrics-block.ts";
import type { VolumeUsage } from "../pod/volumes/csi/index.ts";
import type { VolumeStats } from "./summary.ts";

/** Usage figures of a volume, as FsStats has them. */
export type VolumeUsageFigures = Omit<VolumeStats, "name" | "time" | "pvcRef">;

export interface VolumeStatCalculatorDeps {
  rootDir: string;
  clock: Pick<Clock, "now">;
  /** volumeStatsAggPeriod: how long a pod's figures are served before they are computed again. */
  periodMs: number;
  /** The PVs of the pod's claims as its last sync resolved them; undefined once the pod is gone. */
  claims: (uid: string) => ReadonlyMap<string, ClaimedVolume | Error> | undefined;
  /** NodeGetVolumeStats of the pod's published CSI volume (csi-mounter volumeStats). */
  csiVolumeStats?: (podUid: string, specVolID: string) => Promise<VolumeUsage[] | undefined>;
  /** NodeGetVolumeStats of the pod's published CSI Block PV (csi-mounter blockVolumeStats). */
  csiBlockVolumeStats?: (podUid: string, specVolID: string) => Promise<VolumeUsage[] | undefined>;
  /** The bytes of the block device a pod's link names (metrics-block.ts blockDeviceBytes). */
  blockDeviceBytes?: (path: string) => Promise<number>;
  /** A volume's figures could not be read. */
  onError?: (message: string) => void;
}

export interface VolumeStatCalculator {
  /** The pod's persistent and CSI volumes' stats (cached up to periodMs; the first time waits for them). */
  podVolumeStats(pod: PodLike, uid: string): Promise<VolumeStats[]>;
  /** The latest figures of every claim's volume, for kubelet_volume_stats_*. */
  claimStats(): VolumeStats[];
  /** Resolves once the background refreshes under way have finished. */
  settled(): Promise<void>;
}

/** upstream MetricsStatFS getFsInfo: capacity, available and used bytes and the inodes of a mounted file system. */
export async function statfsFigures(path: string): Promise<VolumeUsageFigures> {
  const s = await statfs(path);
  return {
    capacityBytes: s.blocks * s.bsize,
    availableBytes: s.bavail * s.bsize,
    usedBytes: (s.blocks - s.bfree) * s.bsize,
    inodes: s.files,
    inodesFree: s.ffree,
    inodesUsed: s.files - s.ffree,
  };
}

/** upstream getMetricsFromNodeVolumeStats: BYTES and INODES entries; undefined when there is neither. */
export function csiUsageFigures(usage: readonly VolumeUsage[]): VolumeUsageFigures | undefined {
  let out: VolumeUsageFigures | undefined;
  for (const u of usage) {
    if (u.unit === "BYTES") out = { ...out, availableBytes: u.available, capacityBytes: u.total, usedBytes: u.used };
    else if (u.unit === "INODES") out = { ...out, inodesFree: u.available, inodes: u.total, inodesUsed: u.used };
  }
  return out;
}

/**
 * upstream parsePodVolumeStats of MetricsBlock's figures: the device's capacity, and the figures a block
 * device does not have as 0, as upstream reports them.
 */
export function blockFigures(capacityBytes: number): VolumeUsageFigures {
  return { capacityBytes, availableBytes: 0, usedBytes: 0, inodes: 0, inodesFree: 0, inodesUsed: 0 };
}

/** How long a summary waits for a pod's first computation before going on without its figures. */
const FIRST_WAIT_MS = 250;

export function createVolumeStatCalculator(d: VolumeStatCalculatorDeps): VolumeStatCalculator {
  const cache = new Map<string, { atMs: number; stats: VolumeStats[]; refreshing?: Promise<VolumeStats[]> }>();
  const firstRuns = new Map<string, Promise<VolumeStats[]>>();

  async function csiFigures(uid: string, specVolID: string): Promise<VolumeUsageFigures | undefined> {
    const usage = await d.csiVolumeStats?.(uid, specVolID);
    return usage && csiUsageFigures(usage);
  }

  /** A Block PV's figures: a local PV's device through the pod's link, a CSI PV's by its driver; undefined when it is not mapped. */
  async function blockVolumeFigures(uid: string, claimed: ClaimedVolume): Promise<VolumeUsageFigures | undefined> {
    if (claimed.source.plugin === "kubernetes.io/csi") {
      const usage = await d.csiBlockVolumeStats?.(uid, claimed.pvName);
      return usage && csiUsageFigures(usage);
    }
    if (claimed.source.plugin !== "kubernetes.io/local-volume") return undefined;
    const link = join(podVolumeDeviceDir(d.rootDir, uid, LOCAL_VOLUME_PLUGIN_DIR), claimed.pvName);
    const bytes = await (d.blockDeviceBytes ?? blockDeviceBytes)(link).catch((e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") return undefined; // not mapped (yet, or any more): not listed, as upstream
      throw e;
    });
    return bytes === undefined ? undefined : blockFigures(bytes);
  }

  /** One volume's figures, undefined when its plugin has none. */
  function figures(uid: string, v: { name: string; csi?: unknown }, claim: VolumeClaimSource | undefined): Promise<VolumeUsageFigures | undefined> | undefined {
    if (v.csi) return csiFigures(uid, v.name);
    const claimed = claim && d.claims(uid)?.get(v.name);
    if (!claimed || claimed instanceof Error) return undefined;
    if (claimed.volumeMode === "Block") return blockVolumeFigures(uid, claimed);
    if (claimed.source.plugin === "kubernetes.io/local-volume")
      return statfsFigures(join(d.rootDir, "pods", uid, "volumes", LOCAL_VOLUME_PLUGIN_DIR, claimed.pvName));
    if (claimed.source.plugin === "kubernetes.io/csi") return csiFigures(uid, claimed.pvName);
    return undefined;
  }

  async function compute(pod: PodLike, uid: string): Promise<VolumeStats[]> {
    const out: VolumeStats[] = [];
    for (const v of pod.spec.volumes ?? []) {
      const claim = volumeClaimSource(pod.metadata.name, v);
      try {
        const f = await figures(uid, v, claim);
        if (!f) continue;
        const pvcRef = claim ? { pvcRef: { name: claim.claimName, namespace: pod.metadata.namespace ?? "" } } : {};
        out.push({ name: v.name, time: new Date(d.clock.now()).toISOString(), ...f, ...pvcRef });
      } catch (e) {
        d.onError?.(`volume stats of pod ${pod.metadata.namespace ?? ""}/${pod.metadata.name} volume ${v.name}: ${(e as Error).message}`);
      }
    }
    cache.set(uid, { atMs: d.clock.now(), stats: out });
    // A pod no summary asked for in two periods (and at least 5 minutes) is gone: its figures go too.
    for (const [u, e] of cache) if (d.clock.now() - e.atMs > Math.max(2 * d.periodMs, 300_000) + d.periodMs) cache.delete(u);
    return out;
  }

  return {
    async podVolumeStats(pod, uid) {
      // A volumeStatsAggPeriod of 0 or less turns the calculations off, as upstream.
      if (d.periodMs <= 0 || !(pod.spec.volumes ?? []).some((v) => v.csi || volumeClaimSource(pod.metadata.name, v))) return [];
      const hit = cache.get(uid);
      if (!hit) {
        let first = firstRuns.get(uid);
        if (!first) {
          first = compute(pod, uid).finally(() => firstRuns.delete(uid));
          firstRuns.set(uid, first);
        }
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), FIRST_WAIT_MS);
        });
        return ((await Promise.race([first, late]).finally(() => clearTimeout(timer))) ?? []) as VolumeStats[];
      }
      if (d.clock.now() - hit.atMs >= d.periodMs && !hit.refreshing)
        hit.refreshing = compute(pod, uid).catch(() => {
          hit.refreshing = undefined;
          return hit.stats;
        });
      return hit.stats;
    },
    async settled() {
      await Promise.all([...firstRuns.values(), ...[...cache.values()].map((e) => e.refreshing)]);
    },
    claimStats() {
      // Only pods still there (their claims known): a deleted pod's claim is no longer reported.
      return [...cache].flatMap(([uid, e]) => (d.claims(uid) ? e.stats.filter((s) => s.pvcRef) : []));
    },
  };
}
