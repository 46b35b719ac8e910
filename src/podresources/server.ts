// The kubelet's podresources gRPC endpoint: v1.PodResourcesLister on <rootDir>/pod-resources/kubelet.sock
// (upstream pkg/kubelet/apis/podresources + server.ListenAndServePodResources). A unary-only gRPC server on
// node:http2 over a unix socket; framing as in src/cri/grpc.ts (1-byte flag + 4-byte length + message,
// status in the trailers, or in the headers of a trailers-only reply for errors).
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import path from "node:path";
import protobuf from "protobufjs";
import { frame, GrpcCode, GrpcError, unframe } from "../cri/grpc.ts";
import { kv, log } from "../log.ts";
import apiProtoPath from "./api.proto" with { type: "file" };
import { allocatableResources, getPodResources, listPodResources, PodNotFoundError, type CPUsProvider, type PodResourcesPod } from "./resources.ts";

export const SERVICE = "v1.PodResourcesLister";

/** Upstream: <rootDir>/pod-resources/kubelet.sock (the directory made by the kubelet, mode 0750). */
export function podResourcesSocketPath(rootDir: string): string {
  return path.join(rootDir, "pod-resources", "kubelet.sock");
}

export interface PodResourcesDeps {
  /** Admitted, non-terminal pods (List). */
  activePods(): PodResourcesPod[];
  /** Every pod the pod manager knows (Get). */
  pods(): PodResourcesPod[];
  /** The CPU manager's exclusive and allocatable CPUs (cpu_ids); default none. */
  cpus?: CPUsProvider;
  /** Feature gate KubeletPodResourcesGet (beta, default on); off → Get fails like upstream. */
  getEnabled?: boolean;
}

export interface PodResourcesServer {
  readonly socketPath: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const DECODE: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true, objects: true };

export function loadPodResourcesProto(protoText: string = readFileSync(apiProtoPath, "utf8")) {
  const root = protobuf.parse(protoText).root;
  return {
    encode: (name: string, value: object) => {
      const t = root.lookupType(`v1.${name}`);
      return t.encode(t.fromObject(value)).finish();
    },
    decode: <T>(name: string, bytes: Uint8Array): T => {
      const t = root.lookupType(`v1.${name}`);
      return t.toObject(t.decode(bytes), DECODE) as T;
    },
  };
}

type Handler = { request: string; response: string; call(req: Record<string, unknown>): object };

export function createPodResourcesServer(socketPath: string, deps: PodResourcesDeps): PodResourcesServer {
  const proto = loadPodResourcesProto();
  const handlers: Record<string, Handler> = {
    [`/${SERVICE}/List`]: {
      request: "ListPodResourcesRequest",
      response: "ListPodResourcesResponse",
      call: () => listPodResources(deps.activePods(), deps.cpus),
    },
    [`/${SERVICE}/GetAllocatableResources`]: {
      request: "AllocatableResourcesRequest",
      response: "AllocatableResourcesResponse",
      call: () => allocatableResources(deps.cpus),
    },
    [`/${SERVICE}/Get`]: {
      request: "GetPodResourcesRequest",
      response: "GetPodResourcesResponse",
      call: (req) => {
        // Upstream returns plain errors here, which gRPC reports as code Unknown.
        if (deps.getEnabled === false) throw new GrpcError("Get", GrpcCode.UNKNOWN, "PodResources API Get method disabled");
        return getPodResources(deps.pods(), String(req.podName ?? ""), String(req.podNamespace ?? ""), deps.cpus);
      },
    },
  };

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

  server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    const method = String(headers[":path"] ?? "");
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", () => {}); // a client that goes away mid-call is not our error
    stream.on("end", () => {
      const h = handlers[method];
      if (!h) {
        const [, svc = "", m = ""] = method.split("/");
        return fail(stream, GrpcCode.UNIMPLEMENTED, svc === SERVICE ? `unknown method ${m} for service ${SERVICE}` : `unknown service ${svc}`);
      }
      let reply: Uint8Array;
      try {
        const req = proto.decode<Record<string, unknown>>(h.request, unframe(method, Buffer.concat(chunks)));
        reply = proto.encode(h.response, h.call(req));
      } catch (e) {
        if (e instanceof PodNotFoundError) return fail(stream, GrpcCode.UNKNOWN, e.message);
        if (e instanceof GrpcError) return fail(stream, e.code, e.details);
        log.warn(`podresources call failed ${kv({ method, error: (e as Error).message })}`);
        return fail(stream, GrpcCode.INTERNAL, (e as Error).message);
      }
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(frame(reply));
    });
  });

  return {
    socketPath,
    async start() {
      mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o750 });
      rmSync(socketPath, { force: true }); // a socket left by a previous run
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(socketPath, () => {
          server.off("error", reject);
          resolve();
        });
      });
      log.info(`podresources API listening ${kv({ socket: socketPath })}`);
    },
    async stop() {
      if (!server.listening) return;
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sessions) s.destroy();
      await closed;
      rmSync(socketPath, { force: true });
    },
  };
}
