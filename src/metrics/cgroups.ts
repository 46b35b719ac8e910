// kubelet_cgroup_manager_duration_seconds{operation_type} (upstream cm/cgroup_manager_linux.go: create,
// update, destroy): a decorator over the pod cgroup manager, timing each pod cgroup operation.
// ensurePod creates a pod cgroup the first time and updates it afterwards, as upstream's
// EnsureExists does through Create or Update.
import type { PodCgroups } from "../pod/lifecycle-types.ts";
import { DEFAULT_BUCKETS, type Registry } from "../server/metrics.ts";

export function instrumentCgroups<C extends PodCgroups>(cgroups: C, registry: Registry, nowMs: () => number = () => performance.now()): C {
  const duration = registry.histogram({
    name: "kubelet_cgroup_manager_duration_seconds",
    help: "Duration in seconds for cgroup manager operations. Broken down by method.",
    labelNames: ["operation_type"],
    buckets: DEFAULT_BUCKETS,
  });
  const known = new Set<string>();
  const timed = async <T>(operation_type: string, fn: () => Promise<T>): Promise<T> => {
    const start = nowMs();
    try {
      return await fn();
    } finally {
      duration.observe((nowMs() - start) / 1000, { operation_type });
    }
  };
  const out = Object.create(cgroups) as C;
  out.ensurePod = (pod) => {
    const uid = pod.metadata.uid;
    const op = known.has(uid) ? "update" : "create";
    known.add(uid);
    return timed(op, () => cgroups.ensurePod(pod));
  };
  out.removePod = (uid) => {
    known.delete(uid);
    return timed("destroy", () => cgroups.removePod(uid));
  };
  return out;
}
