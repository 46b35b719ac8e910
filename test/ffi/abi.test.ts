// The ABI tables against the headers, both architectures on any host. The expected numbers are copied
// from the headers, never computed: x86_64 from /usr/include/x86_64-linux-gnu (glibc) and
// /usr/include/{linux,asm-generic}; aarch64 from /usr/aarch64-linux-gnu/include (Debian's
// libc6-dev-arm64-cross and linux-libc-dev-arm64-cross). What the running process picks is proven by
// the real syscalls of test/ffi/libc.test.ts, which test/e2e/arm64.test.ts also runs under the arm64 Bun.
import { describe, expect, test } from "bun:test";
import { ABI, abiFor, SUPPORTED_ARCHES, UnsupportedArchError } from "../../ffi/abi.ts";
import * as fs from "../../ffi/fs.ts";
import * as c from "../../ffi/libc.ts";
import * as sock from "../../ffi/unix-socket.ts";
import { parseSignal } from "../../src/pod/kuberuntime/stop-signal.ts";

describe("per-architecture table", () => {
  // x86_64: sys/epoll.h packs struct epoll_event (bits/epoll.h __EPOLL_PACKED); bits/fcntl-linux.h
  // __O_DIRECTORY 0200000, __O_NOFOLLOW 0400000, __O_DIRECT 040000.
  // aarch64: no __EPOLL_PACKED, so u64 data is 8-aligned; bits/fcntl.h __O_DIRECTORY 040000,
  // __O_NOFOLLOW 0100000, __O_DIRECT 0200000 (asm/fcntl.h agrees).
  test.each([
    ["x64", { epollEventSize: 12, epollEventDataOffset: 4, O_DIRECTORY: 0o200000, O_NOFOLLOW: 0o400000, O_DIRECT: 0o40000 }],
    ["arm64", { epollEventSize: 16, epollEventDataOffset: 8, O_DIRECTORY: 0o40000, O_NOFOLLOW: 0o100000, O_DIRECT: 0o200000 }],
  ] as const)("%s", (arch, want) => {
    const abi = abiFor(arch);
    expect(abi.arch).toBe(arch);
    expect({
      epollEventSize: abi.epollEventSize,
      epollEventDataOffset: abi.epollEventDataOffset,
      O_DIRECTORY: abi.O_DIRECTORY,
      O_NOFOLLOW: abi.O_NOFOLLOW,
      O_DIRECT: abi.O_DIRECT,
    }).toEqual(want);
  });

  // bits/statfs.h on both: __fsword_t f_type, f_bsize; five 64-bit counts; __fsid_t (2 ints); __fsword_t
  // f_namelen, f_frsize, f_flags, f_spare[4]. __fsword_t is long (bits/typesizes.h __SWORD_TYPE).
  test.each(["x64", "arm64"])("%s struct statfs", (arch) => {
    expect(abiFor(arch).statfs).toEqual({
      size: 120,
      type: 0,
      bsize: 8,
      blocks: 16,
      bfree: 24,
      bavail: 32,
      files: 40,
      ffree: 48,
      namelen: 64,
      frsize: 72,
      flags: 80,
    });
  });

  test("the running process uses its own architecture's table", () => {
    expect(ABI).toBe(abiFor(process.arch));
    expect(c.EPOLL_EVENT_SIZE).toBe(ABI.epollEventSize);
    expect(c.O_DIRECTORY).toBe(ABI.O_DIRECTORY);
    expect(fs.O_NOFOLLOW).toBe(ABI.O_NOFOLLOW);
  });

  test.each(["ia32", "ppc64", "riscv64", "s390x", "arm", ""])("%p has no table: the error names it", (arch) => {
    expect(() => abiFor(arch)).toThrow(UnsupportedArchError);
    expect(() => abiFor(arch)).toThrow(`process.arch=${arch}`);
    expect(SUPPORTED_ARCHES).toEqual(["x64", "arm64"]);
  });
});

// [name, bound value, x86_64 header value, aarch64 header value]: where the two headers agree, one
// constant serves both; a row whose columns differ belongs in the per-architecture table.
const SHARED: ReadonlyArray<readonly [string, number, number, number]> = [
  // bits/fcntl-linux.h (both; aarch64's bits/fcntl.h overrides only the three above, and O_LARGEFILE,
  // which is 0 on both LP64 ABIs).
  ["O_RDONLY", c.O_RDONLY, 0, 0],
  ["O_WRONLY", c.O_WRONLY, 0o1, 0o1],
  ["O_RDWR", c.O_RDWR, 0o2, 0o2],
  ["O_CREAT", c.O_CREAT, 0o100, 0o100],
  ["O_EXCL", c.O_EXCL, 0o200, 0o200],
  ["O_NOCTTY", c.O_NOCTTY, 0o400, 0o400],
  ["O_TRUNC", c.O_TRUNC, 0o1000, 0o1000],
  ["O_APPEND", c.O_APPEND, 0o2000, 0o2000],
  ["O_NONBLOCK", c.O_NONBLOCK, 0o4000, 0o4000],
  ["O_CLOEXEC", c.O_CLOEXEC, 0o2000000, 0o2000000],
  ["O_PATH", fs.O_PATH, 0o10000000, 0o10000000],
  // sys/eventfd.h, bits/epoll.h, sys/epoll.h, sys/inotify.h
  ["EFD_SEMAPHORE", c.EFD_SEMAPHORE, 1, 1],
  ["EFD_NONBLOCK", c.EFD_NONBLOCK, 0o4000, 0o4000],
  ["EFD_CLOEXEC", c.EFD_CLOEXEC, 0o2000000, 0o2000000],
  ["EPOLL_CLOEXEC", c.EPOLL_CLOEXEC, 0o2000000, 0o2000000],
  ["EPOLL_CTL_ADD", c.EPOLL_CTL_ADD, 1, 1],
  ["EPOLL_CTL_DEL", c.EPOLL_CTL_DEL, 2, 2],
  ["EPOLL_CTL_MOD", c.EPOLL_CTL_MOD, 3, 3],
  ["EPOLLIN", c.EPOLLIN, 0x001, 0x001],
  ["EPOLLPRI", c.EPOLLPRI, 0x002, 0x002],
  ["EPOLLERR", c.EPOLLERR, 0x008, 0x008],
  ["EPOLLONESHOT", c.EPOLLONESHOT, 1 << 30, 1 << 30],
  ["EPOLLET", c.EPOLLET, 2 ** 31, 2 ** 31],
  ["IN_NONBLOCK", c.IN_NONBLOCK, 0o4000, 0o4000],
  ["IN_CLOEXEC", c.IN_CLOEXEC, 0o2000000, 0o2000000],
  ["IN_OPEN", c.IN_OPEN, 0x20, 0x20],
  ["IN_DELETE_SELF", c.IN_DELETE_SELF, 0x400, 0x400],
  // sys/file.h, bits/resource.h, sys/resource.h, linux/sched.h
  ["LOCK_EX", c.LOCK_EX, 2, 2],
  ["LOCK_NB", c.LOCK_NB, 4, 4],
  ["RLIMIT_NOFILE", c.RLIMIT_NOFILE, 7, 7],
  ["PRIO_PROCESS", c.PRIO_PROCESS, 0, 0],
  ["SCHED_RR", c.SCHED_RR, 2, 2],
  ["SCHED_RESET_ON_FORK", c.SCHED_RESET_ON_FORK, 0x40000000, 0x40000000],
  // asm/unistd_64.h (x86_64) and asm-generic/unistd.h (aarch64): both after the tables were unified.
  ["SYS_pidfd_send_signal", c.SYS_PIDFD_SEND_SIGNAL, 424, 424],
  ["SYS_pidfd_open", c.SYS_PIDFD_OPEN, 434, 434],
  // linux/fcntl.h, sys/mount.h, bits/stat.h
  ["AT_FDCWD", fs.AT_FDCWD, -100, -100],
  ["AT_SYMLINK_NOFOLLOW", fs.AT_SYMLINK_NOFOLLOW, 0x100, 0x100],
  ["AT_EMPTY_PATH", fs.AT_EMPTY_PATH, 0x1000, 0x1000],
  ["MS_BIND", fs.MS_BIND, 0x1000, 0x1000],
  ["MS_REC", fs.MS_REC, 0x4000, 0x4000],
  ["MNT_DETACH", fs.MNT_DETACH, 2, 2],
  ["UMOUNT_NOFOLLOW", fs.UMOUNT_NOFOLLOW, 8, 8],
  ["S_IFMT", fs.S_IFMT, 0o170000, 0o170000],
  // asm-generic/socket.h (both include it; SO_*TIMEO are the _OLD values on 64-bit), bits/socket.h
  ["AF_UNIX", sock.AF_UNIX, 1, 1],
  ["SOCK_STREAM", sock.SOCK_STREAM, 1, 1],
  ["SOCK_CLOEXEC", sock.SOCK_CLOEXEC, 0o2000000, 0o2000000],
  ["SOL_SOCKET", sock.SOL_SOCKET, 1, 1],
  ["SO_RCVTIMEO", sock.SO_RCVTIMEO, 20, 20],
  ["SO_SNDTIMEO", sock.SO_SNDTIMEO, 21, 21],
  ["SCM_RIGHTS", sock.SCM_RIGHTS, 1, 1],
  ["MSG_CMSG_CLOEXEC", sock.MSG_CMSG_CLOEXEC, 0x40000000, 0x40000000],
  // LP64 struct sizes (sys/un.h, bits/types/struct_timeval.h, bits/types/struct_iovec.h, bits/socket.h)
  ["sizeof(struct sockaddr_un)", sock.SOCKADDR_UN_SIZE, 110, 110],
  ["sizeof(struct timeval)", sock.TIMEVAL_SIZE, 16, 16],
  ["sizeof(struct iovec)", sock.IOVEC_SIZE, 16, 16],
  ["sizeof(struct msghdr)", sock.MSGHDR_SIZE, 56, 56],
  ["sizeof(struct cmsghdr)", sock.CMSGHDR_SIZE, 16, 16],
  // struct statx: linux/stat.h of each (the same file: u32 stx_mask, stx_blksize; u64 stx_attributes;
  // u32 stx_nlink, stx_uid, stx_gid; u16 stx_mode, pad; u64 stx_ino, stx_size, …; 4 timestamps of 16
  // bytes from 64; u32 stx_rdev_major/minor at 128, stx_dev_major/minor at 136; spare to 256).
  ["sizeof(struct statx)", fs.STATX.size, 256, 256],
  ["offsetof(struct statx, stx_mode)", fs.STATX.mode, 28, 28],
  ["offsetof(struct statx, stx_ino)", fs.STATX.ino, 32, 32],
  ["offsetof(struct statx, stx_size)", fs.STATX.fileSize, 40, 40],
  ["offsetof(struct statx, stx_dev_major)", fs.STATX.devMajor, 136, 136],
  ["offsetof(struct statx, stx_dev_minor)", fs.STATX.devMinor, 140, 140],
  // Signal numbers: x86_64 asm/signal.h, aarch64 asm-generic/signal.h.
  ["SIGHUP", parseSignal("HUP")!, 1, 1],
  ["SIGBUS", parseSignal("BUS")!, 7, 7],
  ["SIGKILL", parseSignal("KILL")!, 9, 9],
  ["SIGUSR1", parseSignal("USR1")!, 10, 10],
  ["SIGUSR2", parseSignal("USR2")!, 12, 12],
  ["SIGTERM", parseSignal("TERM")!, 15, 15],
  ["SIGSTKFLT", parseSignal("STKFLT")!, 16, 16],
  ["SIGCHLD", parseSignal("CHLD")!, 17, 17],
  ["SIGCONT", parseSignal("CONT")!, 18, 18],
  ["SIGSTOP", parseSignal("STOP")!, 19, 19],
  ["SIGWINCH", parseSignal("WINCH")!, 28, 28],
  ["SIGPWR", parseSignal("PWR")!, 30, 30],
  ["SIGSYS", parseSignal("SYS")!, 31, 31],
  ["SIGRTMIN (glibc's, after its two internal signals)", parseSignal("RTMIN")!, 34, 34],
];

describe("shared constants: one value, the same in both architectures' headers", () => {
  test.each(SHARED)("%s", (_name, bound, x64, arm64) => {
    expect(arm64).toBe(x64);
    expect(bound).toBe(x64);
  });
});
