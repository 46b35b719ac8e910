// The first request of each main-port connection, looked at before Bun.serve gets the bytes: an
// upgrade request for a streaming endpoint is served by the UpgradeHook on the raw socket; anything
// else (the common case, decided as soon as the request line arrived) is passed on untouched, with
// the bytes read so far. Clients open a new connection for every upgrade (client-go's SPDY and
// WebSocket dialers, kube-apiserver's proxy), so the first request is the one that matters.
import type { Socket } from "node:net";
import type { UpgradeHook } from "./handler.ts";
import { headEnd, isUpgradeRequest, MAX_HEAD_BYTES, parseRequestHead, requestLine, type RequestHead } from "./request-head.ts";

/** Methods passed on to Bun.serve (net/http would route any token; Bun closes the connection on others). */
const SERVED_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT"]);

export type Sniffed =
  | { kind: "upgrade"; head: RequestHead; early: Buffer }
  /**
   * Answered here, as net/http would: a malformed request line (400; Bun answers some with 505), a
   * version other than HTTP/1.x (505), or a method Bun's parser drops the connection on without a
   * word (405).
   */
  | { kind: "refuse"; status: 400 | 405 | 505; body: string }
  | { kind: "pass"; bytes: Buffer }
  | { kind: "closed" };

/**
 * Reads until the hook's decision is known. A slow or silent client is handed on after
 * `timeoutMs` with what it sent: Bun.serve's own idle timeout and limits then apply to it.
 */
export function sniffFirstRequest(socket: Socket, hook: Pick<UpgradeHook, "wants">, timeoutMs = 10_000): Promise<Sniffed> {
  return new Promise((resolve) => {
    let buf: Buffer = Buffer.alloc(0);
    let wanted = false;
    const timer = setTimeout(() => done({ kind: "pass", bytes: buf }), timeoutMs);
    function done(r: Sniffed) {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("close", onClosed);
      socket.off("error", onClosed);
      socket.pause();
      resolve(r);
    }
    function onClosed() {
      done({ kind: "closed" });
    }
    // Half-closed after sending (the front allows half-open connections): Bun answers what arrived.
    function onEnd() {
      done(buf.length > 0 ? { kind: "pass", bytes: buf } : { kind: "closed" });
    }
    function onData(chunk: Buffer) {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (!wanted) {
        const line = requestLine(buf);
        if (line === "incomplete") return;
        if (line === "invalid") return done({ kind: "refuse", status: 400, body: "400 Bad Request" });
        if (line !== "too-long" && !/^HTTP\/1\.[01]$/.test(line.version)) return done({ kind: "refuse", status: 505, body: "505 HTTP Version Not Supported: unsupported protocol version" });
        if (line !== "too-long" && !SERVED_METHODS.has(line.method)) return done({ kind: "refuse", status: 405, body: "405: Method Not Allowed\n" });
        if (line === "too-long" || !hook.wants(line.method, line.target)) return done({ kind: "pass", bytes: buf });
        wanted = true;
      }
      const end = headEnd(buf);
      if (end < 0) {
        if (buf.length > MAX_HEAD_BYTES) done({ kind: "pass", bytes: buf });
        return;
      }
      const head = parseRequestHead(buf.subarray(0, end));
      if (!head || !isUpgradeRequest(head)) return done({ kind: "pass", bytes: buf });
      done({ kind: "upgrade", head, early: buf.subarray(end) });
    }
    socket.on("data", onData);
    socket.once("end", onEnd);
    socket.once("close", onClosed);
    socket.once("error", onClosed);
  });
}
