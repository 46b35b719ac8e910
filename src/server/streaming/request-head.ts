// The HTTP/1.1 request head of a connection's first request, read off the raw socket: Bun.serve
// cannot hand a handler its socket, so requests that switch protocols (SPDY/3.1, WebSocket) are
// recognised before Bun sees them and spliced by the kubelet itself (upstream gets the socket from
// net/http's Hijacker). Only what that decision and the re-issued request need is parsed.

/** Upstream kubelet server: MaxHeaderBytes 1 << 20. */
export const MAX_HEAD_BYTES = 1 << 20;

export interface RequestHead {
  method: string;
  /** The request target as sent ("/exec/ns/pod/c?command=sh"). */
  target: string;
  version: string;
  /** In order, names as sent. */
  headers: [string, string][];
}

const CRLFCRLF = Buffer.from("\r\n\r\n");
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Index just past the blank line ending the head, or -1 when it has not arrived yet. */
export function headEnd(buf: Buffer): number {
  const i = buf.indexOf(CRLFCRLF);
  return i < 0 ? -1 : i + 4;
}

/**
 * The request line, once its CRLF arrived: enough to decide whether the rest matters. "invalid" is
 * a line net/http would answer 400 to (not three parts, a method that is no token, a target with
 * control or non-ASCII bytes); "too-long" a line still without CRLF after 8 KiB.
 */
export function requestLine(buf: Buffer): { method: string; target: string; version: string } | "incomplete" | "invalid" | "too-long" {
  const eol = buf.indexOf("\r\n");
  if (eol < 0) return buf.length > 8192 ? "too-long" : "incomplete";
  const parts = buf.subarray(0, eol).toString("latin1").split(" ");
  if (parts.length !== 3 || !TOKEN.test(parts[0]!) || !/^HTTP\/\d\.\d$/.test(parts[2]!) || !/^[\x21-\x7e]+$/.test(parts[1]!)) return "invalid";
  return { method: parts[0]!, target: parts[1]!, version: parts[2]! };
}

/** Parses a complete head (through the blank line); undefined when it is not valid HTTP/1.x. */
export function parseRequestHead(head: Buffer): RequestHead | undefined {
  const line = requestLine(head);
  if (typeof line === "string" || !line.target.startsWith("/") || !/^HTTP\/1\.[01]$/.test(line.version)) return undefined;
  const lines = head.toString("latin1").split("\r\n").slice(1);
  const headers: [string, string][] = [];
  for (const l of lines) {
    if (l === "") continue;
    const colon = l.indexOf(":");
    if (colon <= 0 || !TOKEN.test(l.slice(0, colon))) return undefined;
    headers.push([l.slice(0, colon), l.slice(colon + 1).trim()]);
  }
  return { ...line, headers };
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
      // A value fetch refuses (control characters) is dropped; the auth filter only reads Authorization.
    }
  }
  return new Request(new URL(h.target, origin), { method: h.method, headers });
}
