// A unary-only gRPC server on node:http2 over a unix socket, for the kubelet's own gRPC endpoints
// (podresources, device plugin registration). Framing as in grpc.ts (1-byte flag + 4-byte length +
// message); the status goes in the trailers, or in the headers of a trailers-only reply for errors.
import { mkdirSync, rmSync } from "node:fs";
import http2 from "node:http2";
import path from "node:path";
import protobuf from "protobufjs";
import { kv, log } from "../log.ts";
import { frame, GrpcCode, GrpcError, unframe } from "./grpc.ts";

const DECODE: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true, objects: true };

/** Encode/decode by message name within one proto package. */
export interface ProtoCodec {
  encode(name: string, value: object): Uint8Array;
  decode<T>(name: string, bytes: Uint8Array): T;
}

export function protoCodec(protoText: string, pkg: string): ProtoCodec {
  const root = protobuf.parse(protoText).root;
  return {
    encode: (name, value) => {
      const t = root.lookupType(`${pkg}.${name}`);
      return t.encode(t.fromObject(value)).finish();
    },
    decode: <T>(name: string, bytes: Uint8Array): T => {
      const t = root.lookupType(`${pkg}.${name}`);
      return t.toObject(t.decode(bytes), DECODE) as T;
    },
  };
}

/** One method: request and response message names, and the call (its thrown GrpcError is the reply's status). */
export interface UnaryHandler {
  request: string;
  response: string;
  call(req: Record<string, unknown>): object | Promise<object>;
}

export interface UnaryGrpcServerOptions {
  socketPath: string;
  /** Full service name, e.g. "v1.PodResourcesLister"; several when one socket serves more (a CSI driver's Identity and Node). */
  service: string | readonly string[];
  codec: ProtoCodec;
  /** By method name. */
  handlers: Record<string, UnaryHandler>;
  /** Maps an error that is not a GrpcError to its status (default INTERNAL with the message). */
  errorStatus?(e: Error): { code: number; message: string } | undefined;
  /** Mode of the socket's directory when it is made (upstream 0750). */
  dirMode?: number;
}

export interface UnaryGrpcServer {
  readonly socketPath: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createUnaryGrpcServer(o: UnaryGrpcServerOptions): UnaryGrpcServer {
  const services: readonly string[] = typeof o.service === "string" ? [o.service] : o.service;
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  const fail = (stream: http2.ServerHttp2Stream, code: number, message: string) => {
    if (stream.destroyed || stream.headersSent) return;
    stream.respond(
      { ":status": 200, "content-type": "application/grpc", "grpc-status": String(code), "grpc-message": encodeURIComponent(message) },
      { endStream: true },
    );
  };
  const answer = async (stream: http2.ServerHttp2Stream, method: string, body: Buffer) => {
    const [, svc = "", m = ""] = method.split("/");
    const served = services.includes(svc);
    const h = served ? o.handlers[m] : undefined;
    if (!h) return fail(stream, GrpcCode.UNIMPLEMENTED, served ? `unknown method ${m} for service ${svc}` : `unknown service ${svc}`);
    let reply: Uint8Array;
    try {
      const req = o.codec.decode<Record<string, unknown>>(h.request, unframe(method, body));
      reply = o.codec.encode(h.response, await h.call(req));
    } catch (e) {
      if (e instanceof GrpcError) return fail(stream, e.code, e.details);
      const mapped = o.errorStatus?.(e as Error);
      if (mapped) return fail(stream, mapped.code, mapped.message);
      log.warn(`gRPC call failed ${kv({ method, error: (e as Error).message })}`);
      return fail(stream, GrpcCode.INTERNAL, (e as Error).message);
    }
    if (stream.destroyed) return;
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame(reply));
  };
  server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    const method = String(headers[":path"] ?? "");
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", () => {}); // a client that goes away mid-call is not our error
    stream.on("end", () => void answer(stream, method, Buffer.concat(chunks)));
  });

  return {
    socketPath: o.socketPath,
    async start() {
      mkdirSync(path.dirname(o.socketPath), { recursive: true, mode: o.dirMode ?? 0o750 });
      rmSync(o.socketPath, { force: true }); // a socket left by a previous run
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(o.socketPath, () => {
          server.off("error", reject);
          resolve();
        });
      });
    },
    async stop() {
      if (!server.listening) return;
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sessions) s.destroy();
      await closed;
      rmSync(o.socketPath, { force: true });
    },
  };
}
