// Path walks inside a volume that no symlink can redirect (upstream
// pkg/volume/util/subpath/subpath_linux.go doSafeOpen and doSafeMakeDir): every component is opened
// with openat(parent, name, O_NOFOLLOW) from an fd of the volume root, so a component a container
// swaps for a symlink between two steps is seen as a symlink (refused) or as a missing entry, never
// followed. The fd that comes out names the very inode that was checked; callers mount that fd, not
// a path string.
import { close, ERRNO, open, O_CLOEXEC, O_DIRECTORY, O_RDONLY, SyscallError } from "../../../ffi/libc.ts";
import { fchmod, fstat, mkdirat, openat, O_NOFOLLOW, O_PATH, S_IFLNK, S_IFMT } from "../../../ffi/fs.ts";

/** upstream nofollowFlags: a directory we may create in, read or fchmod. */
const NOFOLLOW_DIR = O_RDONLY | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC;
/** upstream openFDFlags: any file type, held without opening its content; a symlink is held as itself. */
const OPEN_FD = O_PATH | O_NOFOLLOW | O_CLOEXEC;

/** A refusal of the walk; `path` is the host path it concerned (for the log, never the API). */
export class UnsafePathError extends Error {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = "UnsafePathError";
  }
}

/** The components of a relative path; "." and empty ones dropped, ".." refused (ValidatePathNoBacksteps). */
export function pathSegments(root: string, rel: string): string[] {
  const segs = rel.split("/").filter((s) => s !== "" && s !== ".");
  if (segs.includes("..")) throw new UnsafePathError(`path ${rel} must not contain '..'`, `${root}/${rel}`);
  return segs;
}

/** An fd on the volume root itself, which must be a directory and not a symlink (upstream: "Base dir is not allowed to be a symlink"). */
export function openRoot(root: string): number {
  return open(root, NOFOLLOW_DIR);
}

/** Opens `seg` under `parentFd` as an O_PATH fd; a symlink there is refused. */
function openSegment(parentFd: number, seg: string, pathSoFar: string): number {
  const fd = openat(parentFd, seg, OPEN_FD);
  try {
    if ((fstat(fd).mode & S_IFMT) === S_IFLNK) throw new UnsafePathError(`unexpected symlink found ${pathSoFar}`, pathSoFar);
    return fd;
  } catch (e) {
    close(fd);
    throw e;
  }
}

/**
 * upstream doSafeOpen: an O_PATH fd of `root`/`rel`, reached one component at a time without
 * following any symlink. The caller closes it.
 */
export function safeOpen(root: string, rel: string): number {
  const segs = pathSegments(root, rel);
  let fd = openRoot(root);
  let path = root;
  try {
    for (const seg of segs) {
      path = `${path}/${seg}`;
      const child = openSegment(fd, seg, path);
      close(fd);
      fd = child;
    }
    return fd;
  } catch (e) {
    close(fd);
    throw e;
  }
}

/** Opens directory `seg` under `parentFd`, creating it with `mode` (umask-free) when missing. */
function openOrMakeDir(parentFd: number, seg: string, mode: number, path: string): number {
  try {
    return openat(parentFd, seg, NOFOLLOW_DIR);
  } catch (e) {
    if (!(e instanceof SyscallError)) throw e;
    // A symlink opened with O_NOFOLLOW|O_DIRECTORY is ELOOP or ENOTDIR: refused, never followed.
    if (e.errno === ERRNO.ELOOP || e.errno === ERRNO.ENOTDIR) throw new UnsafePathError(`unexpected symlink or non-directory found ${path}`, path);
    if (e.errno !== ERRNO.ENOENT) throw e;
  }
  try {
    mkdirat(parentFd, seg, mode);
  } catch (e) {
    // Created meanwhile by someone else: open what is there, with the same checks.
    if (!(e instanceof SyscallError) || e.errno !== ERRNO.EEXIST) throw e;
    return openat(parentFd, seg, NOFOLLOW_DIR);
  }
  const fd = openat(parentFd, seg, NOFOLLOW_DIR);
  // mkdirat was filtered by the umask; the container must get the volume's own mode (upstream Fchmod).
  fchmod(fd, mode & 0o7777);
  return fd;
}

/**
 * upstream doSafeMakeDir: `root`/`rel` exists as a directory afterwards, every missing component
 * created with `mode` through an fd of its parent, so nobody can turn a created directory into a
 * symlink between its creation and the next step.
 */
export function safeMakeDir(root: string, rel: string, mode: number): void {
  let fd = openRoot(root);
  let path = root;
  try {
    for (const seg of pathSegments(root, rel)) {
      path = `${path}/${seg}`;
      const child = openOrMakeDir(fd, seg, mode, path);
      close(fd);
      fd = child;
    }
  } finally {
    close(fd);
  }
}
