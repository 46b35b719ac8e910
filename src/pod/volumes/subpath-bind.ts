// The sub path a runtime mounts (upstream pkg/volume/util/subpath/subpath_linux.go doBindSubPath,
// safeOpenSubPath, prepareSubpathTarget, doCleanSubPaths): the checked sub path is opened component
// by component without following symlinks (safe-open.ts), and the inode that fd holds is
// bind-mounted through /proc/self/fd/N onto a kubelet-owned target,
// <podDir>/volume-subpaths/<volume>/<container>/<volumeMount index>. The runtime gets that target:
// a container that swaps a component for a symlink after the check changes nothing it mounts.
// The targets stay mounted across container restarts and go when the pod is removed (cleanSubPaths).
import { existsSync, lstatSync, mkdirSync, realpathSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { close } from "../../../ffi/libc.ts";
import { AT_FDCWD, AT_SYMLINK_NOFOLLOW, fstat, MS_BIND, mount, S_IFDIR, S_IFMT, statx, UMOUNT_NOFOLLOW, umount2, type FileStat } from "../../../ffi/fs.ts";
import { kv, log } from "../../log.ts";
import { mountPointsUnder } from "./mount-points.ts";
import { safeOpen } from "./safe-open.ts";
import { prepareSubPath } from "./subpath.ts";

export const VOLUME_SUBPATHS_DIR = "volume-subpaths";

export interface SubPathRequest {
  /** Host path of the volume (may be a symlink: upstream evaluates it once). */
  volumePath: string;
  /** volumeMounts[].subPath, or subPathExpr expanded. */
  subPath: string;
  /** <rootDir>/pods/<uid>. */
  podDir: string;
  /** volumeMounts[].name, the volume's name. */
  volumeName: string;
  containerName: string;
  /** The mount's index in the container's volumeMounts. */
  volumeMountIndex: number;
}

/** upstream getSubpathBindTarget. */
export function subPathBindTarget(podDir: string, volumeName: string, containerName: string, volumeMountIndex: number): string {
  return join(podDir, VOLUME_SUBPATHS_DIR, volumeName, containerName, String(volumeMountIndex));
}

const sameFile = (a: FileStat, b: FileStat) => a.ino === b.ino && a.dev === b.dev;
const statNoFollow = (path: string) => statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW);
const isMountPoint = (path: string) => mountPointsUnder(path).includes(path);

/** An empty leftover target of the other file type (the sub path changed type) is removed. */
function removeStaleTarget(target: string, wantDir: boolean): void {
  if (!existsSync(target)) return;
  const st = lstatSync(target);
  if (st.isDirectory() === wantDir && !st.isSymbolicLink()) return;
  if (st.isDirectory()) rmdirSync(target);
  else unlinkSync(target);
}

/**
 * upstream prepareSubpathTarget + the bind of doBindSubPath: `target` ends up a bind mount of what
 * `fd` holds. A target already mounted with that very inode is kept (a container restart); one
 * mounted with anything else is unmounted first.
 */
function bindHeldFd(fd: number, requested: string): void {
  const held = fstat(fd);
  mkdirSync(dirname(requested), { recursive: true, mode: 0o750 });
  // mountinfo names canonical paths: a rootDir reached through a symlink must still find its mounts.
  const target = join(realpathSync(dirname(requested)), basename(requested));
  if (isMountPoint(target)) {
    if (sameFile(statNoFollow(target), held)) return;
    umount2(target, UMOUNT_NOFOLLOW);
  }
  const isDir = (held.mode & S_IFMT) === S_IFDIR;
  removeStaleTarget(target, isDir);
  // A file is enough for every non-directory type: the bind mount replaces what it shows.
  if (isDir) mkdirSync(target, { recursive: true, mode: 0o750 });
  else writeFileSync(target, "", { mode: 0o640, flag: "a" });
  mount(`/proc/self/fd/${fd}`, target, null, MS_BIND);
  if (!sameFile(statNoFollow(target), held)) {
    umount2(target, UMOUNT_NOFOLLOW);
    throw new Error(`bind mount of the held sub path did not land on ${target}`);
  }
}

/**
 * upstream PrepareSafeSubpath: the host path to hand the runtime for `req`'s sub path — a
 * kubelet-owned bind mount of the checked inode. Errors are upstream's (the detail, which names host
 * paths, goes to the log only).
 */
export function prepareSafeSubPath(req: SubPathRequest): string {
  const resolved = prepareSubPath(req.volumePath, req.subPath, req.volumeName, req.containerName);
  const root = realpathSync(req.volumePath);
  const target = subPathBindTarget(req.podDir, req.volumeName, req.containerName, req.volumeMountIndex);
  let fd: number;
  try {
    fd = safeOpen(root, relative(root, resolved));
  } catch (e) {
    log.warn(
      `subPath changed under its check ${kv({ container: req.containerName, volumeMount: req.volumeName, subPath: req.subPath, error: (e as Error).message })}`,
    );
    throw new Error(`failed to prepare subPath for volumeMount "${req.volumeName}" of container "${req.containerName}"`);
  }
  try {
    bindHeldFd(fd, target);
    return target;
  } catch (e) {
    log.warn(
      `subPath bind mount failed ${kv({ container: req.containerName, volumeMount: req.volumeName, subPath: req.subPath, target, error: (e as Error).message })}`,
    );
    throw new Error(`error mounting subPath for volumeMount "${req.volumeName}" of container "${req.containerName}"`);
  } finally {
    close(fd);
  }
}

/**
 * upstream doCleanSubPaths: unmounts every sub path bind mount of the pod, then deletes the
 * directory — only once nothing is mounted there, so a failed unmount never deletes through into a
 * volume. Throws naming what stayed mounted.
 */
export function cleanSubPaths(podDir: string): void {
  const dir = join(podDir, VOLUME_SUBPATHS_DIR);
  if (!existsSync(dir)) return;
  const real = realpathSync(dir);
  const errors: string[] = [];
  for (const mp of mountPointsUnder(real)) {
    try {
      umount2(mp, UMOUNT_NOFOLLOW);
      log.info(`unmounted subPath ${kv({ path: mp })}`);
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  const left = mountPointsUnder(real);
  if (errors.length > 0 || left.length > 0) throw new Error(`subPath bind mounts still mounted under ${dir}: ${[...errors, ...left].join("; ")}`);
  rmSync(real, { recursive: true, force: true });
}
