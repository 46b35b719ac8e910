// Raw libc bindings over bun:ffi (glibc, x86_64 and aarch64: ./abi.ts). Each wrapper makes exactly
// one libc call, turns a -1 return into a SyscallError carrying errno, and converts JS strings/buffers
// to C arguments. No policy lives here: callers decide flags, retries and ownership of fds.
//
// errno is read through __errno_location() right after the failing call, on the same thread and
// before any other FFI call, so the value is the one that call set.
import { dlopen, FFIType, ptr, read as readPtr, toArrayBuffer, type Pointer } from "bun:ffi";
import { ABI, STATFS_FIELDS, type StatfsField } from "./abi.ts";
import { SyscallError } from "./errno.ts";

export { SyscallError, ERRNO, errnoCode, errnoText } from "./errno.ts";

const { i32, u32, i64, u64, ptr: P } = FFIType;

const lib = dlopen("libc.so.6", {
  // open(2) is variadic in C; the x86_64 SysV and Linux AAPCS64 calling conventions pass variadic
  // arguments where fixed ones go, so the optional mode as a fixed int is ABI-safe on both.
  open: { args: [P, i32, u32], returns: i32 },
  close: { args: [i32], returns: i32 },
  read: { args: [i32, P, i64], returns: i64 },
  write: { args: [i32, P, i64], returns: i64 },
  pread: { args: [i32, P, i64, i64], returns: i64 },
  eventfd: { args: [u32, i32], returns: i32 },
  epoll_create1: { args: [i32], returns: i32 },
  epoll_ctl: { args: [i32, i32, i32, P], returns: i32 },
  epoll_wait: { args: [i32, P, i32, i32], returns: i32 },
  flock: { args: [i32, i32], returns: i32 },
  inotify_init1: { args: [i32], returns: i32 },
  inotify_add_watch: { args: [i32, P, u32], returns: i32 },
  inotify_rm_watch: { args: [i32, i32], returns: i32 },
  statfs: { args: [P, P], returns: i32 },
  mount: { args: [P, P, P, u64, P], returns: i32 },
  getrlimit: { args: [i32, P], returns: i32 },
  setrlimit: { args: [i32, P], returns: i32 },
  getpriority: { args: [i32, u32], returns: i32 },
  setpriority: { args: [i32, u32, i32], returns: i32 },
  sched_yield: { args: [], returns: i32 },
  sched_setscheduler: { args: [i32, i32, P], returns: i32 },
  // syscall(2) is variadic; glibc's x86_64 and aarch64 implementations only move registers, so fixed
  // i64 arguments are ABI-safe. Used for pidfd_open/pidfd_send_signal, whose glibc wrappers are only in
  // glibc ≥ 2.36 (binding them would make dlopen fail on older distributions).
  syscall: { args: [i64, i64, i64, i64, i64], returns: i64 },
  __errno_location: { args: [], returns: P },
});

const sym = lib.symbols;

function errno(): number {
  const loc = sym.__errno_location();
  return loc === null ? 0 : readPtr.i32(loc, 0);
}

function fail(call: string, path?: string): never {
  throw new SyscallError(call, errno(), path);
}

function cstr(s: string): Buffer {
  return Buffer.from(`${s}\0`, "utf8");
}

function bufPtr(buf: Uint8Array): Pointer | null {
  // ptr() rejects zero-length views; a null pointer with length 0 is valid for read/write.
  return buf.byteLength === 0 ? null : ptr(buf);
}

// ---- constants (the same on x86_64 and aarch64 unless taken from ABI) ----
export const O_RDONLY = 0o0;
export const O_WRONLY = 0o1;
export const O_RDWR = 0o2;
export const O_CREAT = 0o100;
export const O_EXCL = 0o200;
export const O_NOCTTY = 0o400;
export const O_TRUNC = 0o1000;
export const O_APPEND = 0o2000;
export const O_NONBLOCK = 0o4000;
export const O_DIRECTORY = ABI.O_DIRECTORY;
export const O_CLOEXEC = 0o2000000;

export const LOCK_SH = 1;
export const LOCK_EX = 2;
export const LOCK_NB = 4;
export const LOCK_UN = 8;

export const EFD_SEMAPHORE = 0o1;
export const EFD_NONBLOCK = O_NONBLOCK;
export const EFD_CLOEXEC = O_CLOEXEC;

export const EPOLL_CLOEXEC = O_CLOEXEC;
export const EPOLL_CTL_ADD = 1;
export const EPOLL_CTL_DEL = 2;
export const EPOLL_CTL_MOD = 3;
export const EPOLLIN = 0x001;
export const EPOLLPRI = 0x002;
export const EPOLLOUT = 0x004;
export const EPOLLERR = 0x008;
export const EPOLLHUP = 0x010;
export const EPOLLRDHUP = 0x2000;
export const EPOLLEXCLUSIVE = 1 << 28;
export const EPOLLWAKEUP = 1 << 29;
export const EPOLLONESHOT = 1 << 30;
export const EPOLLET = 2 ** 31; // 1 << 31 is negative in JS; epoll_event.events is u32

export const IN_NONBLOCK = O_NONBLOCK;
export const IN_CLOEXEC = O_CLOEXEC;
export const IN_ACCESS = 0x001;
export const IN_MODIFY = 0x002;
export const IN_ATTRIB = 0x004;
export const IN_CLOSE_WRITE = 0x008;
export const IN_CLOSE_NOWRITE = 0x010;
export const IN_OPEN = 0x020;
export const IN_MOVED_FROM = 0x040;
export const IN_MOVED_TO = 0x080;
export const IN_CREATE = 0x100;
export const IN_DELETE = 0x200;
export const IN_DELETE_SELF = 0x400;
export const IN_MOVE_SELF = 0x800;
export const IN_IGNORED = 0x8000;

/** Size of struct epoll_event: u32 events + u64 data, packed on x86_64 (12 bytes), 16 on aarch64. */
export const EPOLL_EVENT_SIZE = ABI.epollEventSize;
const EPOLL_DATA_OFFSET = ABI.epollEventDataOffset;

// ---- calls ----

/** open(2). Returns the new fd; throws SyscallError naming `path`. */
export function open(path: string, flags: number, mode = 0): number {
  const fd = sym.open(ptr(cstr(path)), flags, mode);
  if (fd < 0) fail("open", path);
  return fd;
}

/** close(2). */
export function close(fd: number): void {
  if (sym.close(fd) < 0) fail("close");
}

/** read(2) into `buf`; returns the byte count (0 = EOF). EAGAIN is thrown like any other errno. */
export function read(fd: number, buf: Uint8Array, length = buf.byteLength): number {
  const n = Number(sym.read(fd, bufPtr(buf), Math.min(length, buf.byteLength)));
  if (n < 0) fail("read");
  return n;
}

/** pread(2): read at `offset` without moving the file position. */
export function pread(fd: number, buf: Uint8Array, offset: number, length = buf.byteLength): number {
  const n = Number(sym.pread(fd, bufPtr(buf), Math.min(length, buf.byteLength), offset));
  if (n < 0) fail("pread");
  return n;
}

/** write(2) of a buffer or a UTF-8 string; returns the byte count written. */
export function write(fd: number, data: Uint8Array | string): number {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const n = Number(sym.write(fd, bufPtr(buf), buf.byteLength));
  if (n < 0) fail("write");
  return n;
}

/** eventfd(2). */
export function eventfd(initval: number, flags: number): number {
  const fd = sym.eventfd(initval, flags);
  if (fd < 0) fail("eventfd");
  return fd;
}

/** epoll_create1(2). */
export function epoll_create1(flags: number): number {
  const fd = sym.epoll_create1(flags);
  if (fd < 0) fail("epoll_create1");
  return fd;
}

/**
 * epoll_ctl(2). `data` is the 64-bit user value returned with events (we store a token); it must be
 * a non-negative safe integer. For EPOLL_CTL_DEL `events`/`data` are ignored.
 */
export function epoll_ctl(epfd: number, op: number, fd: number, events = 0, data = 0): void {
  const ev = new DataView(new ArrayBuffer(EPOLL_EVENT_SIZE));
  ev.setUint32(0, events >>> 0, true);
  ev.setBigUint64(EPOLL_DATA_OFFSET, BigInt(data), true);
  if (sym.epoll_ctl(epfd, op, fd, ptr(ev)) < 0) fail("epoll_ctl");
}

export interface EpollEvent {
  events: number;
  data: number;
}

/**
 * epoll_wait(2). Blocks the calling thread up to `timeoutMs` (-1 = forever): call it only from a
 * Worker or with timeout 0. `buf` must hold `maxEvents * EPOLL_EVENT_SIZE` bytes; reuse it to avoid
 * allocating per wait. EINTR is returned as an empty list, not thrown.
 */
export function epoll_wait(epfd: number, maxEvents: number, timeoutMs: number, buf: Uint8Array = new Uint8Array(maxEvents * EPOLL_EVENT_SIZE)): EpollEvent[] {
  const n = sym.epoll_wait(epfd, ptr(buf), maxEvents, timeoutMs);
  if (n < 0) {
    const e = errno();
    if (e === 4) return [];
    throw new SyscallError("epoll_wait", e);
  }
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: EpollEvent[] = [];
  for (let i = 0; i < n; i++) {
    const off = i * EPOLL_EVENT_SIZE;
    out.push({ events: view.getUint32(off, true), data: Number(view.getBigUint64(off + EPOLL_DATA_OFFSET, true)) });
  }
  return out;
}

/** Syscall numbers (the same on every architecture: both came after the unified table). */
export const SYS_PIDFD_SEND_SIGNAL = 424;
export const SYS_PIDFD_OPEN = 434;

/** sched_yield(2): the calling thread gives up the CPU to any other runnable thread (never fails on Linux). */
export function sched_yield(): void {
  sym.sched_yield();
}

/** pidfd_open(2): an fd that refers to process `pid` itself, immune to PID reuse (close-on-exec). */
export function pidfd_open(pid: number, flags = 0): number {
  const fd = Number(sym.syscall(SYS_PIDFD_OPEN, pid, flags, 0, 0));
  if (fd < 0) fail("pidfd_open");
  return fd;
}

/** pidfd_send_signal(2) with no siginfo: like kill(2), but to the process the pidfd refers to (ESRCH once it exited). */
export function pidfd_send_signal(pidfd: number, signal: number): void {
  if (Number(sym.syscall(SYS_PIDFD_SEND_SIGNAL, pidfd, signal, 0, 0)) < 0) fail("pidfd_send_signal");
}

/** flock(2). With LOCK_NB a held lock throws SyscallError code EWOULDBLOCK (= "EAGAIN"). */
export function flock(fd: number, operation: number): void {
  if (sym.flock(fd, operation) < 0) fail("flock");
}

/** inotify_init1(2). */
export function inotify_init1(flags: number): number {
  const fd = sym.inotify_init1(flags);
  if (fd < 0) fail("inotify_init1");
  return fd;
}

/** inotify_add_watch(2); returns the watch descriptor. */
export function inotify_add_watch(fd: number, path: string, mask: number): number {
  const wd = sym.inotify_add_watch(fd, ptr(cstr(path)), mask >>> 0);
  if (wd < 0) fail("inotify_add_watch", path);
  return wd;
}

/** inotify_rm_watch(2). */
export function inotify_rm_watch(fd: number, wd: number): void {
  if (sym.inotify_rm_watch(fd, wd) < 0) fail("inotify_rm_watch");
}

/** struct statfs (glibc, ABI.statfs), sizes in f_bsize/f_frsize units as the kernel reports them. */
export type Statfs = Record<StatfsField, number>;

const STATFS = ABI.statfs;

/** statfs(2) of the filesystem holding `path`. */
export function statfs(path: string): Statfs {
  const buf = new ArrayBuffer(STATFS.size);
  if (sym.statfs(ptr(cstr(path)), ptr(buf)) < 0) fail("statfs", path);
  const v = new DataView(buf);
  return Object.fromEntries(STATFS_FIELDS.map((f) => [f, Number(v.getBigUint64(STATFS[f], true))])) as Statfs;
}

/** mount(2) flags (sys/mount.h). */
export const MS_BIND = 0x1000;
export const MS_REC = 0x4000;
export const MS_SHARED = 1 << 20;

/** mount(2) with no filesystem type and no data (bind mounts and propagation changes). */
export function mount(source: string, target: string, flags: number): void {
  if (sym.mount(ptr(cstr(source)), ptr(cstr(target)), null, flags, null) < 0) fail("mount", target);
}

/** RLIMIT_NOFILE (asm-generic). */
export const RLIMIT_NOFILE = 7;

export interface Rlimit {
  /** Soft limit (rlim_cur). */
  cur: number;
  /** Hard limit (rlim_max). RLIM_INFINITY is Infinity (both fields). */
  max: number;
}

const RLIM_INFINITY = 0xffffffffffffffffn;
const fromRlim = (v: bigint) => (v === RLIM_INFINITY ? Infinity : Number(v));
const toRlim = (v: number) => (v === Infinity ? RLIM_INFINITY : BigInt(Math.floor(v)));

/** getrlimit(2). struct rlimit is two u64s. */
export function getrlimit(resource: number): Rlimit {
  const buf = new BigUint64Array(2);
  if (sym.getrlimit(resource, ptr(buf)) < 0) fail("getrlimit");
  return { cur: fromRlim(buf[0]!), max: fromRlim(buf[1]!) };
}

/** setrlimit(2). Raising the hard limit needs CAP_SYS_RESOURCE (EPERM otherwise). */
export function setrlimit(resource: number, limit: Rlimit): void {
  const buf = new BigUint64Array([toRlim(limit.cur), toRlim(limit.max)]);
  if (sym.setrlimit(resource, ptr(buf)) < 0) fail("setrlimit");
}

/** which for getpriority/setpriority (sys/resource.h). */
export const PRIO_PROCESS = 0;
export const PRIO_PGRP = 1;
export const PRIO_USER = 2;

/**
 * setpriority(2): the nice value (-20…19) of `who`. On Linux, PRIO_PROCESS with a thread id (or 0 =
 * the calling thread) sets that one thread only; threads created afterwards by it inherit the value.
 * Lowering it (higher priority) needs CAP_SYS_NICE (EACCES otherwise).
 */
export function setpriority(which: number, who: number, prio: number): void {
  if (sym.setpriority(which, who, prio) < 0) fail("setpriority");
}

/** A scheduling policy (sched.h); SCHED_RESET_ON_FORK or'ed in: threads and children it creates start SCHED_OTHER. */
export const SCHED_RR = 2;
export const SCHED_RESET_ON_FORK = 0x40000000;

/**
 * sched_setscheduler(2): the policy and real-time priority (1…99; 0 for SCHED_OTHER) of thread `tid`
 * (0: the calling thread). A real-time policy needs CAP_SYS_NICE or RLIMIT_RTPRIO (EPERM), and — on a
 * kernel with CONFIG_RT_GROUP_SCHED — real-time runtime in the thread's cpu cgroup (EPERM too).
 */
export function sched_setscheduler(tid: number, policy: number, priority: number): void {
  const param = new Int32Array([priority]);
  if (sym.sched_setscheduler(tid, policy, ptr(param)) < 0) fail("sched_setscheduler");
}

/** getpriority(2): the nice value (-20…19). -1 is a valid value, so errno is cleared first and checked. */
export function getpriority(which: number, who: number): number {
  const loc = sym.__errno_location();
  if (loc !== null) new Int32Array(toArrayBuffer(loc, 0, 4))[0] = 0;
  const n = sym.getpriority(which, who);
  if (n === -1 && errno() !== 0) fail("getpriority");
  return n;
}
