// A minimal HTTP/2 client (RFC 9113) for unary exchanges over a unix socket: one request (headers +
// body), one response (headers, body, trailers) per stream, many streams on one connection.
//
// Why not node:http2: measured with scripts/bench/idle.ts's idle agent (2 CRI calls a second from the
// PLEG relist, more from stats) and a micro benchmark against a node:http2 server in another process,
// one call spaced 10 ms from the next costs the client ≈ 0.8 ms of CPU through node:http2 (its
// streams machinery) and ≈ 0.1 ms as a plain Bun socket round trip: node:http2 alone was the whole
// idle budget of an empty node (0.2 % of a core). This client is that socket plus framing: it
// advertises windows large enough that it never waits on its own flow control (and tops the
// connection window up), obeys the server's for request bodies, answers SETTINGS and PING, honours
// GOAWAY, and decodes headers with the full HPACK decoder (hpack.ts). No push, no priorities.
import type { Socket } from "bun";
import { createHpackDecoder, type HeaderList, type HpackDecoder } from "./hpack.ts";

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const Frame = { DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
type Frame = (typeof Frame)[keyof typeof Frame];
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY_FLAG = 0x20;
const MAX_WINDOW = 2 ** 31 - 1;
const DEFAULT_WINDOW = 65_535;
const DEFAULT_FRAME = 16_384;
/** Stream ids are 31 bits; a connection that used this many is retired for a fresh one. */
const STREAM_ID_LIMIT = 2 ** 30;
/** HTTP/2 error codes (RFC 9113 7) by number, for messages. */
const H2_ERRORS = [
  "NO_ERROR",
  "PROTOCOL_ERROR",
  "INTERNAL_ERROR",
  "FLOW_CONTROL_ERROR",
  "SETTINGS_TIMEOUT",
  "STREAM_CLOSED",
  "FRAME_SIZE_ERROR",
  "REFUSED_STREAM",
  "CANCEL",
  "COMPRESSION_ERROR",
  "CONNECT_ERROR",
  "ENHANCE_YOUR_CALM",
  "INADEQUATE_SECURITY",
  "HTTP_1_1_REQUIRED",
];
export const h2ErrorName = (code: number) => H2_ERRORS[code] ?? `error ${code}`;

export interface H2Response {
  headers: HeaderList;
  trailers: HeaderList;
  body: Uint8Array;
}

/**
 * Why an exchange failed. "unavailable": no connection, or it closed (or went away) before this
 * stream's response ended — the request may not have been processed; "reset": the server reset the
 * stream (RST_STREAM code in h2Code); "protocol": the server broke HTTP/2; "too-large": the response
 * body passed the request's maxBodyBytes (the stream was cancelled; the connection goes on).
 */
export class H2Error extends Error {
  constructor(
    readonly kind: "unavailable" | "reset" | "protocol" | "too-large",
    message: string,
    readonly responded = false,
    readonly h2Code?: number,
    /** "too-large": the body bytes received when the stream was cancelled. */
    readonly receivedBytes?: number,
  ) {
    super(message);
    this.name = "H2Error";
  }
}

interface Stream {
  id: number;
  resolve: (r: H2Response) => void;
  reject: (e: Error) => void;
  headers?: HeaderList;
  trailers?: HeaderList;
  chunks: Uint8Array[];
  /** Response body bytes so far, and the most this stream may receive. */
  received: number;
  maxBodyBytes: number;
  /** Request body not yet sent (flow control), and whether END_STREAM went out. */
  pending: Uint8Array;
  sendWindow: number;
  done: boolean;
}

export interface H2Connection {
  /**
   * `headers`: a header block as encodeHeaders makes it (callers may reuse one: it holds no connection
   * state). A response body past `maxBodyBytes` cancels the stream and fails it ("too-large").
   */
  request(headers: Uint8Array, body: Uint8Array, opts?: { maxBodyBytes?: number }): { response: Promise<H2Response>; cancel(): void };
  /** False once the connection closed, failed or got GOAWAY: make a new one for new requests. */
  usable(): boolean;
  close(): void;
}

function frameHeader(length: number, type: Frame, flags: number, stream: number): Uint8Array {
  const h = new Uint8Array(9);
  h[0] = length >>> 16;
  h[1] = (length >>> 8) & 0xff;
  h[2] = length & 0xff;
  h[3] = type;
  h[4] = flags;
  new DataView(h.buffer).setUint32(5, stream & 0x7fffffff);
  return h;
}
function frame(type: Frame, flags: number, stream: number, payload: Uint8Array = new Uint8Array()): Uint8Array {
  const out = new Uint8Array(9 + payload.length);
  out.set(frameHeader(payload.length, type, flags, stream));
  out.set(payload, 9);
  return out;
}
const u32 = (v: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v);
  return b;
};

/** Connects to a unix socket; rejects with H2Error "unavailable" when nothing listens there. */
export async function connectH2(socketPath: string): Promise<H2Connection> {
  let socket: Socket<undefined> | undefined;
  const streams = new Map<number, Stream>();
  const out: Uint8Array[] = [];
  let inbuf: Uint8Array = new Uint8Array(0);
  let nextId = 1;
  let closed = false;
  let goneAway = false;
  const peer: PeerSettings = { initialWindow: DEFAULT_WINDOW, maxFrame: DEFAULT_FRAME, connSendWindow: DEFAULT_WINDOW };

  // Frames written in one turn of the event loop go out in one write(2) (a call's HEADERS and DATA,
  // a SETTINGS ack and a WINDOW_UPDATE): one syscall a call instead of two or three.
  let batch: Uint8Array[] = [];
  const writeNow = (b: Uint8Array) => {
    if (closed || !socket) return;
    if (out.length > 0) return void out.push(b);
    const n = socket.write(b);
    if (n < b.length) out.push(b.subarray(Math.max(0, n)));
  };
  const flushBatch = () => {
    const b = batch;
    batch = [];
    if (b.length > 0) writeNow(b.length === 1 ? b[0]! : concat(b));
  };
  const write = (b: Uint8Array) => {
    if (batch.length === 0) queueMicrotask(flushBatch);
    batch.push(b);
  };
  const drain = () => {
    while (out.length > 0 && socket) {
      const b = out[0]!;
      const n = socket.write(b);
      if (n < b.length) {
        out[0] = b.subarray(Math.max(0, n));
        return;
      }
      out.shift();
    }
  };
  const refresh = () => {
    if (!socket) return;
    if (streams.size > 0) socket.ref();
    else socket.unref(); // an idle connection must not keep the process alive
  };

  const finish = (s: Stream, err?: Error) => {
    if (s.done) return;
    s.done = true;
    streams.delete(s.id);
    refresh();
    // A stream that ends without response headers is no response (a server dropping the stream).
    if (!err && s.headers === undefined) err = new H2Error("unavailable", "connection closed before a reply");
    if (err) s.reject(err);
    else s.resolve({ headers: s.headers ?? [], trailers: s.trailers ?? [], body: s.chunks.length === 1 ? s.chunks[0]! : concat(s.chunks) });
    if (goneAway && streams.size === 0) shutdown();
  };
  const failAll = (kind: H2Error["kind"], message: string) => {
    for (const s of [...streams.values()]) finish(s, new H2Error(kind, message, s.headers !== undefined));
  };
  const shutdown = () => {
    if (closed) return;
    closed = true;
    failAll("unavailable", "connection closed before a reply");
    const pending = batch;
    batch = [];
    for (const b of pending) socket?.write(b); // a GOAWAY or RST_STREAM written just before
    socket?.end();
  };
  const protocolError = (message: string) => {
    write(frame(Frame.GOAWAY, 0, 0, concat([u32(0), u32(1)]))); // PROTOCOL_ERROR
    failAll("protocol", `HTTP/2 protocol error: ${message}`);
    shutdown();
  };

  /** Sends as much of each stream's body as both windows allow, END_STREAM with the last byte. */
  const flush = () => {
    for (const s of streams.values()) {
      while (s.pending.length > 0 && s.sendWindow > 0 && peer.connSendWindow > 0) {
        const n = Math.min(s.pending.length, s.sendWindow, peer.connSendWindow, peer.maxFrame);
        const last = n === s.pending.length;
        write(frame(Frame.DATA, last ? END_STREAM : 0, s.id, s.pending.subarray(0, n)));
        s.pending = s.pending.subarray(n);
        s.sendWindow -= n;
        peer.connSendWindow -= n;
      }
    }
  };

  const onFrame = createReadLoop({
    streams,
    peer,
    write,
    finish,
    flush,
    shutdown,
    protocolError,
    goAway: () => void (goneAway = true),
  });

  const onData = (chunk: Uint8Array) => {
    inbuf = inbuf.length === 0 ? chunk : concat([inbuf, chunk]);
    let o = 0;
    while (!closed && inbuf.length - o >= 9) {
      const len = (inbuf[o]! << 16) | (inbuf[o + 1]! << 8) | inbuf[o + 2]!;
      if (inbuf.length - o < 9 + len) break;
      const type = inbuf[o + 3]!;
      const flags = inbuf[o + 4]!;
      const id = ((inbuf[o + 5]! << 24) | (inbuf[o + 6]! << 16) | (inbuf[o + 7]! << 8) | inbuf[o + 8]!) & 0x7fffffff;
      const payload = inbuf.subarray(o + 9, o + 9 + len);
      o += 9 + len;
      onFrame(type, flags, id, payload);
    }
    // Keep the unparsed tail only (copied: the chunk's buffer is not ours after this callback).
    inbuf = o >= inbuf.length ? new Uint8Array(0) : inbuf.slice(o);
  };

  try {
    socket = await Bun.connect({
      unix: socketPath,
      socket: {
        data: (_s, chunk) => onData(chunk),
        drain: () => drain(),
        close: () => shutdown(),
        end: () => shutdown(),
        error: () => shutdown(),
      },
    });
  } catch (e) {
    const err = e as Error & { code?: string };
    throw new H2Error("unavailable", `${err.code ?? ""} ${err.message}`.trim());
  }
  socket.setNoDelay?.(true);
  // Preface, our SETTINGS (no push; the largest stream window) and the largest connection window.
  const settings = concat([new Uint8Array([0, 2]), u32(0), new Uint8Array([0, 4]), u32(MAX_WINDOW)]);
  write(concat([PREFACE, frame(Frame.SETTINGS, 0, 0, settings), frame(Frame.WINDOW_UPDATE, 0, 0, u32(MAX_WINDOW - DEFAULT_WINDOW))]));
  refresh();

  return {
    request(headers, body, opts = {}) {
      let stream: Stream | undefined;
      const response = new Promise<H2Response>((resolve, reject) => {
        if (closed || goneAway) return reject(new H2Error("unavailable", "connection closed before a reply"));
        const id = nextId;
        nextId += 2;
        if (nextId >= STREAM_ID_LIMIT) goneAway = true; // retire: the next request opens a new connection
        stream = {
          id,
          resolve,
          reject,
          chunks: [],
          received: 0,
          maxBodyBytes: opts.maxBodyBytes ?? Infinity,
          pending: body,
          sendWindow: peer.initialWindow,
          done: false,
        };
        streams.set(id, stream);
        refresh();
        const block = headers;
        // One HEADERS frame, or HEADERS + CONTINUATIONs for a block above the frame size.
        for (let o = 0, first = true; first || o < block.length; first = false) {
          const part = block.subarray(o, o + peer.maxFrame);
          o += part.length;
          const endHeaders = o >= block.length ? END_HEADERS : 0;
          write(frame(first ? Frame.HEADERS : Frame.CONTINUATION, endHeaders | (first && body.length === 0 ? END_STREAM : 0), id, part));
        }
        flush();
      });
      return {
        response,
        cancel() {
          if (!stream || stream.done) return;
          write(frame(Frame.RST_STREAM, 0, stream.id, u32(8))); // CANCEL
          finish(stream, new H2Error("reset", "cancelled", stream.headers !== undefined, 8));
        },
      };
    },
    usable: () => !closed && !goneAway,
    close: () => {
      if (closed) return;
      write(frame(Frame.GOAWAY, 0, 0, concat([u32(0), u32(0)])));
      shutdown();
    },
  };
}

/** The server's SETTINGS as they bear on our sending, and the connection's send window. */
interface PeerSettings {
  /** SETTINGS_INITIAL_WINDOW_SIZE: each new stream's send window. */
  initialWindow: number;
  /** SETTINGS_MAX_FRAME_SIZE. */
  maxFrame: number;
  connSendWindow: number;
}

/** What the read loop shares with its connection (x/net/http2's ClientConn as clientConnReadLoop uses it). */
interface ClientConn {
  streams: Map<number, Stream>;
  peer: PeerSettings;
  write(b: Uint8Array): void;
  finish(s: Stream, err?: Error): void;
  /** Sends as much of each stream's body as the windows now allow. */
  flush(): void;
  shutdown(): void;
  protocolError(message: string): void;
  /** GOAWAY: no new stream on this connection. */
  goAway(): void;
}

/**
 * The read side of a connection (golang.org/x/net/http2 clientConnReadLoop): one handler per frame type,
 * named as its methods (processContinuation is ours: x/net's Framer joins CONTINUATIONs before), and the
 * state only reading needs — the HPACK decoder, a header block being continued, DATA bytes since the last
 * connection WINDOW_UPDATE. Returns the frame handler.
 */
function createReadLoop(cc: ClientConn): (type: number, flags: number, id: number, p: Uint8Array) => void {
  const hpack: HpackDecoder = createHpackDecoder();
  let continuation: { stream: number; flags: number; parts: Uint8Array[] } | undefined;
  let received = 0;

  const onHeaders = (id: number, flags: number, block: Uint8Array) => {
    let list: HeaderList;
    try {
      list = hpack.decode(block);
    } catch (e) {
      return cc.protocolError((e as Error).message); // the decoder's table is lost: the connection is unusable
    }
    const s = cc.streams.get(id);
    if (!s) return;
    if (s.headers === undefined) s.headers = list;
    else s.trailers = list;
    if (flags & END_STREAM) cc.finish(s);
  };

  /** DATA: the body's bytes; the connection window is topped up once half of it was used. */
  const processData = (flags: number, id: number, p: Uint8Array) => {
    let data = p;
    if (flags & PADDED) data = p.subarray(1, p.length - p[0]!);
    received += p.length;
    if (received >= MAX_WINDOW / 2) {
      cc.write(frame(Frame.WINDOW_UPDATE, 0, 0, u32(received)));
      received = 0;
    }
    const s = cc.streams.get(id);
    if (!s) return;
    s.received += data.length;
    if (s.received > s.maxBodyBytes) {
      cc.write(frame(Frame.RST_STREAM, 0, s.id, u32(8))); // CANCEL: nothing more of it is kept
      return cc.finish(s, new H2Error("too-large", `response body larger than ${s.maxBodyBytes} bytes`, true, 8, s.received));
    }
    if (data.length > 0) s.chunks.push(data.slice());
    if (flags & END_STREAM) cc.finish(s);
  };

  /** HEADERS: a header block (padding and priority stripped), whole or to be continued. */
  const processHeaders = (flags: number, id: number, p: Uint8Array) => {
    let start = 0;
    let end = p.length;
    if (flags & PADDED) {
      start = 1;
      end -= p[0]!;
    }
    if (flags & PRIORITY_FLAG) start += 5;
    const block = p.subarray(start, end);
    if (flags & END_HEADERS) return onHeaders(id, flags, block);
    continuation = { stream: id, flags, parts: [block.slice()] };
  };

  /** CONTINUATION: the next part of the header block HEADERS began on the same stream. */
  const processContinuation = (flags: number, id: number, p: Uint8Array) => {
    if (!continuation || continuation.stream !== id) return cc.protocolError("unexpected CONTINUATION");
    continuation.parts.push(p.slice());
    if (flags & END_HEADERS) {
      const c = continuation;
      continuation = undefined;
      onHeaders(id, c.flags, concat(c.parts));
    }
  };

  /** RST_STREAM: the stream fails with the server's error code. */
  const processResetStream = (id: number, p: Uint8Array) => {
    const s = cc.streams.get(id);
    const code = p.length >= 4 ? new DataView(p.buffer, p.byteOffset).getUint32(0) : 2;
    if (s) cc.finish(s, new H2Error("reset", `stream reset by the server: ${h2ErrorName(code)}`, s.headers !== undefined, code));
  };

  /** SETTINGS: the server's initial stream window (4) and frame size (5) taken, acknowledged, bodies sent on. */
  const processSettings = (flags: number, p: Uint8Array) => {
    if (flags & ACK) return;
    const dv = new DataView(p.buffer, p.byteOffset, p.length);
    for (let o = 0; o + 6 <= p.length; o += 6) {
      const key = dv.getUint16(o);
      const value = dv.getUint32(o + 2);
      if (key === 4) {
        const delta = value - cc.peer.initialWindow;
        cc.peer.initialWindow = value;
        for (const s of cc.streams.values()) s.sendWindow += delta;
      } else if (key === 5) cc.peer.maxFrame = value;
    }
    cc.write(frame(Frame.SETTINGS, ACK, 0));
    cc.flush();
  };

  /** PING: answered with its payload. */
  const processPing = (flags: number, p: Uint8Array) => {
    if (!(flags & ACK)) cc.write(frame(Frame.PING, ACK, 0, p.slice(0, 8)));
  };

  /** GOAWAY: no new streams; those above the last one the server processes were not processed (safe to retry). */
  const processGoAway = (p: Uint8Array) => {
    cc.goAway();
    const last = p.length >= 4 ? new DataView(p.buffer, p.byteOffset).getUint32(0) & 0x7fffffff : 0;
    for (const s of [...cc.streams.values()]) if (s.id > last) cc.finish(s, new H2Error("unavailable", "connection closed before a reply (GOAWAY)"));
    if (cc.streams.size === 0) cc.shutdown();
  };

  /** WINDOW_UPDATE: more room to send, on the connection (stream 0) or one stream; bodies sent on. */
  const processWindowUpdate = (id: number, p: Uint8Array) => {
    const inc = p.length >= 4 ? new DataView(p.buffer, p.byteOffset).getUint32(0) & 0x7fffffff : 0;
    if (id === 0) cc.peer.connSendWindow += inc;
    else {
      const s = cc.streams.get(id);
      if (s) s.sendWindow += inc;
    }
    cc.flush();
  };

  return (type: number, flags: number, id: number, p: Uint8Array) => {
    if (continuation && type !== Frame.CONTINUATION) return cc.protocolError("header block interrupted");
    switch (type) {
      case Frame.DATA:
        return processData(flags, id, p);
      case Frame.HEADERS:
        return processHeaders(flags, id, p);
      case Frame.CONTINUATION:
        return processContinuation(flags, id, p);
      case Frame.RST_STREAM:
        return processResetStream(id, p);
      case Frame.SETTINGS:
        return processSettings(flags, p);
      case Frame.PING:
        return processPing(flags, p);
      case Frame.GOAWAY:
        return processGoAway(p);
      case Frame.WINDOW_UPDATE:
        return processWindowUpdate(id, p);
      case Frame.PUSH_PROMISE:
        return cc.protocolError("PUSH_PROMISE though push is disabled");
      default:
        return; // PRIORITY and unknown frame types are ignored (RFC 9113 4.1)
    }
  };
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
