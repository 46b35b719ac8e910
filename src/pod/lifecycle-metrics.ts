// What the pod lifecycle reports to metrics (upstream pkg/kubelet/metrics, observed from the pod
// workers, the PLEG, the status path and the prober). Only types live here, in the lowest layer that
// needs them; src/metrics/ implements them over a Registry, and every hook is optional so the
// lifecycle runs the same without metrics (tests).
import type { RuntimePod } from "./runtime.ts";
import type { Pod } from "./types.ts";

export type ProbeType = "Liveness" | "Readiness" | "Startup";
/** Upstream prober results: successful, failed, unknown (the probe itself errored). */
export type ProbeMetricResult = "successful" | "failed" | "unknown";

export interface PodLifecycleMetrics {
  /** A new pod worker ran its first sync: seconds since the lifecycle first saw the pod. */
  workerStarted?(seconds: number): void;
  /** One syncPod of a worker (upstream kubelet_pod_worker_duration_seconds{operation_type}). */
  podSynced?(operationType: "create" | "update" | "sync", seconds: number): void;
  /** The pod's phase became Running for the first time (upstream SyncPod's PodStartDuration). */
  podRunning?(pod: Pod, nowMs: number): void;
  /** One PLEG relist finished; `pods` is what the runtime listed (running pods/containers gauges). */
  relisted?(r: { startMs: number; endMs: number; pods: RuntimePod[] }): void;
  /** A probe ran (upstream prober_probe_total / prober_probe_duration_seconds). */
  probed?(p: { pod: Pod; container: string; probeType: ProbeType; result: ProbeMetricResult; seconds: number }): void;
  /** The pod's probe workers stopped: its per-pod probe series go (upstream deletes them). */
  probesRemoved?(uid: string): void;
  /** One orphaned pod directory sweep: orphans found, and those not removed (upstream kubelet_orphan_pod_cleaned_volumes{,_errors}). */
  orphanedPodDirsSwept?(orphans: number, errors: number): void;
}
