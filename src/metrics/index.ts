// The kubelet's Prometheus metrics (upstream pkg/kubelet/metrics and friends), built over the agent's
// registry by the composition root: CRI operations (a CriClient decorator), pod cgroups (a decorator),
// the pod lifecycle's hooks (workers, pod start, PLEG, running pods/containers), scrape-time node and
// volume gauges, and the prober's series on a registry of their own (/metrics/probes, as upstream).
import type { CriClient } from "../cri/client.ts";
import type { StorageOperation } from "../pod/kuberuntime/index.ts";
import type { PodLifecycleMetrics } from "../pod/lifecycle-metrics.ts";
import type { PodCgroups, PodLifecycle } from "../pod/lifecycle-types.ts";
import { POD_UID_LABEL } from "../pod/kuberuntime/labels.ts";
import type { Pod } from "../pod/types.ts";
import { createRegistry, type Counter, type Registry } from "../server/metrics.ts";
import { instrumentCgroups } from "./cgroups.ts";
import { nodeMetrics, type PodCountsSource } from "./node.ts";
import { podLifecycleMetrics } from "./pods.ts";
import { probeMetrics } from "./probes.ts";
import { instrumentCri, type ContainerType } from "./runtime.ts";
import { storageMetrics } from "./storage.ts";
import { volumeManagerMetrics } from "./volume-manager.ts";
import type { VolumeReconstructionMetrics } from "../pod/volumemanager/index.ts";

export { instrumentCgroups } from "./cgroups.ts";
export { instrumentCri, CRI_OPERATION_TYPES, grpcCodeName } from "./runtime.ts";
export { podLifecycleMetrics, runningCounts, podFirstSeenMs } from "./pods.ts";
export { probeMetrics } from "./probes.ts";
export { storageMetrics } from "./storage.ts";
export { volumeManagerMetrics } from "./volume-manager.ts";
export { pluginManagerMetrics, type PluginCountsSource } from "./plugin-manager.ts";
export { nodeMetrics, volumeSamples, type PodCountsSource } from "./node.ts";
export { restClientMetrics, REST_CLIENT_LATENCY_BUCKETS } from "./rest-client.ts";
export { clientCertificateMetrics, serverCertificateMetrics, type ClientCertificateMetrics, type ServerCertificateMetrics } from "./certificates.ts";
export { nodeStartupMetrics, parseBootTimeMs, readBootTimeMs, type NodeStartupTracker } from "./node-startup.ts";

export interface KubeletMetrics {
  /** Served on /metrics/probes. */
  readonly probes: Registry;
  readonly lifecycle: PodLifecycleMetrics;
  instrumentCri(cri: CriClient): CriClient;
  instrumentCgroups<C extends PodCgroups>(cgroups: C): C;
  /** kuberuntime's volume operation timer. */
  readonly storageOperation: StorageOperation;
  /** The volume manager's reconstruction of volumes from pod directories after a restart. */
  readonly volumeReconstruction: VolumeReconstructionMetrics;
  /** Once the pod lifecycle exists: the node name and scrape-time pod and volume gauges. */
  observeNode(nodeName: string, lifecycle: PodLifecycle): void;
  /** kubelet_preemptions: a pod stopped to admit a critical pod, by the first resource it was short of. */
  preempted(resourceName: string): void;
  /** kubelet_started_user_namespaced_pods_total (+ errors): a sandbox of a hostUsers: false pod created, or failed. */
  userNamespacedPodStarted(failed: boolean): void;
}

/** A pod's volumes are set up once it runs or one of its containers started (upstream's actual state). */
function volumesMounted(p: Pod): boolean {
  const st = p.status;
  if (st?.phase === "Running") return true;
  return st?.phase === "Pending" && (st.containerStatuses ?? []).some((c) => c.state?.running || c.state?.terminated);
}

export function podCountsFrom(lifecycle: PodLifecycle): PodCountsSource {
  return {
    desiredPods: () => lifecycle.listPodsForApi(),
    activePods: () => lifecycle.activePods(),
    mountedPods: () => lifecycle.listPodsForApi().filter(volumesMounted),
  };
}

export function createKubeletMetrics(registry: Registry): KubeletMetrics {
  const probes = createRegistry();
  let lifecycleRef: PodLifecycle | undefined;
  // Upstream labels StartedContainersTotal by the kind of container it starts.
  const containerType = (config: { metadata?: { name?: string }; labels?: Record<string, string> }): ContainerType => {
    const uid = config.labels?.[POD_UID_LABEL];
    // The desired pods as they are (no status, no sort): this runs twice per CreateContainer, and
    // listPodsForApi here would make a 100-pod burst quadratic.
    const pod = uid ? lifecycleRef?.pods().find((p) => p.metadata.uid === uid) : undefined;
    const name = config.metadata?.name;
    if (pod?.spec.initContainers?.some((c) => c.name === name)) return "init_container";
    return pod?.spec.ephemeralContainers?.some((c) => c.name === name) ? "ephemeral_container" : "container";
  };
  let preemptions: Counter | undefined;
  const userns = {
    started: registry.counter({
      name: "kubelet_started_user_namespaced_pods_total",
      help: "Cumulative number of pods with user namespaces started. This metric will only be collected on Linux.",
    }),
    errors: registry.counter({
      name: "kubelet_started_user_namespaced_pods_errors_total",
      help: "Cumulative number of errors when starting pods with user namespaces. This metric will only be collected on Linux.",
    }),
  };
  return {
    probes,
    lifecycle: { ...podLifecycleMetrics(registry), ...probeMetrics(probes) },
    instrumentCri: (cri) => instrumentCri(cri, registry, { containerType }),
    instrumentCgroups: (cgroups) => instrumentCgroups(cgroups, registry),
    storageOperation: storageMetrics(registry),
    volumeReconstruction: volumeManagerMetrics(registry),
    observeNode(nodeName, lifecycle) {
      lifecycleRef = lifecycle;
      preemptions = nodeMetrics(registry, { nodeName, pods: podCountsFrom(lifecycle) });
    },
    preempted: (resourceName) => preemptions?.inc({ preemption_signal: resourceName }),
    userNamespacedPodStarted(failed) {
      userns.started.inc();
      if (failed) userns.errors.inc();
    },
  };
}
