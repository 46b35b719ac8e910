// The volumes of a pod that is gone, torn down from the disk alone (upstream's volume manager after a
// restart: reconstructVolumes puts what it finds under pods/<uid>/volumes into the actual state, and the
// reconciler unmounts the volumes no desired pod has — UnmountVolume, then UnmountDevice when no pod
// uses the device; cleanOrphanVolumes tries the ones it could not reconstruct). bunlet runs it from the
// orphaned pod directory sweep, which knows the pod is neither desired nor running: sub path bind mounts
// first (upstream CleanSubPaths), CSI volumes through their drivers (NodeUnpublishVolume, and
// NodeUnstageVolume when unused; a driver not registered yet fails it, retried at the next sweep), tmpfs
// and bind mounts unmounted, local raw block volumes' device links removed, then the node-wide mounts of
// local block devices and the global map files (with their loop devices) of local Block PVs no pod uses
// any more.
import { lstat, readdir, unlink } from "node:fs/promises";
import { UMOUNT_NOFOLLOW, umount2 } from "../../../ffi/fs.ts";
import { kv, log } from "../../log.ts";
import { VOL_DATA_FILE } from "../volumes/csi/csi-util.ts";
import { mountPointsUnder, readMountInfo } from "../volumes/mount-points.ts";
import type { EntryStat } from "../volumes/removeall.ts";
import { cleanSubPaths } from "../volumes/subpath-bind.ts";
import { type PodVolume, unescapeQualifiedName, VOLUME_DIRS, volumeTearDownPlan } from "./reconstruct.ts";

/** The file-system and mount calls of the teardown. */
export interface OrphanVolumesFs {
  lstat(path: string): Promise<EntryStat>;
  readdir(path: string): Promise<string[]>;
  /** /proc/self/mountinfo's text. */
  mountInfo(): Promise<string>;
  /** Unmounts one mount point (never following a symlink at its end). */
  unmount(path: string): Promise<void>;
  /** Removes a file or symlink (never what a symlink names). */
  unlink(path: string): Promise<void>;
}

export const nodeOrphanVolumesFs: OrphanVolumesFs = {
  lstat: (p) => lstat(p),
  readdir: (p) => readdir(p),
  mountInfo: readMountInfo,
  unmount: async (p) => umount2(p, UMOUNT_NOFOLLOW),
  unlink: (p) => unlink(p),
};

/** upstream reconstruct_volume_operations_total and force_cleaned_failed_volume_operations_total (+ errors). */
export interface VolumeReconstructionMetrics {
  reconstructed(failed: boolean): void;
  forceCleaned(failed: boolean): void;
}

export interface OrphanVolumeTearDownDeps {
  fs?: OrphanVolumesFs;
  /** Unpublishes (and unstages) the pod's CSI volumes from their vol_data.json (CSIVolumeManager.tearDownPod). */
  tearDownCSIVolumes?: (podUid: string) => Promise<void>;
  /** upstream UnmountDevice and UnmapDevice of local PVs: the node-wide mounts of block devices and the global map files no pod uses any more. */
  unmountUnusedLocalDevices?: () => void | Promise<void>;
  /** Unmounts the pod's sub path bind mounts (volumes/subpath-bind.ts cleanSubPaths). */
  cleanSubPaths?: (podDir: string) => void;
  metrics?: VolumeReconstructionMetrics;
}

/** Tears down the volumes of the pod whose canonical directory is `podDir`; throws what it could not do. */
export type OrphanVolumeTearDown = (podUid: string, podDir: string) => Promise<void>;

async function isRealDir(fs: OrphanVolumesFs, path: string): Promise<boolean> {
  const st = await fs.lstat(path).catch(() => undefined);
  return st?.isDirectory() === true && !st.isSymbolicLink();
}

/**
 * upstream getVolumesFromPodDir for one pod: every <podDir>/{volumes,volumeDevices}/<plugin>/<name>.
 * A symlinked volumes or plugin directory is skipped: its volumes would lie outside the pod's directory.
 */
export async function getVolumesFromPodDir(fs: OrphanVolumesFs, podDir: string, podUid: string): Promise<PodVolume[]> {
  const out: PodVolume[] = [];
  for (const volumeMode of ["Filesystem", "Block"] as const) {
    const volumesDir = `${podDir}/${VOLUME_DIRS[volumeMode]}`;
    if (!(await isRealDir(fs, volumesDir))) continue;
    for (const plugin of await fs.readdir(volumesDir)) {
      const pluginDir = `${volumesDir}/${plugin}`;
      if (!(await isRealDir(fs, pluginDir))) continue;
      for (const name of await fs.readdir(pluginDir))
        out.push({ podUid, volumeSpecName: name, volumePath: `${pluginDir}/${name}`, pluginName: unescapeQualifiedName(plugin), volumeMode });
    }
  }
  return out;
}

/** Whether a CSI volume's vol_data.json is there (a regular file). */
async function hasVolumeData(fs: OrphanVolumesFs, v: PodVolume): Promise<boolean> {
  if (v.pluginName !== "kubernetes.io/csi") return false;
  const st = await fs.lstat(`${v.volumePath}/${VOL_DATA_FILE}`).catch(() => undefined);
  return st !== undefined && !st.isDirectory() && !st.isSymbolicLink();
}

export function createOrphanVolumeTearDown(d: OrphanVolumeTearDownDeps): OrphanVolumeTearDown {
  const fs = d.fs ?? nodeOrphanVolumesFs;
  const subPaths = d.cleanSubPaths ?? cleanSubPaths;
  /** Volumes counted as reconstructed (upstream reconstructs once, at start; a retried teardown is not counted again). */
  const counted = new Set<string>();

  /** One unmount; logged as upstream's UnmountVolume.TearDown. */
  async function unmount(podUid: string, mp: string, volumes: readonly PodVolume[], errors: string[]): Promise<void> {
    const v = volumes.find((x) => mp === x.volumePath || mp.startsWith(`${x.volumePath}/`));
    const fields = { podUID: podUid, volumeSpecName: v?.volumeSpecName, pluginName: v?.pluginName, path: mp };
    try {
      await fs.unmount(mp);
      log.info(`UnmountVolume.TearDown succeeded for volume ${kv(fields)}`);
    } catch (e) {
      log.warn(`UnmountVolume.TearDown failed for volume ${kv({ ...fields, error: (e as Error).message })}`);
      errors.push(`unmount ${mp}: ${(e as Error).message}`);
    }
  }

  return async (podUid, podDir) => {
    const errors: string[] = [];
    try {
      subPaths(podDir);
    } catch (e) {
      errors.push((e as Error).message);
    }
    const volumes = await getVolumesFromPodDir(fs, podDir, podUid);
    const withData = new Set<PodVolume>();
    for (const v of volumes) if (await hasVolumeData(fs, v)) withData.add(v);
    const plan = volumeTearDownPlan(volumes, (v) => withData.has(v), mountPointsUnder(podDir, await fs.mountInfo()));
    // Reconstruction is reported once per volume (upstream does it once, at start); a retry only retries.
    const fresh = new Set(volumes.filter((v) => !counted.has(v.volumePath)));
    for (const v of fresh) {
      counted.add(v.volumePath);
      d.metrics?.reconstructed(plan.failed.some((f) => f.volume === v));
    }
    for (const f of plan.failed) {
      const first = fresh.has(f.volume);
      if (first) log.info(`Could not construct volume information ${kv({ podName: podUid, volumeSpecName: f.volume.volumeSpecName, err: f.error })}`);
      if (f.mounts.length === 0) continue;
      // upstream cleanOrphanVolumes: UnmountVolume by the plugin's name, which needs what is missing here.
      if (first) {
        log.info(`Cleaning up mounts for volume that could not be reconstructed ${kv({ podName: podUid, volumeSpecName: f.volume.volumeSpecName })}`);
        d.metrics?.forceCleaned(true);
      }
      errors.push(`volume ${f.volume.volumeSpecName} (${f.volume.pluginName}) could not be reconstructed: ${f.error}`);
    }
    if (plan.csi && d.tearDownCSIVolumes) await d.tearDownCSIVolumes(podUid).catch((e: Error) => errors.push(e.message));
    for (const mp of plan.unmount) await unmount(podUid, mp, volumes, errors);
    for (const link of plan.unmap) {
      await fs.unlink(link).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "ENOENT") errors.push(`unmap ${link}: ${e.message}`);
      });
    }
    if (plan.localVolumes && d.unmountUnusedLocalDevices) {
      try {
        await d.unmountUnusedLocalDevices();
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    if (fresh.size > 0) log.info(`Volume reconstruction finished ${kv({ podUID: podUid, volumes: volumes.length, failed: plan.failed.length })}`);
    if (errors.length > 0) throw new Error(`pod ${podUid}: volumes not torn down: ${errors.join("; ")}`);
  };
}
