// Orphaned pod directories (upstream kubelet_volumes.go cleanupOrphanedPodDirs, podVolumesExist and
// removeOrphanedPodVolumeDirs, run by HandlePodCleanups): a <rootDir>/pods/<uid> whose pod no source
// wants, no worker knows and the runtime does not run — left by a crash, or by a pod deleted while
// bunlet was down after its containers were gone — is removed at housekeeping, once sources are ready.
// Its volumes still mounted, CSI volumes with a vol_data.json, or raw block volumes (their device links:
// a global map file and loop device may hold the device), are first torn down from the disk
// alone (volumemanager/orphan-volumes.ts: what upstream's volume manager does for volumes it
// reconstructs after a restart); anything still mounted after that keeps the directory, reported (once
// while it stays so). The removal never crosses a mount or follows a symlink (volumes/removeall.ts);
// the file-system calls are injected and async.
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

export type OrphanVerdict = { action: "keep"; reason: string } | { action: "tear-down" } | { action: "remove" };

/**
 * What one orphan's directory gets, from what is mounted under it, its CSI volumes' data files, whether
 * its volumes can be torn down (not yet tried in this pass) and the error of a teardown that failed.
 */
export function orphanVerdict(o: {
  mountedPaths: readonly string[];
  csiVolumeData: number;
  blockVolumes?: number;
  tearDown: boolean;
  tearDownError?: string;
}): OrphanVerdict {
  if (o.tearDown && (o.mountedPaths.length > 0 || o.csiVolumeData > 0 || (o.blockVolumes ?? 0) > 0)) return { action: "tear-down" };
  // upstream podVolumesExist: "volumes are still mounted on disk" keeps the directory (data would be lost).
  if (o.mountedPaths.length > 0) return { action: "keep", reason: "orphaned pod found, but volumes are still mounted on disk" };
  // A volume the driver did not unpublish keeps its vol_data.json, and with it the directory, until it does.
  if (o.tearDownError !== undefined) return { action: "keep", reason: "orphaned pod found, but volumes are not torn down" };
  return { action: "remove" };
}

export interface OrphanedPodDirsDeps {
  rootDir: string;
  fs?: PodDirsFs;
  /**
   * Tears down the volumes of the pod whose canonical directory is given, from the disk alone
   * (volumemanager createOrphanVolumeTearDown); throws what it could not do.
   */
  tearDownVolumes?: (uid: string, podDir: string) => Promise<void>;
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

/** The number of raw block volumes of the pod directory: the entries of volumeDevices/<plugin>/ (real directories only). */
async function blockVolumes(fs: PodDirsFs, dir: string): Promise<number> {
  const devicesDir = `${dir}/volumeDevices`;
  if (!(await isRealDir(fs, devicesDir))) return 0;
  let n = 0;
  for (const plugin of await fs.listDirs(devicesDir)) n += (await fs.readdir(`${devicesDir}/${plugin}`)).length;
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

  /** One orphan: true once its directory is gone; after a teardown (`tearDownError` set, "" when it succeeded) what is left is only checked and removed. */
  async function cleanupOne(uid: string, podsDir: string, podsDev: number, mountinfo: string, tearDownError?: string): Promise<boolean> {
    const dir = `${podsDir}/${uid}`;
    const mountedPaths = mountPointsUnder(dir, mountinfo);
    const tearDown = d.tearDownVolumes !== undefined && tearDownError === undefined;
    const csi = tearDown ? await csiVolumeData(fs, dir) : 0;
    const block = tearDown ? await blockVolumes(fs, dir) : 0;
    const verdict = orphanVerdict({ mountedPaths, csiVolumeData: csi, blockVolumes: block, tearDown, tearDownError: tearDownError || undefined });
    if (verdict.action === "keep") {
      report(uid, verdict.reason, { paths: mountedPaths.join(",") || undefined, error: tearDownError || undefined });
      return false;
    }
    if (verdict.action === "tear-down") {
      let error = "";
      try {
        await d.tearDownVolumes!(uid, dir);
      } catch (e) {
        error = (e as Error).message;
      }
      // The unmounts and the drivers' calls took time: what is mounted is read again, and anything there keeps the directory.
      return cleanupOne(uid, podsDir, podsDev, await fs.mountInfo(), error);
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
