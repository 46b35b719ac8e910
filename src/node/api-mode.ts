// API-server mode for the node (upstream: the kubelet's syncNodeStatus loop + nodelease controller,
// started by Kubelet.Run when a kubeClient exists): registration + status, and the lease, as one
// agent component. Everything the status needs comes in through NodeFacts, so the agent wires the
// runtime, the eviction manager and the machine, and a test wires fakes.
import type { Clock, TimerHandle } from "../clock.ts";
import type { Threshold } from "../eviction/threshold.ts";
import type { NodeConditionType } from "../eviction/index.ts";
import { nodeSchema, type KubeClient, type Node } from "../kube/index.ts";
import { startReflector, type Reflector } from "../pod/apiobjects/reflector.ts";
import type { EventRecorder } from "../events/types.ts";
import { kv, log } from "../log.ts";
import type { NodeAddress } from "./addresses.ts";
import { createLeaseController, type LeaseController } from "./lease-controller.ts";
import type { MachineInfo } from "./machine-info.ts";
import type { NodeRegistration } from "./node-object.ts";
import type { ContainerImage, DevicePluginResources, NodeStatusInput } from "./node-status.ts";
import { createNodeStatusController, type NodeStartupObserver, type NodeStatusController } from "./status-controller.ts";
import { RUNTIME_NOT_CHECKED, type RuntimeReadiness } from "../pod/runtime-state.ts";

export interface NodeFacts {
  machine(): Promise<MachineInfo>;
  /** Throws when the addresses cannot be set (a --node-ip validateNodeIP refuses). */
  addresses(): NodeAddress[];
  runtime(): Promise<RuntimeReadiness>;
  images(): Promise<ContainerImage[]>;
  pressure(): readonly NodeConditionType[];
  hardEvictionThresholds: readonly Threshold[];
  /** The device plugins' resources (src/pod/devicemanager). */
  devicePlugins?(): DevicePluginResources;
  /** The attachable volumes pods use (upstream volumeManager.GetVolumesInUse). */
  volumesInUse?(): string[];
  /** upstream MarkVolumesAsReportedInUse: the volumes a node status update that succeeded lists in use. */
  markVolumesReportedInUse?(names: readonly string[]): void;
}

export interface NodeApiModeSettings {
  registration: NodeRegistration;
  registerNode: boolean;
  kubeletVersion: string;
  kubeletPort: number;
  maxPods: number;
  maxImages: number;
  systemReserved?: Record<string, string>;
  kubeReserved?: Record<string, string>;
  updateFrequencyMs: number;
  reportFrequencyMs: number;
  leaseDurationSeconds: number;
  /** kubelet_node_startup_* */
  startup?: NodeStartupObserver;
}

export interface NodeApiMode {
  name: string;
  start(): void;
  stop(): void;
  status: NodeStatusController;
  lease: LeaseController;
}

/**
 * Upstream's node status reads the runtime state its own loop keeps (runtimeState), so a node whose
 * runtime has not answered yet registers at once, NotReady with this reason. Until the runtime has
 * answered once, its facts are given this long.
 */
export const FIRST_RUNTIME_ANSWER_WAIT_MS = 1000;

/** `p`, or `fallback` if `p` has not settled within `ms`. */
function within<T>(p: Promise<T>, ms: number, fallback: T, clock: Clock): Promise<T> {
  let timer: TimerHandle | undefined;
  const late = new Promise<T>((resolve) => {
    timer = clock.setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([p, late]).finally(() => clock.clearTimeout(timer!));
}

/** The Node of a watch (metadata.name=<name>) as nodeSchema reads it, parsed once per object it sees. */
function watchedNode(name: string, watch: () => Reflector | undefined): () => Node | undefined {
  let last: { raw: unknown; node?: Node } | undefined;
  return () => {
    const raw = watch()?.objects.get(name);
    if (raw === undefined) return undefined;
    if (last?.raw !== raw) {
      const parsed = nodeSchema.safeParse(raw);
      last = { raw, node: parsed.success ? parsed.data : undefined };
    }
    return last?.node;
  };
}

/**
 * `watchClient`, when given, watches the node's own Node (upstream's node informer, on the main client:
 * the heartbeat client's short timeout would cut a watch) for the status sync's first read.
 */
export function createNodeApiMode(
  s: NodeApiModeSettings,
  facts: NodeFacts,
  heartbeat: KubeClient,
  clock: Clock,
  events?: EventRecorder,
  watchClient?: KubeClient,
): NodeApiMode {
  const name = s.registration.nodeName;
  let nodeWatch: Reflector | undefined;
  let machine: MachineInfo | undefined;
  let runtimeAnswered = false;
  // upstream runtimeState keeps the handlers the runtime last listed while it does not answer.
  let runtimeHandlers: RuntimeReadiness["handlers"];
  /** Upstream setNodeStatus: a setter that fails is logged at each update and leaves its fields as they were. */
  function addresses(): NodeAddress[] | undefined {
    try {
      return facts.addresses();
    } catch (e) {
      log.error(`Failed to set some node status fields ${kv({ node: s.registration.nodeName, error: (e as Error).message })}`);
      return undefined;
    }
  }
  async function gather(): Promise<NodeStatusInput> {
    machine ??= await facts.machine(); // static for the life of the process (boot id, sizes)
    let [runtime, images] = [facts.runtime(), facts.images().catch(() => [])];
    if (!runtimeAnswered) {
      runtime = within(runtime, FIRST_RUNTIME_ANSWER_WAIT_MS, { errors: [RUNTIME_NOT_CHECKED] }, clock);
      images = within(images, FIRST_RUNTIME_ANSWER_WAIT_MS, [], clock);
    }
    const [r, imgs] = await Promise.all([runtime, images]);
    runtimeAnswered ||= r.version !== undefined;
    runtimeHandlers = r.handlers ?? runtimeHandlers;
    return {
      nowMs: clock.now(),
      machine,
      addresses: addresses(),
      kubeletVersion: s.kubeletVersion,
      runtimeVersion: r.version,
      readyErrors: r.errors,
      pressure: facts.pressure(),
      images: imgs,
      maxImages: s.maxImages,
      maxPods: s.maxPods,
      kubeletPort: s.kubeletPort,
      systemReserved: s.systemReserved,
      kubeReserved: s.kubeReserved,
      hardEvictionThresholds: facts.hardEvictionThresholds,
      devicePlugins: facts.devicePlugins?.(),
      volumesInUse: facts.volumesInUse?.(),
      runtimeHandlers,
    };
  }
  const status = createNodeStatusController({
    client: heartbeat,
    clock,
    registration: s.registration,
    registerNode: s.registerNode,
    gather,
    updateFrequencyMs: s.updateFrequencyMs,
    reportFrequencyMs: s.reportFrequencyMs,
    events,
    startup: s.startup,
    nodeLister: watchClient ? watchedNode(name, () => nodeWatch) : undefined,
    markVolumesFromNode: facts.markVolumesReportedInUse && ((names) => facts.markVolumesReportedInUse?.(names)),
  });
  const lease = createLeaseController({
    client: heartbeat,
    clock,
    nodeName: s.registration.nodeName,
    leaseDurationSeconds: s.leaseDurationSeconds,
    nodeUid: () => status.node()?.metadata.uid,
  });
  return {
    name: "node status and lease",
    start() {
      log.info(
        `API server mode: registering the node, reporting status, renewing the lease ${kv({ node: s.registration.nodeName, server: heartbeat.config.server, statusUpdate: `${s.updateFrequencyMs / 1000}s`, statusReport: `${s.reportFrequencyMs / 1000}s`, leaseRenew: `${lease.renewIntervalMs / 1000}s` })}`,
      );
      if (watchClient)
        nodeWatch = startReflector({
          client: () => watchClient,
          path: "/api/v1/nodes",
          query: { fieldSelector: `metadata.name=${name}` },
          clock,
          kind: "Node",
        });
      status.start();
      lease.start();
    },
    stop() {
      nodeWatch?.stop();
      status.stop();
      lease.stop();
    },
    status,
    lease,
  };
}
