// Raw libc bindings for a blocking AF_UNIX stream socket that can receive file descriptors
// (SCM_RIGHTS): socket, connect, setsockopt(SO_RCVTIMEO/SO_SNDTIMEO), recvmsg. Node's and Bun's
// sockets cannot receive fds; logind's Inhibit() answers with one (src/node/shutdown/inhibit-fd.ts).
// glibc struct layouts, the same on x86_64 and aarch64 (LP64; test/ffi/abi.test.ts). No policy here: the caller owns every fd returned.
import { dlopen, FFIType, ptr, read as readPtr } from "bun:ffi";
import { SyscallError } from "./errno.ts";
import { close as closeFd } from "./libc.ts";

const { i32, i64, ptr: P, u32 } = FFIType;

const lib = dlopen("libc.so.6", {
  socket: { args: [i32, i32, i32], returns: i32 },
  connect: { args: [i32, P, u32], returns: i32 },
  setsockopt: { args: [i32, i32, i32, P, u32], returns: i32 },
  recvmsg: { args: [i32, P, i32], returns: i64 },
  __errno_location: { args: [], returns: P },
});
const sym = lib.symbols;

function fail(call: string, path?: string): never {
  const loc = sym.__errno_location();
  throw new SyscallError(call, loc === null ? 0 : readPtr.i32(loc, 0), path);
}

// Constants and struct sizes (LP64 glibc; the same on x86_64 and aarch64 — test/ffi/abi.test.ts).
export const AF_UNIX = 1;
export const SOCK_STREAM = 1;
export const SOCK_CLOEXEC = 0o2000000;
export const SOL_SOCKET = 1;
export const SO_RCVTIMEO = 20;
export const SO_SNDTIMEO = 21;
export const SCM_RIGHTS = 1;
/** Received fds are close-on-exec: no child process (mount, a hook) may inherit them. */
export const MSG_CMSG_CLOEXEC = 0x40000000;
/** struct sockaddr_un: sa_family_t + char sun_path[108]. */
export const SOCKADDR_UN_SIZE = 110;
/** struct timeval: two longs. */
export const TIMEVAL_SIZE = 16;
/** struct iovec: pointer + size_t. */
export const IOVEC_SIZE = 16;
/** struct msghdr: name, namelen (+pad), iov, iovlen, control, controllen, flags (+pad). */
export const MSGHDR_SIZE = 56;
/** struct cmsghdr: size_t cmsg_len, int cmsg_level, int cmsg_type; data follows. */
export const CMSGHDR_SIZE = 16;

/** A connected, blocking AF_UNIX stream socket (close it with libc close). */
export function connectUnix(path: string, timeoutMs: number): number {
  const fd = sym.socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket");
  const addr = Buffer.alloc(SOCKADDR_UN_SIZE);
  addr.writeUInt16LE(AF_UNIX, 0);
  const p = Buffer.from(path, "utf8");
  if (p.length >= 108) throw new SyscallError("connect", 36 /* ENAMETOOLONG */, path);
  p.copy(addr, 2);
  const tv = Buffer.alloc(TIMEVAL_SIZE);
  tv.writeBigInt64LE(BigInt(Math.floor(timeoutMs / 1000)), 0);
  tv.writeBigInt64LE(BigInt((timeoutMs % 1000) * 1000), 8);
  try {
    if (sym.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, ptr(tv), TIMEVAL_SIZE) < 0) fail("setsockopt SO_RCVTIMEO");
    if (sym.setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, ptr(tv), TIMEVAL_SIZE) < 0) fail("setsockopt SO_SNDTIMEO");
    if (sym.connect(fd, ptr(addr), 2 + p.length + 1) < 0) fail("connect", path);
  } catch (e) {
    closeFd(fd);
    throw e;
  }
  return fd;
}

/** recvmsg(2) into `buf`: the byte count (0 at EOF) and the fds passed with them (SCM_RIGHTS). */
export function recvWithFds(fd: number, buf: Uint8Array, maxFds = 16): { bytes: number; fds: number[] } {
  const iov = Buffer.alloc(IOVEC_SIZE);
  iov.writeBigUInt64LE(BigInt(ptr(buf)), 0);
  iov.writeBigUInt64LE(BigInt(buf.byteLength), 8);
  const controlLen = CMSGHDR_SIZE + 4 * maxFds + 8; // CMSG_SPACE(4 * maxFds), 8-aligned
  const control = Buffer.alloc(controlLen);
  const msg = Buffer.alloc(MSGHDR_SIZE);
  msg.writeBigUInt64LE(BigInt(ptr(iov)), 16);
  msg.writeBigUInt64LE(1n, 24);
  msg.writeBigUInt64LE(BigInt(ptr(control)), 32);
  msg.writeBigUInt64LE(BigInt(controlLen), 40);
  const n = Number(sym.recvmsg(fd, ptr(msg), MSG_CMSG_CLOEXEC));
  if (n < 0) fail("recvmsg");
  const fds: number[] = [];
  const used = Number(msg.readBigUInt64LE(40));
  for (let off = 0; off + 16 <= used; ) {
    const len = Number(control.readBigUInt64LE(off)); // struct cmsghdr: cmsg_len, cmsg_level, cmsg_type, data
    if (len < 16) break;
    if (control.readInt32LE(off + 8) === SOL_SOCKET && control.readInt32LE(off + 12) === SCM_RIGHTS)
      for (let i = off + 16; i + 4 <= off + len; i += 4) fds.push(control.readInt32LE(i));
    off += (len + 7) & ~7;
  }
  return { bytes: n, fds };
}
