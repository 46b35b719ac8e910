// A minimal gRPC client over a unix socket — unary calls (all the CRI needs) and client-streaming
// calls whose messages are all known when the call starts (containerd's content Write, one bounded
// chunk of a blob per call, see src/cri/containerd.ts): on our own
// HTTP/2 client (h2.ts; node:http2 cost 8× its CPU per call, see there), with the node:http2 version
// kept for comparison (createNodeHttp2GrpcTransport, scripts/bench/cri.ts).
// Wire format (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md): POST /pkg.Service/Method,
// content-type application/grpc, te: trailers, grpc-timeout; body = 1 byte compressed flag + 4 byte
// big-endian length + message; status in the trailers (or in the headers of a trailers-only reply).
import http2 from "node:http2";
import net from "node:net";
import { connectH2, H2Error, h2ErrorName, type H2Connection } from "./h2.ts";
import { encodeHeaders } from "./hpack.ts";

/** gRPC status codes used by callers (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  RESOURCE_EXHAUSTED: 8,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

/**
 * The largest reply message accepted (upstream pkg/kubelet/cri/remote: maxMsgSize = 16 MiB, the
 * kubelet's grpc.MaxCallRecvMsgSize): an ExecSync of a command that prints gigabytes, or a runtime
 * that answers nonsense, costs a RESOURCE_EXHAUSTED error, not the kubelet's memory.
 */
export const MAX_RECV_MESSAGE_BYTES = 16 * 1024 * 1024;

const tooLarge = (method: string, receivedBytes: number) =>
  new GrpcError(method, GrpcCode.RESOURCE_EXHAUSTED, `grpc: received message larger than max (${receivedBytes} vs. ${MAX_RECV_MESSAGE_BYTES})`);

export class GrpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly details: string,
  ) {
    super(`${method}: grpc code ${code}${details ? `: ${details}` : ""}`);
    this.name = "GrpcError";
  }
}

/** gRPC request metadata beyond the protocol's own headers (containerd: containerd-namespace, containerd-lease). */
export type GrpcMetadata = readonly (readonly [string, string])[];

export interface UnaryTransport {
  /**
   * Sends one request message and resolves with the reply message bytes. `signal` cancels the call
   * (the runtime sees the stream reset, as a Go client's cancelled context): CANCELLED.
   */
  unary(method: string, request: Uint8Array, deadlineMs: number, signal?: AbortSignal, metadata?: GrpcMetadata): Promise<Uint8Array>;
  close(): void;
}

export interface StreamingTransport extends UnaryTransport {
  /**
   * A streaming call whose request messages are all sent at once (then the request side closes):
   * resolves with every reply message. The body goes out as the server's flow control allows.
   */
  sendAll(method: string, requests: readonly Uint8Array[], deadlineMs: number, metadata?: GrpcMetadata): Promise<Uint8Array[]>;
}

export function frame(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}

/** Extracts the single message of a unary reply; throws on compressed or truncated frames. */
export function unframe(method: string, body: Uint8Array): Uint8Array {
  if (body.length === 0) return body; // a reply with no message: treat as empty (decodes to defaults)
  if (body.length < 5) throw new GrpcError(method, GrpcCode.INTERNAL, `short frame of ${body.length} bytes`);
  if (body[0] !== 0) throw new GrpcError(method, GrpcCode.INTERNAL, "compressed reply not supported");
  const len = new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(1);
  if (len > MAX_RECV_MESSAGE_BYTES) throw tooLarge(method, len);
  if (body.length < 5 + len) throw new GrpcError(method, GrpcCode.INTERNAL, `truncated frame: ${body.length - 5} of ${len} bytes`);
  return body.subarray(5, 5 + len);
}

/** Every message of a streamed reply, in order; throws on compressed or truncated frames. */
export function unframeAll(method: string, body: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let o = 0; o < body.length; ) {
    const one = unframe(method, body.subarray(o));
    out.push(one);
    o += 5 + one.length;
  }
  return out;
}

/** The request messages as one body: each framed, back to back. */
export function frameAll(messages: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(messages.reduce((n, m) => n + 5 + m.length, 0));
  let o = 0;
  for (const m of messages) {
    new DataView(out.buffer).setUint32(o + 1, m.length);
    out.set(m, o + 5);
    o += 5 + m.length;
  }
  return out;
}

/** grpc-timeout header: at most 8 digits, so long deadlines switch from milliseconds to seconds. */
export function grpcTimeout(ms: number): string {
  const v = Math.max(1, Math.ceil(ms));
  return v <= 99_999_999 ? `${v}m` : `${Math.min(99_999_999, Math.ceil(v / 1000))}S`;
}

function decodeMessage(v: unknown): string {
  if (typeof v !== "string") return "";
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/** Connects lazily; a dropped connection (containerd restart) is replaced on the next call. */
export function createUnixGrpcTransport(socketPath: string): StreamingTransport {
  let conn: Promise<H2Connection> | undefined;
  const connection = (): Promise<H2Connection> => {
    if (conn) return conn;
    const c = connectH2(socketPath).then(
      (h) => h,
      (e) => {
        if (conn === c) conn = undefined;
        throw e;
      },
    );
    conn = c;
    return c;
  };
  const header = (list: [string, string][], name: string): string | undefined => list.find(([n]) => n === name)?.[1];
  // Encoded once per method and timeout: a handful of each (deadlines are the configured timeout,
  // plus a stop's grace period).
  const blocks = new Map<string, Uint8Array>();
  const requestHeaders = (method: string, timeout: string, metadata: GrpcMetadata = []): Uint8Array => {
    const key = `${method} ${timeout}${metadata.map(([n, v]) => ` ${n}=${v}`).join("")}`;
    let b = blocks.get(key);
    if (!b) {
      if (blocks.size >= 256) blocks.clear();
      b = encodeHeaders([
        [":method", "POST"],
        [":scheme", "http"],
        [":path", method],
        [":authority", "localhost"],
        ["content-type", "application/grpc"],
        ["te", "trailers"],
        ["grpc-timeout", timeout],
        ...metadata.map(([n, v]): [string, string] => [n, v]),
      ]);
      blocks.set(key, b);
    }
    return b;
  };

  /** One call: the framed request body out, the reply body (its messages, framed) back once the status is OK. */
  async function exchange(method: string, body: Uint8Array, deadlineMs: number, signal?: AbortSignal, metadata?: GrpcMetadata): Promise<Uint8Array> {
    if (signal?.aborted) throw new GrpcError(method, GrpcCode.CANCELLED, "cancelled by the caller");
    let h: H2Connection;
    try {
      h = await connection();
      if (!h.usable()) {
        conn = undefined;
        h = await connection();
      }
    } catch (e) {
      throw new GrpcError(method, GrpcCode.UNAVAILABLE, (e as Error).message);
    }
    const call = h.request(requestHeaders(method, grpcTimeout(deadlineMs), metadata), body, { maxBodyBytes: 5 + MAX_RECV_MESSAGE_BYTES });
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    // Rejected before the cancel settles the call: the race reports the deadline, or the caller's cancel.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new GrpcError(method, GrpcCode.DEADLINE_EXCEEDED, `no reply within ${deadlineMs} ms`));
        call.cancel();
      }, deadlineMs);
      timer.unref?.();
      onAbort = () => {
        reject(new GrpcError(method, GrpcCode.CANCELLED, "cancelled by the caller"));
        call.cancel();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    let res;
    try {
      res = await Promise.race([call.response, deadline]);
    } catch (e) {
      if (e instanceof GrpcError) throw e;
      if (!(e instanceof H2Error)) throw e;
      if (!h.usable() && conn && (await conn.catch(() => undefined)) === h) conn = undefined;
      if (e.kind === "too-large") throw tooLarge(method, (e.receivedBytes ?? 5) - 5);
      if (e.kind === "unavailable") {
        // No response headers at all: the connection went away (containerd stopping) — retryable.
        throw new GrpcError(method, e.responded ? GrpcCode.UNKNOWN : GrpcCode.UNAVAILABLE, e.responded ? "reply without grpc-status" : e.message);
      }
      if (e.kind === "reset") {
        const code = e.h2Code === 7 ? GrpcCode.UNAVAILABLE : e.h2Code === 8 ? GrpcCode.CANCELLED : GrpcCode.INTERNAL;
        throw new GrpcError(method, code, `stream reset: ${h2ErrorName(e.h2Code ?? 2)}`);
      }
      throw new GrpcError(method, GrpcCode.INTERNAL, e.message);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
    // Trailers, or the headers of a trailers-only reply, carry the status.
    const where = header(res.trailers, "grpc-status") !== undefined ? res.trailers : res.headers;
    const st = header(where, "grpc-status");
    if (st === undefined) {
      const httpStatus = Number(header(res.headers, ":status"));
      throw new GrpcError(method, GrpcCode.UNKNOWN, httpStatus !== 200 ? `http status ${httpStatus}` : "reply without grpc-status");
    }
    const status = Number(st);
    if (status !== GrpcCode.OK) throw new GrpcError(method, status, decodeMessage(header(where, "grpc-message")));
    return res.body;
  }

  return {
    unary: async (method, request, deadlineMs, signal, metadata) => unframe(method, await exchange(method, frame(request), deadlineMs, signal, metadata)),
    sendAll: async (method, requests, deadlineMs, metadata) => unframeAll(method, await exchange(method, frameAll(requests), deadlineMs, undefined, metadata)),
    close() {
      const c = conn;
      conn = undefined;
      void c?.then((h) => h.close()).catch(() => {});
    },
  };
}

/** The node:http2 transport bunlet used before h2.ts (same contract as createUnixGrpcTransport). */
export function createNodeHttp2GrpcTransport(socketPath: string): UnaryTransport {
  let session: http2.ClientHttp2Session | undefined;

  const connect = (): http2.ClientHttp2Session => {
    if (session && !session.closed && !session.destroyed) return session;
    const s = http2.connect("http://localhost", {
      createConnection: () => net.connect(socketPath),
    });
    const drop = () => {
      if (session === s) session = undefined;
    };
    s.on("close", drop);
    s.on("error", drop);
    s.on("goaway", drop);
    s.unref(); // an idle CRI connection must not keep the process alive
    session = s;
    return s;
  };

  const unary = (method: string, request: Uint8Array, deadlineMs: number, signal?: AbortSignal, metadata: GrpcMetadata = []) =>
    new Promise<Uint8Array>((resolve, reject) => {
      let s: http2.ClientHttp2Session;
      try {
        s = connect();
      } catch (e) {
        reject(new GrpcError(method, GrpcCode.UNAVAILABLE, String(e)));
        return;
      }
      let settled = false;
      const chunks: Buffer[] = [];
      let status: number | undefined;
      let message = "";
      let responded = false;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        s.unref();
        if (err) return reject(err);
        if (status === undefined) {
          // No response headers at all: the connection went away (containerd stopping) — retryable.
          const code = responded ? GrpcCode.UNKNOWN : GrpcCode.UNAVAILABLE;
          return reject(new GrpcError(method, code, responded ? "reply without grpc-status" : "connection closed before a reply"));
        }
        if (status !== GrpcCode.OK) return reject(new GrpcError(method, status, message));
        try {
          resolve(unframe(method, Buffer.concat(chunks)));
        } catch (e) {
          reject(e as Error);
        }
      };
      const readStatus = (h: http2.IncomingHttpHeaders) => {
        const st = h["grpc-status"];
        if (st !== undefined) {
          status = Number(st);
          message = decodeMessage(h["grpc-message"]);
        }
      };
      s.ref(); // keep the process alive while a call is in flight
      const stream = s.request({
        ":method": "POST",
        ":path": method,
        "content-type": "application/grpc",
        te: "trailers",
        "grpc-timeout": grpcTimeout(deadlineMs),
        ...Object.fromEntries(metadata),
      });
      const timer = setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        finish(new GrpcError(method, GrpcCode.DEADLINE_EXCEEDED, `no reply within ${deadlineMs} ms`));
      }, deadlineMs);
      stream.on("response", (h) => {
        responded = true;
        const httpStatus = Number(h[":status"]);
        readStatus(h);
        if (httpStatus !== 200 && status === undefined) {
          status = GrpcCode.UNKNOWN;
          message = `http status ${httpStatus}`;
        }
      });
      stream.on("trailers", readStatus);
      let received = 0;
      stream.on("data", (c: Buffer) => {
        received += c.length;
        if (received <= 5 + MAX_RECV_MESSAGE_BYTES) return void chunks.push(c);
        stream.close(http2.constants.NGHTTP2_CANCEL);
        finish(tooLarge(method, received - 5));
      });
      const onAbort = () => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        finish(new GrpcError(method, GrpcCode.CANCELLED, "cancelled by the caller"));
      };
      if (signal?.aborted) onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      stream.once("close", () => signal?.removeEventListener("abort", onAbort));
      stream.on("end", () => finish());
      stream.on("close", () => finish());
      stream.on("error", (e: Error & { code?: string }) => {
        // Socket gone (ENOENT/ECONNREFUSED) or reset mid-call: the runtime is unavailable; callers retry.
        finish(new GrpcError(method, GrpcCode.UNAVAILABLE, `${e.code ?? ""} ${e.message}`.trim()));
      });
      stream.end(frame(request));
    });

  return {
    unary,
    close() {
      session?.close();
      session = undefined;
    },
  };
}
