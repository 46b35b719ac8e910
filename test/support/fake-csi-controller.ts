// The Controller service of the test CSI driver (fake-csi-driver.ts is its node side), on the repo's own
// gRPC server, for upstream's external-provisioner and external-attacher run as host processes against
// its socket (csi-sidecars.ts). What a sidecar asks at start-up, as csi-lib-utils' rpc package does:
// Probe, GetPluginInfo (the driver's name is the provisioner's and the attacher's), GetPluginCapabilities
// (CONTROLLER_SERVICE) and ControllerGetCapabilities (CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME).
// CreateVolume makes the volume's backing directory (the one the node side stages and publishes, so
// pods see it), idempotently by name as the spec asks; DeleteVolume removes it. ControllerPublishVolume
// records the volume attached to the node and answers a publish context naming both, which the attacher
// writes into the VolumeAttachment and the kubelet passes on to NodeStage/NodePublish;
// ControllerUnpublishVolume forgets it. Every call is recorded with its request.
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createUnaryGrpcServer, protoCodec, type UnaryHandler } from "../../src/cri/grpc-server.ts";
import { GrpcCode, GrpcError } from "../../src/cri/grpc.ts";
import nodeProtoPath from "../../src/pod/volumes/csi/csi.proto" with { type: "file" };
import controllerProtoPath from "./csi-controller.proto" with { type: "file" };

export interface ControllerCall {
  method: string;
  request: Record<string, unknown>;
}

export interface FakeCSIControllerOptions {
  /** The driver's name (GetPluginInfo), the provisioner and attacher name the sidecars take from it. */
  name: string;
  /** The controller's socket, the sidecars' --csi-address. */
  socket: string;
  /** The backing directory of a volume ID: the node side's, so NodeStage mounts what CreateVolume made. */
  volumeDir(volumeId: string): string;
}

export interface FakeCSIController {
  readonly calls: ControllerCall[];
  /** Volume ID → the node IDs it is published to (ControllerPublish minus ControllerUnpublish). */
  readonly attached: ReadonlyMap<string, ReadonlySet<string>>;
  /** The publish context ControllerPublishVolume answers for a volume and node. */
  publishContext(volumeId: string, nodeId: string): Record<string, string>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const CAPABILITIES = ["CREATE_DELETE_VOLUME", "PUBLISH_UNPUBLISH_VOLUME"];

/** bunlet's CSI subset and the controller's part of the spec, one package: the second file's header dropped. */
export const controllerCodec = () =>
  protoCodec(readFileSync(nodeProtoPath, "utf8") + readFileSync(controllerProtoPath, "utf8").replace(/^(syntax|package) .*$/gm, ""), "csi.v1");

export function createFakeCSIController(o: FakeCSIControllerOptions): FakeCSIController {
  const calls: ControllerCall[] = [];
  const attached = new Map<string, Set<string>>();
  const publishContext = (volumeId: string, nodeId: string) => ({ attachedVolume: volumeId, attachedNode: nodeId });
  const str = (v: unknown) => String(v ?? "");
  /** A recorded call; the request and response message names follow the method's, as in the spec. */
  const call = (method: string, act: (req: Record<string, unknown>) => object): UnaryHandler => ({
    request: `${method}Request`,
    response: `${method}Response`,
    call: (req) => {
      calls.push({ method, request: req });
      return act(req);
    },
  });
  const existing = (method: string, volumeId: string): string => {
    const dir = o.volumeDir(volumeId);
    if (volumeId === "" || !existsSync(dir)) throw new GrpcError(method, GrpcCode.NOT_FOUND, `volume ${JSON.stringify(volumeId)} does not exist`);
    return dir;
  };

  const server = createUnaryGrpcServer({
    socketPath: o.socket,
    service: ["csi.v1.Identity", "csi.v1.Controller"],
    codec: controllerCodec(),
    handlers: {
      GetPluginInfo: call("GetPluginInfo", () => ({ name: o.name, vendorVersion: "0.0.1" })),
      GetPluginCapabilities: call("GetPluginCapabilities", () => ({ capabilities: [{ service: { type: "CONTROLLER_SERVICE" } }] })),
      Probe: call("Probe", () => ({})),
      ControllerGetCapabilities: call("ControllerGetCapabilities", () => ({ capabilities: CAPABILITIES.map((type) => ({ rpc: { type } })) })),
      CreateVolume: call("CreateVolume", (req) => {
        const name = str(req.name);
        if (name === "") throw new GrpcError("CreateVolume", GrpcCode.INVALID_ARGUMENT, "name is required");
        mkdirSync(o.volumeDir(name), { recursive: true, mode: 0o777 });
        const capacityBytes = Number((req.capacityRange as { requiredBytes?: number } | null)?.requiredBytes ?? 0);
        return { volume: { volumeId: name, capacityBytes, volumeContext: { ...(req.parameters as Record<string, string>) } } };
      }),
      DeleteVolume: call("DeleteVolume", (req) => {
        // Deleting a volume that is gone succeeds (the spec: DeleteVolume is idempotent).
        rmSync(o.volumeDir(str(req.volumeId)), { recursive: true, force: true });
        return {};
      }),
      ControllerPublishVolume: call("ControllerPublishVolume", (req) => {
        const volumeId = str(req.volumeId);
        const nodeId = str(req.nodeId);
        existing("ControllerPublishVolume", volumeId);
        if (nodeId === "") throw new GrpcError("ControllerPublishVolume", GrpcCode.INVALID_ARGUMENT, "node_id is required");
        attached.set(volumeId, (attached.get(volumeId) ?? new Set()).add(nodeId));
        return { publishContext: publishContext(volumeId, nodeId) };
      }),
      ControllerUnpublishVolume: call("ControllerUnpublishVolume", (req) => {
        attached.get(str(req.volumeId))?.delete(str(req.nodeId));
        return {};
      }),
    },
  });
  return { calls, attached, publishContext, start: () => server.start(), stop: () => server.stop() };
}
