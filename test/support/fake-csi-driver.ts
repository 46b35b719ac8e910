// A CSI node driver and its registrar for tests, on the repo's own gRPC server (src/cri/grpc-server.ts):
// the registrar side serves pluginregistration.Registration on a socket in plugins_registry (GetInfo
// names the driver, type CSIPlugin, its endpoint and versions; NotifyRegistrationStatus is recorded),
// as node-driver-registrar does; the driver side serves csi.v1.Identity (GetPluginInfo) and csi.v1.Node
// (NodeGetInfo, NodeGetCapabilities, and the volume calls of csi-node-volumes.ts, which bind-mount a
// directory per volume) on its own socket. Upstream's node-driver-registrar and csi-driver-host-path are not
// served by this machine's Go module proxy (403), so the tests register this one instead.
import { createUnaryGrpcServer, type UnaryGrpcServer } from "../../src/cri/grpc-server.ts";
import { registrationCodec } from "../../src/pod/pluginmanager/index.ts";
import { csiCodec } from "../../src/pod/volumes/csi/index.ts";
import { join } from "node:path";
import { createFakeNodeVolumes, type FakeNodeVolumes, type NodeCall } from "./fake-csi-node-volumes.ts";
import { until } from "./wait.ts";

export type { NodeCall } from "./fake-csi-node-volumes.ts";

export interface FakeCSIDriverOptions {
  name: string;
  /** The registrar's socket, e.g. <rootDir>/plugins_registry/<name>-reg.sock. */
  registrationSocket: string;
  /** The driver's socket, e.g. <rootDir>/plugins/<name>/csi.sock. */
  csiSocket: string;
  nodeId: string;
  maxVolumesPerNode?: number;
  topology?: Record<string, string>;
  versions?: string[];
  /** The plugin type GetInfo reports (CSIPlugin unless a test wants another). */
  type?: string;
  /** Where the driver keeps each volume's data (a directory per volume ID); default a temporary one. */
  dataDir?: string;
  /** Node capabilities NodeGetCapabilities reports (default STAGE_UNSTAGE_VOLUME). */
  capabilities?: string[];
}

export interface RegistrationStatus {
  pluginRegistered: boolean;
  error: string;
}

export interface FakeCSIDriver {
  /** Every NotifyRegistrationStatus the kubelet sent, in order. */
  readonly statuses: RegistrationStatus[];
  /** The driver's calls, by method name. */
  readonly calls: string[];
  /** The volume calls (stage, publish and their reverse) with their requests, in order. */
  readonly nodeCalls: NodeCall[];
  /** The driver's volumes: their data directories and what is mounted. */
  readonly volumes: FakeNodeVolumes;
  /** Starts the driver, then the registrar (its socket appearing is what the kubelet sees). */
  start(): Promise<void>;
  /** Stops the registrar and removes its socket (the kubelet de-registers the driver). */
  stopRegistrar(): Promise<void>;
  startRegistrar(): Promise<void>;
  stop(): Promise<void>;
}

export function createFakeCSIDriver(o: FakeCSIDriverOptions): FakeCSIDriver {
  const statuses: RegistrationStatus[] = [];
  const calls: string[] = [];
  const volumes = createFakeNodeVolumes(o.dataDir ?? `/tmp/bunlet-fake-csi-${process.pid}-${o.name}`);
  const driver: UnaryGrpcServer = createUnaryGrpcServer({
    socketPath: o.csiSocket,
    service: ["csi.v1.Identity", "csi.v1.Node"],
    codec: csiCodec(),
    handlers: {
      GetPluginInfo: {
        request: "GetPluginInfoRequest",
        response: "GetPluginInfoResponse",
        call: () => (calls.push("GetPluginInfo"), { name: o.name, vendorVersion: "0.0.1" }),
      },
      NodeGetInfo: {
        request: "NodeGetInfoRequest",
        response: "NodeGetInfoResponse",
        call: () => {
          calls.push("NodeGetInfo");
          return { nodeId: o.nodeId, maxVolumesPerNode: o.maxVolumesPerNode ?? 0, accessibleTopology: o.topology ? { segments: o.topology } : undefined };
        },
      },
      NodeGetCapabilities: {
        request: "NodeGetCapabilitiesRequest",
        response: "NodeGetCapabilitiesResponse",
        call: () => {
          calls.push("NodeGetCapabilities");
          return { capabilities: (o.capabilities ?? ["STAGE_UNSTAGE_VOLUME"]).map((type) => ({ rpc: { type } })) };
        },
      },
      ...volumes.handlers((m) => calls.push(m)),
    },
  });
  const registrar: UnaryGrpcServer = createUnaryGrpcServer({
    socketPath: o.registrationSocket,
    service: "pluginregistration.Registration",
    codec: registrationCodec(),
    handlers: {
      GetInfo: {
        request: "InfoRequest",
        response: "PluginInfo",
        call: () => ({ type: o.type ?? "CSIPlugin", name: o.name, endpoint: o.csiSocket, supportedVersions: o.versions ?? ["1.0.0"] }),
      },
      NotifyRegistrationStatus: {
        request: "RegistrationStatus",
        response: "RegistrationStatusResponse",
        call: (req) => {
          statuses.push({ pluginRegistered: req.pluginRegistered === true, error: String(req.error ?? "") });
          return {};
        },
      },
    },
  });
  return {
    statuses,
    calls,
    nodeCalls: volumes.calls,
    volumes,
    async start() {
      await driver.start();
      await registrar.start();
    },
    stopRegistrar: () => registrar.stop(),
    startRegistrar: () => registrar.start(),
    async stop() {
      await registrar.stop();
      await driver.stop();
      volumes.cleanUp();
    },
  };
}

/**
 * A driver of the node whose root directory is `rootDir` — its registrar's socket in plugins_registry, its
 * own at plugins/<name>/csi.sock, node ID node-1 — started, once bunlet has registered it.
 */
export async function startRegisteredCSIDriver(rootDir: string, name: string, o: Partial<FakeCSIDriverOptions> = {}): Promise<FakeCSIDriver> {
  const driver = createFakeCSIDriver({
    name,
    registrationSocket: join(rootDir, "plugins_registry", `${name}-reg.sock`),
    csiSocket: join(rootDir, "plugins", name, "csi.sock"),
    nodeId: "node-1",
    ...o,
  });
  await driver.start();
  await until(`the driver ${name} registered`, () => driver.statuses.some((s) => s.pluginRegistered), 30_000, { intervalMs: 200 });
  return driver;
}
