// Raw libc bindings for fd-relative path walks and bind mounts (glibc, x86_64 and aarch64: ./abi.ts),
// in libc.ts's style: each wrapper makes exactly one libc call, turns a -1 return into a SyscallError
// carrying errno, and converts JS strings to C arguments. No policy here: the safe sub path walk lives in
// src/pod/volumes/safe-open.ts.
//
// stat goes through statx(2) (glibc ≥ 2.28) rather than fstatat: its struct layout is the same on
// every architecture, and glibc only exports fstatat as a symbol from 2.33 on.
import { dlopen, FFIType, ptr, read as readPtr } from "bun:ffi";
import { ABI } from "./abi.ts";
import { SyscallError } from "./errno.ts";

const { i32, u32, u64, ptr: P } = FFIType;

const lib = dlopen("libc.so.6", {
  // openat(2) is variadic in C; as open(2) in libc.ts, the mode as a fixed int is ABI-safe on both.
  openat: { args: [i32, P, i32, u32], returns: i32 },
  mkdirat: { args: [i32, P, u32], returns: i32 },
  fchmod: { args: [i32, u32], returns: i32 },
  statx: { args: [i32, P, i32, u32, P], returns: i32 },
  mount: { args: [P, P, P, u64, P], returns: i32 },
  umount2: { args: [P, i32], returns: i32 },
  __errno_location: { args: [], returns: P },
});

const sym = lib.symbols;

function fail(call: string, path?: string): never {
  const loc = sym.__errno_location();
  throw new SyscallError(call, loc === null ? 0 : readPtr.i32(loc, 0), path);
}

const cstr = (s: string): Buffer => Buffer.from(`${s}\0`, "utf8");

// ---- constants (the same on x86_64 and aarch64 unless taken from ABI) ----
export const AT_FDCWD = -100;
export const AT_SYMLINK_NOFOLLOW = 0x100;
export const AT_EMPTY_PATH = 0x1000;
export const O_NOFOLLOW = ABI.O_NOFOLLOW;
export const O_PATH = 0o10000000;

export const S_IFMT = 0o170000;
export const S_IFDIR = 0o040000;
export const S_IFREG = 0o100000;
export const S_IFLNK = 0o120000;

export const MS_RDONLY = 0x1;
export const MS_REMOUNT = 0x20;
export const MS_BIND = 0x1000;
export const MS_REC = 0x4000;
export const MNT_DETACH = 0x2;
export const UMOUNT_NOFOLLOW = 0x8;

const STATX_TYPE = 0x1;
const STATX_MODE = 0x2;
const STATX_INO = 0x100;
const STATX_SIZE = 0x200;
/** struct statx (linux/stat.h): its size and the offsets read; one layout on every architecture. */
export const STATX = { size: 256, mode: 28, ino: 32, fileSize: 40, devMajor: 136, devMinor: 140 } as const;

/** The slice of struct statx callers read; `dev` is "major:minor". */
export interface FileStat {
  /** st_mode: type (S_IFMT bits) and permission bits. */
  mode: number;
  ino: bigint;
  dev: string;
  size: number;
}

// ---- calls ----

/** openat(2). Returns the new fd; throws SyscallError naming `path`. */
export function openat(dirfd: number, path: string, flags: number, mode = 0): number {
  const fd = sym.openat(dirfd, ptr(cstr(path)), flags, mode);
  if (fd < 0) fail("openat", path);
  return fd;
}

/** mkdirat(2). The mode is filtered by the umask, as mkdir(2). */
export function mkdirat(dirfd: number, path: string, mode: number): void {
  if (sym.mkdirat(dirfd, ptr(cstr(path)), mode) < 0) fail("mkdirat", path);
}

/** fchmod(2). Not valid on an O_PATH fd (EBADF). */
export function fchmod(fd: number, mode: number): void {
  if (sym.fchmod(fd, mode) < 0) fail("fchmod");
}

/**
 * statx(2) of `path` relative to `dirfd`; with path "" and AT_EMPTY_PATH, of `dirfd` itself (an O_PATH
 * fd included) — fstat(2) that also works on O_PATH fds of symlinks.
 */
export function statx(dirfd: number, path: string, flags: number): FileStat {
  const buf = new ArrayBuffer(STATX.size);
  if (sym.statx(dirfd, ptr(cstr(path)), flags, STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE, ptr(buf)) < 0) fail("statx", path || undefined);
  const v = new DataView(buf);
  return {
    mode: v.getUint16(STATX.mode, true),
    ino: v.getBigUint64(STATX.ino, true),
    size: Number(v.getBigUint64(STATX.fileSize, true)),
    dev: `${v.getUint32(STATX.devMajor, true)}:${v.getUint32(STATX.devMinor, true)}`,
  };
}

/** fstat(2) through statx: the file `fd` refers to, never following a symlink it is. */
export function fstat(fd: number): FileStat {
  return statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
}

/** mount(2). `source` may be a /proc/self/fd/N magic link (a bind mount of what that fd holds). */
export function mount(source: string, target: string, fstype: string | null, flags: number, data: string | null = null): void {
  const r = sym.mount(ptr(cstr(source)), ptr(cstr(target)), fstype === null ? null : ptr(cstr(fstype)), flags, data === null ? null : ptr(cstr(data)));
  if (r < 0) fail("mount", target);
}

/** umount2(2). */
export function umount2(target: string, flags: number): void {
  if (sym.umount2(ptr(cstr(target)), flags) < 0) fail("umount2", target);
}
