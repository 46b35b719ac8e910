// The resize events' message tail (upstream pkg/kubelet/events/resize.go makeResourceSummaryFromSpec):
// the JSON of each container's resources from the pod spec, the generation and any error, e.g.
// `{"containers":[{"name":"app","resources":{"limits":{"memory":"256Mi"}}}],"generation":2}`.
import { canonicalQuantity } from "../../config/quantity.ts";
import type { ContainerLike, PodLike } from "../pod-like.ts";

type List = Record<string, string>;

/** A ResourceList as Go's JSON writes it: keys sorted, quantities canonical. */
function list(l: Record<string, string | number> | undefined): List | undefined {
  if (!l || Object.keys(l).length === 0) return undefined;
  const out: List = {};
  for (const k of Object.keys(l).sort()) {
    const v = String(l[k]);
    try {
      out[k] = canonicalQuantity(v);
    } catch {
      out[k] = v;
    }
  }
  return out;
}

const allocation = (c: ContainerLike) => {
  const limits = list(c.resources?.limits);
  const requests = list(c.resources?.requests);
  return { name: c.name, resources: { ...(limits ? { limits } : {}), ...(requests ? { requests } : {}) } };
};

export function resizeSummary(pod: PodLike, generation: number, error?: string): string {
  const init = pod.spec.initContainers ?? [];
  return JSON.stringify({
    ...(init.length ? { initContainers: init.map(allocation) } : {}),
    ...(pod.spec.containers.length ? { containers: pod.spec.containers.map(allocation) } : {}),
    generation,
    ...(error ? { error } : {}),
  });
}
