// Prober metrics (upstream pkg/kubelet/prober): prober_probe_total{probe_type,result,container,pod,
// namespace,pod_uid} and prober_probe_duration_seconds{probe_type,container,pod,namespace}, served on
// /metrics/probes from a registry of their own, as upstream. A removed pod's series are dropped, so a
// node with pod churn does not accumulate per-pod series.
import type { PodLifecycleMetrics } from "../pod/lifecycle-metrics.ts";
import { DEFAULT_BUCKETS, type Registry } from "../server/metrics.ts";

export function probeMetrics(registry: Registry): Required<Pick<PodLifecycleMetrics, "probed" | "probesRemoved">> {
  const total = registry.counter({
    name: "prober_probe_total",
    help: "Cumulative number of a liveness, readiness or startup probe for a container by result.",
    labelNames: ["probe_type", "result", "container", "pod", "namespace", "pod_uid"],
  });
  const duration = registry.histogram({
    name: "prober_probe_duration_seconds",
    help: "Duration in seconds for a probe response.",
    labelNames: ["probe_type", "container", "pod", "namespace"],
    buckets: DEFAULT_BUCKETS,
  });
  const namesByUid = new Map<string, { pod: string; namespace: string }>();
  return {
    probed({ pod, container, probeType, result, seconds }) {
      const id = { pod: pod.metadata.name, namespace: pod.metadata.namespace ?? "default" };
      namesByUid.set(pod.metadata.uid, id);
      total.inc({ probe_type: probeType, result, container, ...id, pod_uid: pod.metadata.uid });
      duration.observe(seconds, { probe_type: probeType, container, ...id });
    },
    probesRemoved(uid) {
      const id = namesByUid.get(uid);
      namesByUid.delete(uid);
      total.removeMatching({ pod_uid: uid });
      if (id) duration.removeMatching(id);
    },
  };
}
