// The kernel/glibc ABI facts the ffi bindings depend on that differ between the architectures bunlet
// runs on (Linux x86_64 and aarch64, 64-bit glibc), chosen once from process.arch. Everything else the
// bindings use (errno, signal numbers, the other open flags, struct statx, inotify_event, msghdr,
// rlimit, the pidfd syscall numbers) is one value on both: asm-generic on arm64, and x86_64 happens to
// match. test/ffi/abi.test.ts holds both architectures' numbers as the headers spell them
// (/usr/include/x86_64-linux-gnu, /usr/aarch64-linux-gnu/include) for this table and the shared ones.
//
// x86_64 is the odd one out: glibc packs struct epoll_event there (sys/epoll.h __EPOLL_PACKED, to
// match the i386 kernel layout), and its open flags keep the i386 values (asm/fcntl.h falls back to
// asm-generic/fcntl.h, which arm64 overrides for O_DIRECTORY, O_NOFOLLOW and O_DIRECT).

import { type Arch, isSupportedArch, UnsupportedArchError } from "./arch.ts";

export { type Arch, SUPPORTED_ARCHES, UnsupportedArchError } from "./arch.ts";

/** The fields of struct statfs the bindings read (f_type, f_bsize, …). */
export const STATFS_FIELDS = ["type", "bsize", "blocks", "bfree", "bavail", "files", "ffree", "namelen", "frsize", "flags"] as const;
export type StatfsField = (typeof STATFS_FIELDS)[number];

/** struct statfs (glibc, LP64): its size and each read field's offset; every field is 8 bytes. */
export interface StatfsLayout extends Record<StatfsField, number> {
  size: number;
}

export interface Abi {
  arch: Arch;
  /** sizeof(struct epoll_event): u32 events then u64 data. */
  epollEventSize: number;
  /** offsetof(struct epoll_event, data). */
  epollEventDataOffset: number;
  O_DIRECTORY: number;
  O_NOFOLLOW: number;
  O_DIRECT: number;
  statfs: StatfsLayout;
}

/** The same on both: glibc's struct statfs is all longs and 64-bit counts on LP64 (bits/statfs.h). */
const STATFS_LP64: StatfsLayout = { size: 120, type: 0, bsize: 8, blocks: 16, bfree: 24, bavail: 32, files: 40, ffree: 48, namelen: 64, frsize: 72, flags: 80 };

const ABIS: Readonly<Record<Arch, Abi>> = {
  x64: { arch: "x64", epollEventSize: 12, epollEventDataOffset: 4, O_DIRECTORY: 0o200000, O_NOFOLLOW: 0o400000, O_DIRECT: 0o40000, statfs: STATFS_LP64 },
  arm64: { arch: "arm64", epollEventSize: 16, epollEventDataOffset: 8, O_DIRECTORY: 0o40000, O_NOFOLLOW: 0o100000, O_DIRECT: 0o200000, statfs: STATFS_LP64 },
};

/** The ABI table of `arch` (a process.arch value); throws UnsupportedArchError for any other. */
export function abiFor(arch: string): Abi {
  if (!isSupportedArch(arch)) throw new UnsupportedArchError(arch);
  return ABIS[arch];
}

/** The running process's ABI. Importing any binding on another architecture throws UnsupportedArchError. */
export const ABI: Abi = abiFor(process.arch);
