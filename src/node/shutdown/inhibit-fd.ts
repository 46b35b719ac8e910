// logind's Manager.Inhibit() answers with a file descriptor (D-Bus type "h"): the lock is held as
// long as that fd is open. @homebridge/dbus-native (and any Node/Bun socket) cannot receive fds, so
// this one call goes over its own short-lived system-bus connection on a raw socket
// (ffi/unix-socket.ts): EXTERNAL auth, NEGOTIATE_UNIX_FD, Hello, the call, the reply's fd through
// SCM_RIGHTS; then the connection closes and only the fd is kept (upstream holds the same fd from
// godbus). Blocking, bounded by the socket timeouts; it runs at start and after a cancelled shutdown.
import { close, write } from "../../../ffi/libc.ts";
import { connectUnix, recvWithFds } from "../../../ffi/unix-socket.ts";
import { DBusError } from "../../pod/dbus.ts";

export class DBusCallError extends DBusError {
  override name = "DBusCallError";
}

export interface MethodCall {
  destination: string;
  path: string;
  interface: string;
  member: string;
  /** Only string arguments are needed here (signature "s…s"). */
  args: string[];
}

/** A little-endian D-Bus message writer for method calls with string arguments. */
export function encodeCall(c: MethodCall, serial: number): Uint8Array {
  const enc = new TextEncoder();
  const w = { buf: new Uint8Array(1024), len: 0 };
  const view = () => new DataView(w.buf.buffer);
  const ensure = (n: number) => {
    if (w.len + n <= w.buf.length) return;
    const b = new Uint8Array(Math.max(w.buf.length * 2, w.len + n));
    b.set(w.buf);
    w.buf = b;
  };
  const align = (n: number) => {
    ensure(n);
    while (w.len % n) w.buf[w.len++] = 0;
  };
  const u8 = (v: number) => (ensure(1), (w.buf[w.len++] = v));
  const u32 = (v: number) => (align(4), ensure(4), view().setUint32(w.len, v, true), (w.len += 4));
  const str = (s: string) => {
    const b = enc.encode(s);
    u32(b.length);
    ensure(b.length + 1);
    w.buf.set(b, w.len);
    w.len += b.length;
    u8(0);
  };
  const sig = (s: string) => {
    u8(s.length);
    ensure(s.length + 1);
    w.buf.set(enc.encode(s), w.len);
    w.len += s.length;
    u8(0);
  };
  const signature = "s".repeat(c.args.length);
  // Fixed header: endianness, METHOD_CALL, flags, version 1, body length (patched), serial, fields length (patched).
  u8(0x6c), u8(1), u8(0), u8(1), u32(0), u32(serial), u32(0);
  const fieldsStart = w.len;
  const field = (code: number, type: string, value: string) => {
    align(8);
    u8(code);
    sig(type);
    if (type === "g") sig(value);
    else str(value);
  };
  field(1, "o", c.path);
  field(2, "s", c.interface);
  field(3, "s", c.member);
  field(6, "s", c.destination);
  if (signature) field(8, "g", signature);
  view().setUint32(12, w.len - fieldsStart, true);
  align(8);
  const bodyStart = w.len;
  for (const a of c.args) str(a);
  view().setUint32(4, w.len - bodyStart, true);
  return w.buf.slice(0, w.len);
}

export interface Reply {
  type: number;
  replySerial?: number;
  errorName?: string;
  body: Uint8Array;
  littleEndian: boolean;
}

/** Parses one whole message at the start of `b`; undefined until all its bytes are there. */
export function decodeMessage(b: Uint8Array): { msg: Reply; size: number } | undefined {
  if (b.length < 16) return undefined;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const le = b[0] === 0x6c;
  const bodyLen = dv.getUint32(4, le);
  const fieldsLen = dv.getUint32(12, le);
  const bodyStart = 16 + ((fieldsLen + 7) & ~7);
  const size = bodyStart + bodyLen;
  if (b.length < size) return undefined;
  const msg: Reply = { type: b[1]!, body: b.slice(bodyStart, size), littleEndian: le };
  const dec = new TextDecoder();
  let off = 16;
  while (off < 16 + fieldsLen) {
    off = (off + 7) & ~7;
    const code = b[off]!;
    const sigLen = b[off + 1]!;
    const type = dec.decode(b.subarray(off + 2, off + 2 + sigLen));
    off += 2 + sigLen + 1;
    if (type === "u") {
      off = (off + 3) & ~3;
      const v = dv.getUint32(off, le);
      off += 4;
      if (code === 5) msg.replySerial = v;
    } else if (type === "s" || type === "o") {
      off = (off + 3) & ~3;
      const n = dv.getUint32(off, le);
      const v = dec.decode(b.subarray(off + 4, off + 4 + n));
      off += 4 + n + 1;
      if (code === 4) msg.errorName = v;
    } else if (type === "g") {
      off += 1 + b[off]! + 1;
    } else break; // no other field types exist in the spec's header
  }
  return { msg, size };
}

function errorText(r: Reply): string {
  if (r.body.length < 4) return "";
  const n = new DataView(r.body.buffer, r.body.byteOffset).getUint32(0, r.littleEndian);
  return new TextDecoder().decode(r.body.subarray(4, 4 + n));
}

/**
 * Calls a method whose reply is a single fd ("h") and returns that fd (close-on-exec; the caller
 * owns it). Throws DBusCallError with the D-Bus error name when the call fails.
 */
export function callReturningFd(socketPath: string, call: MethodCall, timeoutMs = 5000): number {
  const fd = connectUnix(socketPath, timeoutMs);
  const received: number[] = [];
  try {
    const buf = new Uint8Array(64 * 1024);
    let pending = new Uint8Array(0);
    const recv = () => {
      const r = recvWithFds(fd, buf);
      received.push(...r.fds);
      if (r.bytes === 0) throw new DBusCallError(`D-Bus ${call.member}: the bus closed the connection`);
      const next = new Uint8Array(pending.length + r.bytes);
      next.set(pending);
      next.set(buf.subarray(0, r.bytes), pending.length);
      pending = next;
    };
    const line = (): string => {
      for (;;) {
        const i = pending.findIndex((c, k) => c === 0x0d && pending[k + 1] === 0x0a);
        if (i >= 0) {
          const l = new TextDecoder().decode(pending.subarray(0, i));
          pending = pending.slice(i + 2);
          return l;
        }
        recv();
      }
    };
    const send = (data: Uint8Array | string) => {
      let b = typeof data === "string" ? new TextEncoder().encode(data) : data;
      while (b.length > 0) b = b.subarray(write(fd, b));
    };
    const uidHex = Buffer.from(String(process.getuid?.() ?? 0)).toString("hex");
    send(`\0AUTH EXTERNAL ${uidHex}\r\n`);
    const ok = line();
    if (!ok.startsWith("OK ")) throw new DBusCallError(`D-Bus authentication refused: ${ok}`);
    send("NEGOTIATE_UNIX_FD\r\n");
    const agree = line();
    if (agree !== "AGREE_UNIX_FD") throw new DBusCallError(`D-Bus bus does not pass file descriptors: ${agree}`);
    send("BEGIN\r\n");
    const hello = encodeCall(
      { destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "Hello", args: [] },
      1,
    );
    const msg = encodeCall(call, 2);
    const both = new Uint8Array(hello.length + msg.length);
    both.set(hello);
    both.set(msg, hello.length);
    send(both);
    for (;;) {
      let m = decodeMessage(pending);
      while (!m) {
        recv();
        m = decodeMessage(pending);
      }
      pending = pending.slice(m.size);
      const r = m.msg;
      if (r.replySerial !== 2) continue; // Hello's reply, NameAcquired
      if (r.type === 3) throw new DBusCallError(`D-Bus ${call.member}: ${r.errorName ?? "error"}: ${errorText(r)}`, r.errorName);
      if (r.type !== 2 || r.body.length < 4) throw new DBusCallError(`D-Bus ${call.member}: unexpected reply (type ${r.type}, ${r.body.length} body bytes)`);
      const index = new DataView(r.body.buffer, r.body.byteOffset).getUint32(0, r.littleEndian);
      const got = received[index];
      if (got === undefined) throw new DBusCallError(`D-Bus ${call.member}: the reply names fd #${index} but ${received.length} came with it`);
      received.splice(index, 1);
      return got;
    }
  } finally {
    for (const f of received) close(f);
    close(fd);
  }
}
