// Pod lifecycle metrics with the kubelet's names, types and buckets (upstream pkg/kubelet/metrics):
// pod workers (kubelet_pod_worker_duration_seconds{operation_type}, kubelet_pod_worker_start_duration_seconds),
// pod start (kubelet_pod_start_duration_seconds, _sli_ and _total_ {first_with_network}), the PLEG
// (relist duration/interval, last seen, discarded events) and the running pods/containers gauges the
// PLEG refreshes on every relist, as upstream's generic PLEG does.
import { ConfigFirstSeenAnnotationKey } from "../pod/static-pod.ts";
import type { PodLifecycleMetrics } from "../pod/lifecycle-metrics.ts";
import type { RuntimePod } from "../pod/runtime.ts";
import type { Pod } from "../pod/types.ts";
import { DEFAULT_BUCKETS, type Registry } from "../server/metrics.ts";
import { POD_STARTUP_BUCKETS } from "./buckets.ts";

const CONTAINER_STATES = ["created", "running", "exited", "unknown"] as const;

/** Epoch ms of an RFC 3339 timestamp annotation/field; undefined when absent or unparsable. */
function epochMs(v: string | undefined): number | undefined {
  if (!v) return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : undefined;
}

/** When the kubelet first saw the pod (kubernetes.io/config.seen), else its creation time. */
export function podFirstSeenMs(pod: Pod): number | undefined {
  return epochMs(pod.metadata.annotations?.[ConfigFirstSeenAnnotationKey]) ?? epochMs(pod.metadata.creationTimestamp);
}

/** Pods with a ready sandbox, and containers by state, as upstream updateRunningPodAndContainerMetrics. */
export function runningCounts(pods: readonly RuntimePod[]): { runningPods: number; containers: Record<(typeof CONTAINER_STATES)[number], number> } {
  const containers = { created: 0, running: 0, exited: 0, unknown: 0 };
  let runningPods = 0;
  for (const p of pods) {
    if ((p.readySandboxes ?? 0) > 0) runningPods++;
    for (const c of p.containers) containers[c.state]++;
  }
  return { runningPods, containers };
}

function podFamilies(registry: Registry) {
  const startup = (name: string, help: string, labelNames: string[] = []) => registry.histogram({ name, help, labelNames, buckets: POD_STARTUP_BUCKETS });
  return {
    workerDuration: registry.histogram({
      name: "kubelet_pod_worker_duration_seconds",
      help: "Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync",
      labelNames: ["operation_type"],
      buckets: DEFAULT_BUCKETS,
    }),
    workerStart: registry.histogram({
      name: "kubelet_pod_worker_start_duration_seconds",
      help: "Duration in seconds from kubelet seeing a pod to starting a worker.",
      buckets: DEFAULT_BUCKETS,
    }),
    start: startup("kubelet_pod_start_duration_seconds", "Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run"),
    startSli: startup(
      "kubelet_pod_start_sli_duration_seconds",
      "Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch",
      ["first_with_network"],
    ),
    startTotal: startup(
      "kubelet_pod_start_total_duration_seconds",
      "Duration in seconds to start a pod since creation, including time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch",
      ["first_with_network"],
    ),
  };
}

function plegFamilies(registry: Registry) {
  // bunlet's PLEG hands events straight to the sync loop and never drops one: the series stays at 0.
  registry.counter({ name: "kubelet_pleg_discard_events", help: "The number of discard events in PLEG." });
  return {
    duration: registry.histogram({
      name: "kubelet_pleg_relist_duration_seconds",
      help: "Duration in seconds for relisting pods in PLEG.",
      buckets: DEFAULT_BUCKETS,
    }),
    interval: registry.histogram({
      name: "kubelet_pleg_relist_interval_seconds",
      help: "Interval in seconds between relisting in PLEG.",
      buckets: DEFAULT_BUCKETS,
    }),
    lastSeen: registry.gauge({ name: "kubelet_pleg_last_seen_seconds", help: "Timestamp in seconds when PLEG was last seen active." }),
    runningPods: registry.gauge({ name: "kubelet_running_pods", help: "Number of pods that have a running pod sandbox" }),
    runningContainers: registry.gauge({ name: "kubelet_running_containers", help: "Number of containers currently running", labelNames: ["container_state"] }),
  };
}

/** upstream OrphanPodCleanedVolumes and OrphanPodCleanedVolumesErrors: set by each orphaned pod directory sweep. */
function orphanFamilies(registry: Registry) {
  return {
    cleaned: registry.gauge({
      name: "kubelet_orphan_pod_cleaned_volumes",
      help: "The total number of orphaned Pods whose volumes were cleaned in the last periodic sweep.",
    }),
    errors: registry.gauge({
      name: "kubelet_orphan_pod_cleaned_volumes_errors",
      help: "The number of orphaned Pods whose volumes failed to be cleaned in the last periodic sweep.",
    }),
  };
}

/**
 * The lifecycle hooks over a registry. `wallMs` is the wall clock the pod timestamps are compared with
 * (the lifecycle's clock may be a test clock; podRunning gets its `nowMs` from the lifecycle).
 */
export function podLifecycleMetrics(registry: Registry): PodLifecycleMetrics {
  const pods = podFamilies(registry);
  const pleg = plegFamilies(registry);
  const orphans = orphanFamilies(registry);
  let prevRelistStartMs: number | undefined;
  let countedPods: readonly RuntimePod[] | undefined;
  let networkPodSeen = false;
  return {
    workerStarted: (s) => pods.workerStart.observe(s),
    orphanedPodDirsSwept(total, errors) {
      orphans.cleaned.set(total);
      orphans.errors.set(errors);
    },
    podSynced: (type, s) => pods.workerDuration.observe(s, { operation_type: type }),
    podRunning(pod, nowMs) {
      const seen = podFirstSeenMs(pod);
      if (seen !== undefined) pods.start.observe(Math.max(0, (nowMs - seen) / 1000));
      const created = epochMs(pod.metadata.creationTimestamp) ?? seen;
      if (created === undefined) return;
      // The first pod with pod networking since start pays for the CNI's first setup (upstream's label).
      const first = !pod.spec.hostNetwork && !networkPodSeen;
      if (!pod.spec.hostNetwork) networkPodSeen = true;
      const labels = { first_with_network: String(first) };
      const seconds = Math.max(0, (nowMs - created) / 1000);
      // Images are local (never pulled), so the SLI (which excludes pulling) equals the total.
      pods.startSli.observe(seconds, labels);
      pods.startTotal.observe(seconds, labels);
    },
    relisted({ startMs, endMs, pods: runtimePods }) {
      if (prevRelistStartMs !== undefined) pleg.interval.observe((startMs - prevRelistStartMs) / 1000);
      prevRelistStartMs = startMs;
      pleg.duration.observe((endMs - startMs) / 1000);
      pleg.lastSeen.set(Date.now() / 1000);
      // An unchanged relist hands over the very array of the last one (kuberuntime getPods): same counts.
      if (runtimePods === countedPods) return;
      countedPods = runtimePods;
      const counts = runningCounts(runtimePods);
      pleg.runningPods.set(counts.runningPods);
      for (const state of CONTAINER_STATES) pleg.runningContainers.set(counts.containers[state], { container_state: state });
    },
  };
}
