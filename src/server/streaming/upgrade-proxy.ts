// Upstream's UpgradeAwareHandler (apimachinery/pkg/util/proxy) as the kubelet uses it for
// exec/attach/port-forward (proxyStream, upgradeRequired): re-issue the client's upgrade request to
// the runtime's streaming URL on a new connection, read the backend's answer, then
//   101 Switching Protocols → send it to the client and splice both sockets until either closes;
//   an error status (≥ 400)  → relay the backend's response and close;
//   anything else            → 500 "invalid upgrade response: status code N".
// The client's credentials (Authorization) are not passed on: the runtime's URL is its own
// one-time token.
import net from "node:net";
import tls from "node:tls";
import { log, kv } from "../../log.ts";
import { headEnd, type RequestHead } from "./request-head.ts";
import { writeRawResponse } from "./raw-response.ts";

export interface ProxyUpgradeOpts {
  /** The client's address, appended to X-Forwarded-For. */
  clientAddress?: string;
  /** How long the backend may take to answer the upgrade (default 30 s). */
  responseTimeoutMs?: number;
}

const DROP = new Set(["host", "authorization", "content-length"]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** httpguts.ValidHeaderFieldValue: no control bytes but HTAB (so no CR or LF that would start a new line). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control bytes are what it refuses
const FIELD_VALUE = /^[^\x00-\x08\x0a-\x1f\x7f]*$/;

export class HeadSmugglingError extends Error {
  override name = "HeadSmugglingError";
}

/**
 * The request sent to the backend: the client's head, aimed at `location`. A name or value that
 * would not stay one line on the wire (the parser refuses them first; this is the last guard) is
 * an error, never passed on.
 */
export function backendRequestHead(h: RequestHead, location: URL, clientAddress?: string): Buffer {
  const lines = [`${h.method} ${location.pathname}${location.search} HTTP/1.1`, `Host: ${location.host}`];
  let forwarded: string | undefined;
  for (const [k, v] of h.headers) {
    if (!TOKEN.test(k) || !FIELD_VALUE.test(v)) throw new HeadSmugglingError(`invalid header field ${JSON.stringify(k)}`);
    const n = k.toLowerCase();
    if (DROP.has(n)) continue;
    if (n === "x-forwarded-for") {
      forwarded = forwarded ? `${forwarded}, ${v}` : v;
      continue;
    }
    lines.push(`${k}: ${v}`);
  }
  if (clientAddress) forwarded = forwarded ? `${forwarded}, ${clientAddress}` : clientAddress;
  if (forwarded) lines.push(`X-Forwarded-For: ${forwarded}`);
  return Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
}

function dial(url: URL): net.Socket {
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return url.protocol === "https:" ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host }) : net.connect({ host, port });
}

/** Reads the backend's response head; resolves with the status and every byte read so far. */
function readResponseHead(backend: net.Socket, timeoutMs: number): Promise<{ status: number; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => done(new Error(`no response from the streaming server within ${timeoutMs} ms`)), timeoutMs);
    function done(err?: Error, status?: number) {
      clearTimeout(timer);
      backend.off("data", onData);
      backend.off("error", onError);
      backend.off("end", onEnd);
      backend.pause();
      if (err) reject(err);
      else resolve({ status: status!, bytes: Buffer.concat(chunks, size) });
    }
    const onError = (e: Error) => done(e);
    const onEnd = () => done(new Error("the streaming server closed the connection before answering"));
    // Linear: each chunk is searched once (with the 3 bytes before it, for a CRLFCRLF split across chunks).
    let tail = Buffer.alloc(0);
    const onData = (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      const window = Buffer.concat([tail, c]);
      tail = window.subarray(-3);
      if (headEnd(window) < 0) {
        if (size > 64 * 1024) done(new Error("the streaming server's response head is too large"));
        return;
      }
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(Buffer.concat(chunks, size).subarray(0, 16).toString("latin1"));
      if (!m) return done(new Error("the streaming server answered something that is not HTTP/1.1"));
      done(undefined, Number(m[1]));
    };
    backend.on("data", onData);
    backend.once("error", onError);
    backend.once("end", onEnd);
  });
}

/** Destroys both sockets when either side closes or fails (upstream closes both when one copy ends). */
export function splice(a: net.Socket, b: net.Socket): void {
  const close = () => {
    a.destroy();
    b.destroy();
  };
  for (const s of [a, b]) {
    s.on("error", close);
    s.on("close", close);
  }
  a.pipe(b);
  b.pipe(a);
}

/** Resolves with the status the client got (101 once spliced). */
export async function proxyUpgrade(client: net.Socket, head: RequestHead, early: Buffer, location: string, opts: ProxyUpgradeOpts = {}): Promise<number> {
  const url = new URL(location);
  let request: Buffer;
  try {
    request = backendRequestHead(head, url, opts.clientAddress);
  } catch (err) {
    if (!(err instanceof HeadSmugglingError)) throw err;
    writeRawResponse(client, 400, "400 Bad Request: malformed MIME header line");
    return 400;
  }
  const backend = dial(url);
  backend.on("error", () => {}); // reported through readResponseHead / splice
  const fail = (err: Error) => {
    log.error(`Error while proxying request ${kv({ url: `${url.origin}${url.pathname.replace(/[^/]+$/, "…")}`, error: err.message })}`);
    backend.destroy();
    writeRawResponse(client, 500, err.message);
    return 500;
  };
  // A client gone while the backend is still answering takes the backend connection with it.
  client.on("error", () => backend.destroy());
  client.on("close", () => backend.destroy());
  backend.write(request);
  if (early.length > 0) backend.write(early);
  let answer: { status: number; bytes: Buffer };
  try {
    answer = await readResponseHead(backend, opts.responseTimeoutMs ?? 30_000);
  } catch (err) {
    return fail(err as Error);
  }
  if (client.destroyed) {
    backend.destroy();
    return answer.status;
  }
  if (answer.status === 101) {
    client.write(answer.bytes);
    splice(client, backend);
    backend.resume();
    client.resume();
    return 101;
  }
  if (answer.status < 400) return fail(new Error(`invalid upgrade response: status code ${answer.status}`));
  // The backend's error, relayed as it is, then closed: at the end of its Content-Length body, when
  // the backend closes, or after 10 s (upstream's deadline for this relay).
  const length = /\r\ncontent-length:\s*(\d+)\r\n/i.exec(answer.bytes.toString("latin1"))?.[1];
  let left = length === undefined ? Infinity : headEnd(answer.bytes) + Number(length) - answer.bytes.length;
  const finish = () => {
    clearTimeout(timer);
    backend.destroy();
    client.end();
  };
  const timer = setTimeout(finish, 10_000);
  client.write(answer.bytes);
  if (left <= 0) {
    finish();
    return answer.status;
  }
  backend.on("data", (c: Buffer) => {
    client.write(left === Infinity ? c : c.subarray(0, left));
    left -= c.length;
    if (left <= 0) finish();
  });
  backend.on("close", finish);
  backend.resume();
  return answer.status;
}
