// Orphaned pod directories (upstream kubelet_volumes.go cleanupOrphanedPodDirs, podVolumesExist and
// removeOrphanedPodVolumeDirs, run by HandlePodCleanups): a <rootDir>/pods/<uid> whose pod no source
// wants, no worker knows and the runtime does not run — left by a crash, or by a pod deleted while
// bunlet was down after its containers were gone — is removed at housekeeping, once sources are ready.
// A directory with anything still mounted under it stays and is reported (once while it stays so);
// CSI volumes' vol_data.json are handed to the CSI teardown first (NodeUnpublishVolume, and
// NodeUnstageVolume when unused: what upstream's volume manager does for a volume reconstructed from
// disk), so a staged volume is not left without the file that names it. The removal never crosses a
// mount or follows a symlink (volumes/removeall.ts); the file-system calls are injected and async.
import { lstat, readdir, realpath, rmdir, unlink } from "node:fs/promises";
import { kv, log } from "../log.ts";
import { podUidError } from "./pod-dir.ts";
import { CSI_POD_PLUGIN_DIR, VOL_DATA_FILE } from "./volumes/csi/csi-util.ts";
import { mountPointsUnder, readMountInfo } from "./volumes/mount-points.ts";
import { removeAllOneFilesystem, type RemovalFs } from "./volumes/removeall.ts";

/** The file-system calls of the cleanup. */
export interface PodDirsFs extends RemovalFs {
  /** The names of the directories (not symlinks) in `path`. */
  listDirs(path: string): Promise<string[]>;
  realpath(path: string): Promise<string>;
  /** /proc/self/mountinfo's text. */
  mountInfo(): Promise<string>;
}

export const nodePodDirsFs: PodDirsFs = {
  lstat: (p) => lstat(p),
  readdir: (p) => readdir(p),
  unlink: (p) => unlink(p),
  rmdir: (p) => rmdir(p),
  listDirs: async (p) => (await readdir(p, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name),
  realpath: (p) => realpath(p),
  mountInfo: readMountInfo,
};

/** The pod directories no pod known to the kubelet owns (a name that cannot be a pod UID is not ours). */
export function orphanedPodUids(onDisk: readonly string[], wanted: (uid: string) => boolean): string[] {
  return onDisk.filter((uid) => podUidError(uid) === undefined && !wanted(uid));
}

export type OrphanVerdict = { action: "keep"; reason: string } | { action: "tear-down-csi" } | { action: "remove" };

/** What one orphan's directory gets, from what is mounted under it and its CSI volumes' data files. */
export function orphanVerdict(o: { mountedPaths: readonly string[]; csiVolumeData: number; csiTearDown: boolean }): OrphanVerdict {
  // upstream podVolumesExist: "volumes are still mounted on disk" keeps the directory (data would be lost).
  if (o.mountedPaths.length > 0) return { action: "keep", reason: "orphaned pod found, but volumes are still mounted on disk" };
  if (o.csiVolumeData > 0 && o.csiTearDown) return { action: "tear-down-csi" };
  return { action: "remove" };
}

export interface OrphanedPodDirsDeps {
  rootDir: string;
  fs?: PodDirsFs;
  /** Unpublishes (and unstages) the pod's CSI volumes from their vol_data.json (CSIVolumeManager.tearDownPod). */
  tearDownCSIVolumes?: (uid: string) => Promise<void>;
}

/** One pass's figures (upstream orphan_pod_cleaned_volumes and orphan_pod_cleaned_volumes_errors). */
export interface OrphanCleanupResult {
  orphans: number;
  errors: number;
  removed: string[];
}

export interface OrphanedPodDirs {
  /**
   * Removes the orphaned pod directories. `wanted` (pod manager, workers) is asked again just before
   * each removal; `runningPodUids` (a fresh runtime listing) only when there is a candidate.
   */
  cleanup(wanted: (uid: string) => boolean, runningPodUids: () => Promise<ReadonlySet<string>>): Promise<OrphanCleanupResult>;
}

const isNotFound = (e: unknown) => (e as NodeJS.ErrnoException).code === "ENOENT";

/** Whether `path` is a directory itself, not a symlink to one (false when missing). */
async function isRealDir(fs: PodDirsFs, path: string): Promise<boolean> {
  try {
    const st = await fs.lstat(path);
    return st.isDirectory() && !st.isSymbolicLink();
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

/**
 * The number of CSI volumes of the pod directory that still have their vol_data.json. A symlinked
 * volumes/ or plugin directory is none: the teardown would follow it out of the pod directory.
 */
async function csiVolumeData(fs: PodDirsFs, dir: string): Promise<number> {
  const csiDir = `${dir}/volumes/${CSI_POD_PLUGIN_DIR}`;
  if (!(await isRealDir(fs, `${dir}/volumes`)) || !(await isRealDir(fs, csiDir))) return 0;
  const names = await fs.listDirs(csiDir);
  let n = 0;
  for (const name of names) {
    const st = await fs.lstat(`${csiDir}/${name}/${VOL_DATA_FILE}`).catch(() => undefined);
    if (st && !st.isDirectory() && !st.isSymbolicLink()) n++;
  }
  return n;
}

export function createOrphanedPodDirs(d: OrphanedPodDirsDeps): OrphanedPodDirs {
  const fs = d.fs ?? nodePodDirsFs;
  /** The last report of each orphan kept, so a directory that stays is logged once, not every 2 s. */
  const reported = new Map<string, string>();
  const report = (uid: string, reason: string, fields: Record<string, unknown>) => {
    const line = `${reason} ${kv({ podUID: uid, ...fields })}`;
    if (reported.get(uid) !== line) log.warn(line);
    reported.set(uid, line);
  };

  /** One orphan: true once its directory is gone; after a CSI teardown (`csiTornDown`) what is left is only checked and removed. */
  async function cleanupOne(uid: string, podsDir: string, podsDev: number, mountinfo: string, csiTornDown = false): Promise<boolean> {
    const dir = `${podsDir}/${uid}`;
    const mountedPaths = mountPointsUnder(dir, mountinfo);
    const csiTearDown = d.tearDownCSIVolumes !== undefined && !csiTornDown;
    const csi = csiTearDown && mountedPaths.length === 0 ? await csiVolumeData(fs, dir) : 0;
    const verdict = orphanVerdict({ mountedPaths, csiVolumeData: csi, csiTearDown });
    if (verdict.action === "keep") {
      report(uid, verdict.reason, { paths: mountedPaths.join(",") });
      return false;
    }
    if (verdict.action === "tear-down-csi") {
      try {
        await d.tearDownCSIVolumes!(uid);
      } catch (e) {
        report(uid, "orphaned pod found, but its CSI volumes are not torn down", { error: (e as Error).message });
        return false;
      }
      // The driver's calls took time: what is mounted is read again, and anything there keeps the directory.
      return cleanupOne(uid, podsDir, podsDev, await fs.mountInfo(), true);
    }
    // Nothing is mounted under dir by mountinfo; removeAllOneFilesystem still refuses another st_dev.
    const errors = await removeAllOneFilesystem(fs, dir, podsDev, new Set(mountedPaths));
    if (errors.length > 0) {
      report(uid, "orphaned pod found, but error occurred when trying to remove the pod directory", { errors: errors.join("; ") });
      return false;
    }
    log.info(`cleaned up orphaned pod directory ${kv({ podUID: uid, path: dir })}`);
    return true;
  }

  return {
    async cleanup(wanted, runningPodUids) {
      const result: OrphanCleanupResult = { orphans: 0, errors: 0, removed: [] };
      let podsDir: string;
      let candidates: string[];
      try {
        podsDir = await fs.realpath(`${d.rootDir}/pods`);
        candidates = orphanedPodUids(await fs.listDirs(podsDir), wanted);
      } catch (e) {
        if (isNotFound(e)) return result;
        throw e;
      }
      for (const uid of reported.keys()) if (!candidates.includes(uid)) reported.delete(uid);
      if (candidates.length === 0) return result;
      const running = await runningPodUids();
      const orphans = candidates.filter((uid) => !running.has(uid));
      const [mountinfo, podsStat] = await Promise.all([fs.mountInfo(), fs.lstat(podsDir)]);
      for (const uid of orphans) {
        if (wanted(uid)) continue; // a pod (re)appeared while this pass awaited
        result.orphans++;
        // mountinfo names canonical paths: podsDir is one (realpath above).
        if (await cleanupOne(uid, podsDir, podsStat.dev, mountinfo)) {
          result.removed.push(uid);
          reported.delete(uid);
        } else result.errors++;
      }
      return result;
    },
  };
}
