// The head of a request that switches protocols (SPDY/3.1, WebSocket), as node:http's parser
// handed it over with the raw socket (http-on-socket.ts, the 'upgrade' event; upstream gets the
// socket from net/http's Hijacker). The parser already refused what net/http refuses — bare LF or
// CR line ends, obs-folded lines, control bytes in a value, a head past its size cap — so what is
// re-issued to the runtime is exactly what was parsed, one header a line.
import type { IncomingMessage } from "node:http";

export interface RequestHead {
  method: string;
  /** The request target as sent ("/exec/ns/pod/c?command=sh"). */
  target: string;
  version: string;
  /** In order, names as sent. */
  headers: [string, string][];
}

const CRLFCRLF = Buffer.from("\r\n\r\n");

/** Index just past the blank line ending a head, or -1 when it has not arrived yet (from byte `from` on). */
export function headEnd(buf: Buffer, from = 0): number {
  const i = buf.indexOf(CRLFCRLF, Math.max(0, from));
  return i < 0 ? -1 : i + 4;
}

/** The parsed head of an upgrade request. */
export function headOf(req: IncomingMessage): RequestHead {
  const headers: [string, string][] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  return { method: req.method ?? "", target: req.url ?? "", version: `HTTP/${req.httpVersion}`, headers };
}

/** All values of a header, case-insensitively. */
export function headerValues(h: RequestHead, name: string): string[] {
  const n = name.toLowerCase();
  return h.headers.filter(([k]) => k.toLowerCase() === n).map(([, v]) => v);
}

/** Upstream httpstream.IsUpgradeRequest: a Connection header mentioning "upgrade". */
export function isUpgradeRequest(h: RequestHead): boolean {
  return headerValues(h, "connection").some((v) => v.toLowerCase().includes("upgrade"));
}

/** Upstream wsstream.IsWebSocketRequest: an upgrade to "websocket". */
export function isWebSocketRequest(h: RequestHead): boolean {
  return isUpgradeRequest(h) && headerValues(h, "upgrade").some((v) => v.toLowerCase() === "websocket");
}

/** The head as a fetch Request (no body), for the auth filter and the router. */
export function toRequest(h: RequestHead, origin: string): Request {
  const headers = new Headers();
  for (const [k, v] of h.headers) {
    try {
      headers.append(k, v);
    } catch {
      // A value fetch refuses is dropped; the auth filter only reads Authorization.
    }
  }
  // Concatenated, never resolved: "//host/x" stays a path instead of naming a host.
  return new Request(`${origin}${h.target}`, { method: h.method, headers });
}
