// The record createNodeAgent's construction steps share (agent.ts): the configuration, the services
// built first — metrics, events, the CRI clients as configured, instrumented and owned, the direct
// signaller, API objects — and the few parts bound late, which closures built earlier read at run time.
import { createAgentRegistry } from "./agent-run.ts";
import { type Clock, preciseClock, realClock } from "./clock.ts";
import type { KubeletConfiguration } from "./config/kubelet-config.ts";
import type { LoadedConfig } from "./config/load.ts";
import { withReservedSystemCPUs } from "./config/reserved-cpus.ts";
import { createCPUManagerWiring, type CPUManagerWiring } from "./wire/cpu-manager.ts";
import type { CriClient } from "./cri/client.ts";
import { createEventBroadcaster, type EventBroadcaster } from "./events/index.ts";
import { kv, log } from "./log.ts";
import { createKubeletMetrics, type KubeletMetrics } from "./metrics/index.ts";
import { join } from "node:path";
import { type ChangeDetectionStrategy, createPodApiObjects, type PodApiObjectsManager } from "./pod/apiobjects/index.ts";
import { createAutonomyStore, withAutonomyCache, type AutonomyStore } from "./pod/autonomy/index.ts";
import { nodeAllocatableAbsolute } from "./pod/cgroups-config.ts";
import { createDirectSignaller, type DirectSignaller } from "./pod/kuberuntime/index.ts";
import { type OwnedCriClient, ownedCri, runtimeOwner } from "./pod/kuberuntime/owner.ts";
import { nodeCapacity, nodeNameFrom } from "./pod/setup.ts";
import type { Registry } from "./server/metrics.ts";
import type { NodeApiWiring } from "./wire/node-api.ts";
import { criClientFromConfig, observeStopContainer } from "./wire/runtime.ts";

export interface NodeAgentOpts {
  /** Write oomScoreAdj to /proc/self/oom_score_adj at start (default true; in-process tests turn it off). */
  protectSelf?: boolean;
  /** CRI client instead of one built from containerRuntimeEndpoint (tests). */
  cri?: CriClient;
  /** Delay between attempts to reach the runtime (default 2 s). */
  runtimeRetryMs?: number;
  configz?: (config: KubeletConfiguration) => unknown;
}

/** The loaded configuration createNodeAgent reads. */
export type NodeAgentInput = Pick<LoadedConfig, "config" | "flags"> & Partial<Pick<LoadedConfig, "sources">>;

/** What the construction steps share: the configuration, the services built first, and what is bound late. */
export interface NodeAgentContext {
  loaded: NodeAgentInput;
  config: KubeletConfiguration;
  flags: LoadedConfig["flags"];
  opts: NodeAgentOpts;
  /** kubelet_node_startup_pre_* (upstream: the tracker's creation). */
  kubeletStartMs: number;
  metrics: Registry;
  clock: Clock;
  kubeletMetrics: KubeletMetrics;
  /** Events (src/events): logged, and written to the API server in API-server mode. */
  events: EventBroadcaster;
  /** The runtime as configured, uninstrumented. */
  rawCri: CriClient;
  owner: string;
  /** Instrumented, every agent's containers: images in use by any of them are in use. */
  allCri: CriClient;
  /** Instrumented, this agent's pods only. */
  cri: OwnedCriClient;
  /** Memory-backed emptyDirs are tmpfs sized at most to node allocatable memory (KEP-1967), not all RAM. */
  allocatableMemoryBytes: number;
  directSignal: DirectSignaller;
  /** API-server mode: what API pods reference (secrets, configMaps, service account tokens). */
  apiObjects?: PodApiObjectsManager;
  /** Node autonomy's cache (config `autonomy`, API-server mode only). */
  autonomy?: AutonomyStore;
  /** The CPU manager (cpuManagerPolicy): started before the pod lifecycle, its cpusets given at container create. */
  cpuManager: CPUManagerWiring;
  /** Bound after the parts that read them are built: read only once the agent runs. */
  late: {
    nodeApi?: NodeApiWiring;
    /** The endpoint of a registered CSI driver (the plugin manager's CSI handler). */
    csiDriverEndpoint?: (driver: string) => string | undefined;
    cgroupsReady: boolean;
    onStop: Parameters<typeof observeStopContainer>[1];
    failAgent: (e: Error) => void;
    ownerLock?: { release(): void };
  };
}

/** The services every later step uses: metrics, events, the CRI clients, the direct signaller, API objects. */
export function createNodeAgentContext(loaded: NodeAgentInput, opts: NodeAgentOpts): NodeAgentContext {
  const { flags } = loaded;
  // reservedSystemCPUs overrides the reserved cpu (upstream run(): systemReserved.cpu = its count).
  const config = withReservedSystemCPUs(loaded.config);
  if (config !== loaded.config)
    log.info(
      `Option --reserved-cpus is specified, it will overwrite the cpu setting in KubeReserved and SystemReserved ${kv({ systemReserved: JSON.stringify(config.systemReserved) })}`,
    );
  const kubeletStartMs = Date.now();
  const metrics = createAgentRegistry();
  const clock = preciseClock();
  const late: NodeAgentContext["late"] = { cgroupsReady: false, onStop: () => {}, failAgent: () => {} };
  const kubeletMetrics = createKubeletMetrics(metrics);
  const events = createEventBroadcaster({
    clock: realClock,
    component: "kubelet",
    host: nodeNameFrom(flags.hostnameOverride),
    queueForSink: !!flags.kubeconfig,
  });
  const rawCri = opts.cri ?? criClientFromConfig(config);
  const owner = runtimeOwner(flags.rootDir);
  const allCri = observeStopContainer(kubeletMetrics.instrumentCri(rawCri), (e) => late.onStop(e), clock.now);
  const cri = ownedCri(allCri, owner);
  const allocatableMemoryBytes = Number(
    nodeAllocatableAbsolute({ memory: String(nodeCapacity().memoryBytes) }, config.systemReserved, config.kubeReserved).memory! / 1_000_000_000n,
  );
  // The first signal of a ≤ 1 s stop (hard eviction) goes straight to the container's init; the
  // trace's "stop signal sent" is then that moment, not the StopContainer that follows.
  const directSignal = createDirectSignaller({
    cri: rawCri,
    now: clock.now,
    onSignal: (e) => late.onStop({ containerId: e.containerId, podUid: e.podUid, phase: "sent", atMs: e.atMs }),
  });
  // Through the client the node API wiring builds once the node has credentials.
  const autonomy =
    flags.kubeconfig && config.autonomy
      ? createAutonomyStore({
          dir: join(flags.rootDir, "autonomy"),
          maxBytes: config.autonomyCacheMaxBytes,
          secrets: config.autonomyCacheSecrets,
          clock: realClock,
        })
      : undefined;
  const liveApiObjects = flags.kubeconfig
    ? createPodApiObjects({
        client: () => late.nodeApi?.client(),
        clock: realClock,
        strategy: changeDetectionStrategy(config.configMapAndSecretChangeDetectionStrategy),
        clusterTrustBundleProjection: config.featureGates?.ClusterTrustBundleProjection,
      })
    : undefined;
  const apiObjects = liveApiObjects && autonomy ? withAutonomyCache(liveApiObjects, autonomy, realClock) : liveApiObjects;
  return {
    loaded,
    config,
    flags,
    opts,
    kubeletStartMs,
    metrics,
    clock,
    kubeletMetrics,
    events,
    rawCri,
    owner,
    allCri,
    cri,
    allocatableMemoryBytes,
    directSignal,
    apiObjects,
    autonomy,
    late,
    cpuManager: createCPUManagerWiring({ config, rootDir: flags.rootDir, clock }),
  };
}

/** configMapAndSecretChangeDetectionStrategy: Watch (default), Cache or Get. */
function changeDetectionStrategy(v: string | undefined): ChangeDetectionStrategy {
  if (v === "Cache" || v === "Get" || v === "Watch") return v;
  if (v) log.warn(`unknown configMapAndSecretChangeDetectionStrategy; using Watch ${kv({ value: v })}`);
  return "Watch";
}
