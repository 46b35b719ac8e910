// HTTP/1.1 served on a socket the kubelet accepted itself (the TLS main port, and the plain loopback
// port when it also serves the streaming endpoints), with the connection's client certificate
// handed to the handler as upstream's net/http hands every request its connection's TLS state.
// Bun.serve cannot: it neither takes a socket nor tells a handler the peer certificate, and the
// former shape — pipe the plaintext to a private Bun.serve on loopback and find the identity by the
// pipe's source port — let a local process that got that port next inherit the identity. Here the
// identity is looked up by the socket object node:http's parser reads from: nothing to guess.
//
// node:http's parser refuses what net/http refuses (bare LF or CR line ends, obs-folded lines,
// control bytes in a value: 400; a head past 16 KiB: 431) in one linear pass. Upgrade requests
// (its 'upgrade' event) go to the streaming endpoints with the raw socket. Over an emitted
// connection (Bun) it enforces none of its timeouts, so this does what Go's server and Bun.serve
// do: a connection waiting for a request head (first or next) is closed after `headerTimeoutMs`; a
// response being written is never cut (logs -f: container-logs.ts bounds it).
import http from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { ClientCertificate } from "./auth/types.ts";
import type { UpgradeHook } from "./streaming/handler.ts";
import { writeRawResponse, writeStreamedResponse } from "./streaming/raw-response.ts";
import { headOf } from "./streaming/request-head.ts";

export interface HttpOnSocketOpts {
  handler: (req: Request, cert: ClientCertificate) => Promise<Response>;
  onError?: (err: Error) => Response;
  /** Serves upgrade requests for the streaming endpoints off the raw socket. */
  upgrade?: UpgradeHook;
  /** How long a connection may take to send a request head, first or next (default 10 s, as Bun.serve's idleTimeout). */
  headerTimeoutMs?: number;
}

export interface HttpOnSocket {
  /** Serves requests on `socket` (TLS, if any, done). */
  serve(socket: Socket, identity: ClientCertificate): void;
}

interface ConnState {
  identity: ClientCertificate;
  /** Requests whose response is not finished. */
  active: number;
  timer?: ReturnType<typeof setTimeout>;
}

const NO_CERT: ClientCertificate = { present: false };

/**
 * What Go's net/http refuses with 400 that node:http's parser lets through: a request line without
 * a version (node's HTTP/0.9; "GET /a\r\nX: y/b HTTP/1.1" would be read as that), an HTTP/1.1
 * request without Host, a target that is not a path.
 */
function badRequest(req: http.IncomingMessage): string | undefined {
  if (req.httpVersionMajor !== 1) return "400 Bad Request: malformed HTTP request";
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) return "400 Bad Request: missing required Host header";
  if (!req.url?.startsWith("/")) return "400 Bad Request";
  return undefined;
}

function toRequest(req: http.IncomingMessage, signal?: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    try {
      headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    } catch {
      // A value fetch refuses is dropped, as for upgrade heads.
    }
  }
  // Concatenated, never resolved: "//host/x" stays a path instead of naming a host.
  return new Request(`https://kubelet${req.url}`, { method: req.method, headers, signal });
}

/** Resolves with undefined after `n` turns of the microtask queue. */
function microtasks(n: number): Promise<undefined> {
  return new Promise((resolve) => {
    const step = (left: number) => (left === 0 ? resolve(undefined) : queueMicrotask(() => step(left - 1)));
    step(n);
  });
}

/** Resolves once `res` can take more (or is gone). */
function drained(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => (res.off("drain", done), res.off("close", done), resolve());
    res.once("drain", done);
    res.once("close", done);
  });
}

/**
 * Writes a fetch Response: a body that is already complete gets a Content-Length (as Bun.serve
 * sends it), a stream is sent chunked as it comes, with backpressure, until the client goes.
 */
async function writeResponse(res: http.ServerResponse, response: Response, head: boolean): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((v, k) => {
    if (k !== "content-length" && k !== "transfer-encoding" && k !== "connection") res.setHeader(k, v);
  });
  const reader = head ? undefined : response.body?.getReader();
  if (!reader) return void res.end();
  res.once("close", () => void reader.cancel().catch(() => {}));
  const first = await reader.read();
  // A second read that settles within a few microtasks means the body was complete (a text, a JSON
  // document); a stream being produced (logs -f) does not, and is sent as it comes.
  let next = first.done ? undefined : reader.read();
  const settled = next && (await Promise.race([next, microtasks(4)]));
  if (first.done || settled?.done) {
    const body = first.value ?? new Uint8Array();
    res.setHeader("content-length", body.length);
    return void res.end(body);
  }
  if (!res.write(first.value)) await drained(res);
  while (next && !res.destroyed) {
    const r = await next.catch(() => ({ done: true as const, value: undefined }));
    if (r.done) break;
    if (!res.write(r.value)) await drained(res);
    next = reader.read();
  }
  res.end();
}

export function createHttpOnSocket(o: HttpOnSocketOpts): HttpOnSocket {
  const headerTimeoutMs = o.headerTimeoutMs ?? 10_000;
  const conns = new WeakMap<object, ConnState>();
  const waitForRequest = (socket: Duplex, st: ConnState) => {
    clearTimeout(st.timer);
    st.timer = setTimeout(() => socket.destroy(), headerTimeoutMs);
    st.timer.unref?.();
  };
  const handle = async (req: Request, st: ConnState | undefined) => {
    try {
      return await o.handler(req, st?.identity ?? NO_CERT);
    } catch (err) {
      return o.onError ? o.onError(err as Error) : new Response("500 Internal Server Error\n", { status: 500 });
    }
  };

  /** One request: the connection's idle timer stops while it is answered. */
  function track(req: http.IncomingMessage, res: http.ServerResponse): ConnState | undefined {
    const st = conns.get(req.socket);
    if (!st) return undefined;
    st.active++;
    clearTimeout(st.timer);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      if (--st.active === 0 && !req.socket.destroyed) waitForRequest(req.socket, st);
    };
    res.once("finish", end);
    res.once("close", end);
    return st;
  }

  async function respond(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const st = track(req, res);
    // The body is never read by a kubelet handler: let it flow, so keep-alive can go on.
    req.resume();
    const bad = badRequest(req);
    if (bad) {
      res.writeHead(400, { "content-type": "text/plain; charset=utf-8", connection: "close" });
      return void res.end(bad);
    }
    // The request's signal ends with the client's side of the connection, as net/http cancels a
    // request's context when its background read sees EOF: a handler waiting on the runtime (/run's
    // ExecSync) or on a log file is cancelled when the client goes (or half-closes).
    const abort = new AbortController();
    const gone = () => abort.abort();
    res.once("close", gone);
    req.socket.once("end", gone);
    req.socket.once("close", gone);
    res.once("finish", () => (req.socket.off("end", gone), req.socket.off("close", gone)));
    await writeResponse(res, await handle(toRequest(req, abort.signal), st), req.method === "HEAD");
  }

  /** An upgrade request: the streaming endpoints take the socket, anything else is a plain answer. */
  async function upgrade(req: http.IncomingMessage, socket: Duplex, early: Buffer): Promise<void> {
    const st = conns.get(socket);
    clearTimeout(st?.timer);
    const bad = badRequest(req);
    if (bad) return writeRawResponse(socket, 400, bad);
    if (o.upgrade?.wants(req.method ?? "", req.url!)) return o.upgrade.serve(socket as Socket, headOf(req), early, st?.identity ?? NO_CERT);
    await writeStreamedResponse(socket, await handle(toRequest(req), st), req.method === "HEAD");
  }

  const server = http.createServer((req, res) => {
    respond(req, res).catch(() => res.destroy());
  });
  // A client that half-closes after its request (FIN) still gets the answer (net/http's behaviour).
  (server as unknown as { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, early: Buffer) => {
    upgrade(req, socket, early).catch(() => socket.destroy());
  });
  return {
    serve(socket, identity) {
      const st: ConnState = { identity, active: 0 };
      conns.set(socket, st);
      socket.once("close", () => clearTimeout(st.timer));
      waitForRequest(socket, st);
      server.emit("connection", socket);
    },
  };
}
