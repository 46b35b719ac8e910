// The kubelet's podresources gRPC endpoint: v1.PodResourcesLister on <rootDir>/pod-resources/kubelet.sock
// (upstream pkg/kubelet/apis/podresources + server.ListenAndServePodResources), on the shared unary
// gRPC server (src/cri/grpc-server.ts).
import { readFileSync } from "node:fs";
import path from "node:path";
import { GrpcCode, GrpcError } from "../cri/grpc.ts";
import { createUnaryGrpcServer, protoCodec, type ProtoCodec } from "../cri/grpc-server.ts";
import { kv, log } from "../log.ts";
import apiProtoPath from "./api.proto" with { type: "file" };
import { allocatableResources, getPodResources, listPodResources, PodNotFoundError, type PodResourcesPod, type ResourceProviders } from "./resources.ts";

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
  /** Feature gate KubeletPodResourcesGet (beta, default on); off → Get fails like upstream. */
  getEnabled?: boolean;
  /** The CPU manager's (cpu_ids) and the device manager's (devices) answers; default none. */
  providers?: ResourceProviders;
}

export interface PodResourcesServer {
  readonly socketPath: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function loadPodResourcesProto(protoText: string = readFileSync(apiProtoPath, "utf8")): ProtoCodec {
  return protoCodec(protoText, "v1");
}

export function createPodResourcesServer(socketPath: string, deps: PodResourcesDeps): PodResourcesServer {
  const providers = deps.providers ?? {};
  const server = createUnaryGrpcServer({
    socketPath,
    service: SERVICE,
    codec: loadPodResourcesProto(),
    handlers: {
      List: { request: "ListPodResourcesRequest", response: "ListPodResourcesResponse", call: () => listPodResources(deps.activePods(), providers) },
      GetAllocatableResources: {
        request: "AllocatableResourcesRequest",
        response: "AllocatableResourcesResponse",
        call: () => allocatableResources(providers),
      },
      Get: {
        request: "GetPodResourcesRequest",
        response: "GetPodResourcesResponse",
        call: (req) => {
          // Upstream returns plain errors here, which gRPC reports as code Unknown.
          if (deps.getEnabled === false) throw new GrpcError("Get", GrpcCode.UNKNOWN, "PodResources API Get method disabled");
          return getPodResources(deps.pods(), String(req.podName ?? ""), String(req.podNamespace ?? ""), providers);
        },
      },
    },
    errorStatus: (e) => (e instanceof PodNotFoundError ? { code: GrpcCode.UNKNOWN, message: e.message } : undefined),
  });
  return {
    socketPath,
    async start() {
      await server.start();
      log.info(`podresources API listening ${kv({ socket: socketPath })}`);
    },
    stop: () => server.stop(),
  };
}
