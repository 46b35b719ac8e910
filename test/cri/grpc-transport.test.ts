// The gRPC unary transport on h2.ts against a node:http2 server on a unix socket.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeHttp2GrpcTransport, createUnixGrpcTransport, frame, GrpcCode, GrpcError, type UnaryTransport } from "../../src/cri/grpc.ts";

const dir = mkdtempSync(join(tmpdir(), "bunlet-grpc-transport-"));
const sock = join(dir, "s.sock");
let server: http2.Http2Server;
const sessions = new Set<http2.ServerHttp2Session>();
/** Streams the client reset before the server answered them. */
let resets = 0;

/** Replies by path: /echo returns the request message, /big/<n> n bytes, /status/<code> an error, ... */
function handle(stream: http2.ServerHttp2Stream, path: string, body: Buffer) {
  const msg = body.subarray(5);
  const ok = (reply: Uint8Array) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame(reply));
  };
  const [, kind, arg] = path.split("/");
  switch (kind) {
    case "echo":
      return ok(msg);
    case "big":
      return ok(new Uint8Array(Number(arg)).fill(7));
    case "status": // trailers-only
      return stream.respond(
        { ":status": 200, "content-type": "application/grpc", "grpc-status": arg!, "grpc-message": "not%20found%3A%20x" },
        { endStream: true },
      );
    case "http":
      return stream.respond({ ":status": Number(arg) }, { endStream: true });
    case "hang":
      return; // never answers
    case "drop":
      return stream.session?.destroy();
  }
}

beforeAll(async () => {
  // Room for 16 MiB replies in flight (node's default session memory is 10 MiB; h2.ts opens its windows wide).
  server = http2.createServer({ maxSessionMemory: 64 });
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream, headers) => {
    stream.on("aborted", () => resets++);
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => handle(stream as http2.ServerHttp2Stream, String(headers[":path"]), Buffer.concat(chunks)));
  });
  await new Promise<void>((r) => server.listen(sock, r));
});
afterAll(async () => {
  for (const s of sessions) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const call = (t: UnaryTransport, path: string, req = new Uint8Array([1, 2, 3]), deadlineMs = 5000) => t.unary(path, req, deadlineMs);
const grpcError = async (p: Promise<unknown>): Promise<GrpcError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof GrpcError) return e;
    throw e;
  }
  throw new Error("no error");
};

describe("createUnixGrpcTransport (h2.ts)", () => {
  test("unary calls, in series and 50 at once on one connection", async () => {
    const t = createUnixGrpcTransport(sock);
    expect([...(await call(t, "/echo"))]).toEqual([1, 2, 3]);
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => call(t, "/echo", new Uint8Array([i]))));
    expect(many.map((b) => b[0])).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(sessions.size).toBe(1);
    t.close();
  });

  test("a reply of 3 MB (many frames, past the default windows) and a request of 300 kB (the server's window)", async () => {
    const t = createUnixGrpcTransport(sock);
    const big = await call(t, "/big/3000000");
    expect(big.length).toBe(3_000_000);
    expect(big.every((b) => b === 7)).toBe(true);
    const req = new Uint8Array(300_000).map((_, i) => i % 251);
    const echoed = await call(t, "/echo", req);
    expect(echoed.length).toBe(req.length);
    expect(Buffer.from(echoed).equals(Buffer.from(req))).toBe(true);
    t.close();
  });

  test("errors: grpc-status of a trailers-only reply with its decoded message; an HTTP status; a deadline", async () => {
    const t = createUnixGrpcTransport(sock);
    const notFound = await grpcError(call(t, "/status/5"));
    expect([notFound.code, notFound.details]).toEqual([GrpcCode.NOT_FOUND, "not found: x"]);
    expect((await grpcError(call(t, "/http/503"))).details).toBe("http status 503");
    const late = await grpcError(call(t, "/hang", undefined, 100));
    expect(late.code).toBe(GrpcCode.DEADLINE_EXCEEDED);
    // The connection still serves.
    expect([...(await call(t, "/echo"))]).toEqual([1, 2, 3]);
    t.close();
  });

  test.each([
    ["h2.ts", createUnixGrpcTransport],
    ["node:http2", createNodeHttp2GrpcTransport],
  ] as const)(
    "%s: a reply past 16 MiB is RESOURCE_EXHAUSTED (upstream's maxMsgSize), not kept; the connection serves on",
    async (_name, make) => {
      const t = make(sock);
      const big = await grpcError(call(t, `/big/${17 * 1024 * 1024}`));
      expect(big.code).toBe(GrpcCode.RESOURCE_EXHAUSTED);
      expect(big.details).toMatch(/^grpc: received message larger than max \(\d+ vs\. 16777216\)$/);
      expect((await call(t, `/big/${16 * 1024 * 1024}`)).length).toBe(16 * 1024 * 1024);
      expect([...(await call(t, "/echo"))]).toEqual([1, 2, 3]);
      t.close();
    },
    30_000,
  );

  test.each([
    ["h2.ts", createUnixGrpcTransport],
    ["node:http2", createNodeHttp2GrpcTransport],
  ] as const)("%s: a caller's signal cancels the call (CANCELLED, the stream reset); the connection serves on", async (_name, make) => {
    const t = make(sock);
    const abort = new AbortController();
    const resetBefore = resets;
    setTimeout(() => abort.abort(), 50);
    const cancelled = await grpcError(t.unary("/hang", new Uint8Array([1]), 10_000, abort.signal));
    expect(cancelled.code).toBe(GrpcCode.CANCELLED);
    for (let i = 0; i < 100 && resets === resetBefore; i++) await Bun.sleep(10);
    expect(resets).toBe(resetBefore + 1);
    expect([...(await call(t, "/echo"))]).toEqual([1, 2, 3]);
    t.close();
  });

  test("a connection dropped mid-call is UNAVAILABLE, and the next call connects again", async () => {
    const t = createUnixGrpcTransport(sock);
    await call(t, "/echo");
    const dropped = await grpcError(call(t, "/drop"));
    expect(dropped.code).toBe(GrpcCode.UNAVAILABLE);
    expect([...(await call(t, "/echo"))]).toEqual([1, 2, 3]);
    t.close();
  });

  test("no server at the socket: UNAVAILABLE", async () => {
    const t = createUnixGrpcTransport(join(dir, "none.sock"));
    expect((await grpcError(call(t, "/echo"))).code).toBe(GrpcCode.UNAVAILABLE);
    t.close();
  });
});
