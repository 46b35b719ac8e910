// Writes an HTTP/1.1 response straight onto the socket of an upgrade request (node:http handed it
// over): a refusal (401/403 from the auth filter, 404 for an unknown pod, …), or the plain answer to an
// upgrade request on a path the streaming endpoints do not take. The connection is closed after it,
// as net/http does when a handler fails before hijacking.
import type { Duplex } from "node:stream";
import { STATUS_CODES } from "node:http";

export function rawResponseBytes(status: number, body: string | Uint8Array, headers: Record<string, string> = {}): Buffer {
  const payload = typeof body === "string" ? Buffer.from(body) : Buffer.from(body);
  const all: Record<string, string> = {
    "content-type": "text/plain; charset=utf-8",
    "x-content-type-options": "nosniff",
    ...headers,
    "content-length": String(payload.length),
    connection: "close",
  };
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Unknown"}`, ...Object.entries(all).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), payload]);
}

export function writeRawResponse(socket: Duplex, status: number, body: string | Uint8Array, headers?: Record<string, string>): void {
  if (socket.destroyed) return;
  socket.end(rawResponseBytes(status, body, headers));
  // The front allows half-open connections: a client that never closes its side is let go.
  setTimeout(() => socket.destroy(), 2000).unref();
}

/** Sends a fetch Response (small bodies: error texts) onto the socket. */
export async function writeFetchResponse(socket: Duplex, res: Response): Promise<void> {
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (k !== "content-length" && k !== "connection" && k !== "transfer-encoding") headers[k] = v;
  });
  writeRawResponse(socket, res.status, new Uint8Array(await res.arrayBuffer()), headers);
}

/**
 * Sends a fetch Response of any size onto the socket and closes it: an upgrade request the streaming
 * endpoints do not take is answered as a plain request (its body, a stream or not, ends with the
 * connection, as net/http answers with "Connection: close").
 */
export async function writeStreamedResponse(socket: Duplex, res: Response, head: boolean): Promise<void> {
  if (socket.destroyed) return;
  const lines = [`HTTP/1.1 ${res.status} ${STATUS_CODES[res.status] ?? "Unknown"}`];
  res.headers.forEach((v, k) => {
    if (k !== "content-length" && k !== "connection" && k !== "transfer-encoding") lines.push(`${k}: ${v}`);
  });
  lines.push("connection: close");
  socket.write(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
  const reader = head ? undefined : res.body?.getReader();
  socket.once("close", () => void reader?.cancel().catch(() => {}));
  for (;;) {
    const r = reader ? await reader.read().catch(() => ({ done: true as const, value: undefined })) : { done: true as const, value: undefined };
    if (r.done || socket.destroyed) break;
    if (!socket.write(r.value)) await new Promise((ok) => (socket.once("drain", ok), socket.once("close", ok)));
  }
  socket.end();
  setTimeout(() => socket.destroy(), 2000).unref();
}
