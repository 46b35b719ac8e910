// The kubelet's calls on a CSI driver's Node service for volumes (upstream pkg/volume/csi csi_client.go
// NodeGetCapabilities, NodeStageVolume, NodeUnstageVolume, NodePublishVolume, NodeUnpublishVolume,
// NodeGetVolumeStats, NodeExpandVolume):
// one connection to the driver's unix socket per call, as driver-client.ts does for NodeGetInfo.
import { createUnixGrpcTransport } from "../../../cri/grpc.ts";
import { CSI_TIMEOUT_MS, csiCodec, socketPathOf } from "./driver-client.ts";

export interface NodeStageVolumeRequest {
  volumeId: string;
  publishContext: Record<string, string>;
  stagingTargetPath: string;
  volumeCapability: object;
  volumeContext: Record<string, string>;
  /** The data of the Secret the volume names for the call (never logged). */
  secrets?: Record<string, string>;
}

export interface NodePublishVolumeRequest extends NodeStageVolumeRequest {
  targetPath: string;
  readonly: boolean;
}

/** NodeExpandVolume's request: the volume grown to requiredBytes where it is published (and staged). */
export interface NodeExpandVolumeRequest {
  volumeId: string;
  volumePath: string;
  stagingTargetPath: string;
  requiredBytes: number;
  volumeCapability: object;
}

/** One entry of NodeGetVolumeStats: bytes or inodes of the volume. */
export interface VolumeUsage {
  unit: "BYTES" | "INODES" | "UNKNOWN";
  available: number;
  total: number;
  used: number;
}

/** A driver's Node service, by endpoint (its socket). Each call throws the driver's error. */
export interface CSINodeClient {
  /** The driver's node capabilities by name (STAGE_UNSTAGE_VOLUME, VOLUME_MOUNT_GROUP, …). */
  nodeGetCapabilities(endpoint: string): Promise<string[]>;
  nodeStageVolume(endpoint: string, req: NodeStageVolumeRequest): Promise<void>;
  nodeUnstageVolume(endpoint: string, volumeId: string, stagingTargetPath: string): Promise<void>;
  nodePublishVolume(endpoint: string, req: NodePublishVolumeRequest): Promise<void>;
  nodeUnpublishVolume(endpoint: string, volumeId: string, targetPath: string): Promise<void>;
  /** The usage of a published volume (drivers with GET_VOLUME_STATS); stagingTargetPath "" when not staged. */
  nodeGetVolumeStats?(endpoint: string, volumeId: string, volumePath: string, stagingTargetPath: string): Promise<VolumeUsage[]>;
  /** Grows a published volume's filesystem (drivers with EXPAND_VOLUME). */
  nodeExpandVolume?(endpoint: string, req: NodeExpandVolumeRequest): Promise<void>;
}

async function call<T>(endpoint: string, method: string, request: string, response: string, body: object, timeoutMs: number): Promise<T> {
  const codec = csiCodec();
  const transport = createUnixGrpcTransport(socketPathOf(endpoint));
  try {
    const reply = await transport.unary(`/csi.v1.Node/${method}`, codec.encode(request, body), timeoutMs);
    return codec.decode<T>(response, reply);
  } finally {
    transport.close();
  }
}

export function createCSINodeClient(timeoutMs = CSI_TIMEOUT_MS): CSINodeClient {
  return {
    async nodeGetCapabilities(endpoint) {
      const r = await call<{ capabilities: { rpc?: { type: string } | null }[] }>(
        endpoint,
        "NodeGetCapabilities",
        "NodeGetCapabilitiesRequest",
        "NodeGetCapabilitiesResponse",
        {},
        timeoutMs,
      );
      return r.capabilities.flatMap((c) => (c.rpc ? [c.rpc.type] : []));
    },
    async nodeStageVolume(endpoint, req) {
      await call(endpoint, "NodeStageVolume", "NodeStageVolumeRequest", "NodeStageVolumeResponse", req, timeoutMs);
    },
    async nodeUnstageVolume(endpoint, volumeId, stagingTargetPath) {
      await call(endpoint, "NodeUnstageVolume", "NodeUnstageVolumeRequest", "NodeUnstageVolumeResponse", { volumeId, stagingTargetPath }, timeoutMs);
    },
    async nodePublishVolume(endpoint, req) {
      await call(endpoint, "NodePublishVolume", "NodePublishVolumeRequest", "NodePublishVolumeResponse", req, timeoutMs);
    },
    async nodeUnpublishVolume(endpoint, volumeId, targetPath) {
      await call(endpoint, "NodeUnpublishVolume", "NodeUnpublishVolumeRequest", "NodeUnpublishVolumeResponse", { volumeId, targetPath }, timeoutMs);
    },
    async nodeGetVolumeStats(endpoint, volumeId, volumePath, stagingTargetPath) {
      const r = await call<{ usage: { unit?: string; available?: number | string; total?: number | string; used?: number | string }[] }>(
        endpoint,
        "NodeGetVolumeStats",
        "NodeGetVolumeStatsRequest",
        "NodeGetVolumeStatsResponse",
        { volumeId, volumePath, stagingTargetPath },
        timeoutMs,
      );
      const unit = (u?: string): VolumeUsage["unit"] => (u === "BYTES" || u === "INODES" ? u : "UNKNOWN");
      return (r.usage ?? []).map((u) => ({ unit: unit(u.unit), available: Number(u.available ?? 0), total: Number(u.total ?? 0), used: Number(u.used ?? 0) }));
    },
    async nodeExpandVolume(endpoint, req) {
      const { requiredBytes, ...rest } = req;
      const body = { ...rest, capacityRange: { requiredBytes, limitBytes: 0 } };
      await call(endpoint, "NodeExpandVolume", "NodeExpandVolumeRequest", "NodeExpandVolumeResponse", body, timeoutMs);
    },
  };
}
