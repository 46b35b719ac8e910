// The kubelet's client of one CSI driver's Node service (upstream pkg/volume/csi/csi_client.go
// NodeGetInfo): one connection to the driver's endpoint (a unix socket) per call, on the repo's gRPC
// transport, closed afterwards.
import { readFileSync } from "node:fs";
import { createUnixGrpcTransport } from "../../../cri/grpc.ts";
import { protoCodec, type ProtoCodec } from "../../../cri/grpc-server.ts";
import csiProtoPath from "./csi.proto" with { type: "file" };

/** Upstream csiTimeout: the deadline of the registration's NodeGetInfo. */
export const CSI_TIMEOUT_MS = 120_000;

/** The codec of package csi.v1 (also the test drivers' side). */
export const csiCodec = (): ProtoCodec => protoCodec(readFileSync(csiProtoPath, "utf8"), "csi.v1");

export interface NodeInfo {
  nodeId: string;
  maxVolumesPerNode: number;
  /** The driver's accessible_topology segments, or undefined when it gave none. */
  accessibleTopology?: Record<string, string>;
}

/** NodeGetInfo of the driver at endpoint; throws the call's error. */
export type NodeGetInfo = (endpoint: string, timeoutMs: number) => Promise<NodeInfo>;

/** A unix socket path from an endpoint that may carry the unix:// scheme. */
export const socketPathOf = (endpoint: string) => endpoint.replace(/^unix:\/\//, "");

export const nodeGetInfo: NodeGetInfo = async (endpoint, timeoutMs) => {
  const codec = csiCodec();
  const transport = createUnixGrpcTransport(socketPathOf(endpoint));
  try {
    const reply = await transport.unary("/csi.v1.Node/NodeGetInfo", codec.encode("NodeGetInfoRequest", {}), timeoutMs);
    const r = codec.decode<{ nodeId: string; maxVolumesPerNode: number; accessibleTopology?: { segments: Record<string, string> } | null }>(
      "NodeGetInfoResponse",
      reply,
    );
    return { nodeId: r.nodeId, maxVolumesPerNode: r.maxVolumesPerNode, accessibleTopology: r.accessibleTopology?.segments };
  } finally {
    transport.close();
  }
};
