// Removal that stays on one filesystem (upstream pkg/util/removeall RemoveAllOneFilesystem, like
// `rm -rf --one-file-system`): a tree is removed entry by entry without following a symlink (the link
// itself goes) and without descending into a mount point — a directory listed in mountinfo (a bind
// mount of the same filesystem keeps st_dev) or on another st_dev than its parent. What sits on a
// mount is never deleted; the mount is reported instead. The file-system calls are injected (async).

/** What removal needs of an lstat. */
export interface EntryStat {
  dev: number;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/** The file-system calls of a removal (node:fs/promises shaped). */
export interface RemovalFs {
  lstat(path: string): Promise<EntryStat>;
  /** The names in a directory. */
  readdir(path: string): Promise<string[]>;
  unlink(path: string): Promise<void>;
  rmdir(path: string): Promise<void>;
}

/** What to do with one entry: unlink it (a file or a symlink), descend and rmdir it, or leave a mount. */
export type RemovalStep = "unlink" | "descend" | "mount-point";

/**
 * The step for an entry: a listed mount point or a directory on another device than its parent is a
 * mount (upstream IsLikelyNotMountPoint, made stronger by mountinfo); a symlink is unlinked, never followed.
 */
export function removalStep(st: EntryStat, parentDev: number, listedMountPoint: boolean): RemovalStep {
  if (listedMountPoint) return "mount-point";
  if (st.isSymbolicLink() || !st.isDirectory()) return "unlink";
  return st.dev === parentDev ? "descend" : "mount-point";
}

const isNotFound = (e: unknown) => (e as NodeJS.ErrnoException).code === "ENOENT";

/**
 * Removes `path` and what it holds on the filesystem of `parentDev` (its parent's st_dev); `mountPoints`
 * are canonical paths from mountinfo. Returns the errors (every entry it could remove is removed);
 * a missing path is no error.
 */
export async function removeAllOneFilesystem(fs: RemovalFs, path: string, parentDev: number, mountPoints: ReadonlySet<string>): Promise<string[]> {
  let st: EntryStat;
  try {
    st = await fs.lstat(path);
  } catch (e) {
    return isNotFound(e) ? [] : [`lstat ${path}: ${(e as Error).message}`];
  }
  const step = removalStep(st, parentDev, mountPoints.has(path));
  if (step === "mount-point") return [`cannot delete ${path}: it is a mount point`];
  try {
    if (step === "unlink") {
      await fs.unlink(path);
      return [];
    }
    const errors: string[] = [];
    for (const name of await fs.readdir(path)) errors.push(...(await removeAllOneFilesystem(fs, `${path}/${name}`, st.dev, mountPoints)));
    if (errors.length === 0) await fs.rmdir(path);
    return errors;
  } catch (e) {
    return isNotFound(e) ? [] : [`${step === "unlink" ? "unlink" : "remove"} ${path}: ${(e as Error).message}`];
  }
}
