// Effective pod requests and limits for one resource, as resourcehelper.PodRequests/PodLimits:
// app containers summed (restartable sidecars included), max'ed against each regular init
// container plus the sidecars started before it, plus overhead when the total is non-zero.
// Requests default from limits (API defaulting). Values are integers (bytes, counts), rounded up.
import { parseQuantity, quantityMilliValue, quantityValue } from "../config/quantity.ts";
import type { ContainerLike, PodLike, ResourceList } from "./pod-like.ts";
import { defaultedRequests } from "./qos.ts";

// Pod specs repeat a handful of quantity strings ("100Mi", "1Gi"); parsing them once keeps a
// 1,000-pod ranking linear and cheap. Bounded so odd inputs cannot grow it without limit.
const parsed = new Map<string, number | undefined>();

export function resourceValue(list: ResourceList | undefined, name: string): number | undefined {
  const v = list?.[name];
  if (v === undefined) return undefined;
  const key = String(v);
  if (parsed.has(key)) return parsed.get(key);
  let out: number | undefined;
  try {
    out = quantityValue(parseQuantity(key));
  } catch {
    out = undefined;
  }
  if (parsed.size > 4096) parsed.clear();
  parsed.set(key, out);
  return out;
}

function aggregate(pod: PodLike, name: string, pick: (c: ContainerLike) => ResourceList | undefined, value = resourceValue): number | undefined {
  let found = false;
  const val = (c: ContainerLike): number => {
    const v = value(pick(c), name);
    if (v !== undefined) found = true;
    return v ?? 0;
  };
  let sum = 0;
  for (const c of pod.spec.containers) sum += val(c);
  let sidecars = 0;
  let initMax = 0;
  for (const c of pod.spec.initContainers ?? []) {
    const v = val(c);
    if (c.restartPolicy === "Always") {
      sum += v;
      sidecars += v;
      initMax = Math.max(initMax, sidecars);
    } else {
      initMax = Math.max(initMax, v + sidecars);
    }
  }
  let total = Math.max(sum, initMax);
  const overhead = value(pod.spec.overhead, name);
  if (overhead !== undefined && total !== 0) total += overhead;
  return found ? total : undefined;
}

/** Pod request for a resource; 0 when nothing requests it. */
export function podRequest(pod: PodLike, name: string): number {
  return aggregate(pod, name, defaultedRequests) ?? 0;
}

/** Pod limit for a resource; undefined when no container declares one. */
export function podLimit(pod: PodLike, name: string): number | undefined {
  return aggregate(pod, name, (c) => c.resources?.limits);
}

/** Pod request in thousandths (millicores for cpu), as the scheduler's MilliCPU; 0 when nothing requests it. */
export function podRequestMilli(pod: PodLike, name: string): number {
  const milli = (list: ResourceList | undefined, n: string): number | undefined => {
    const v = list?.[n];
    if (v === undefined) return undefined;
    try {
      return quantityMilliValue(parseQuantity(String(v)));
    } catch {
      return undefined;
    }
  };
  return aggregate(pod, name, defaultedRequests, milli) ?? 0;
}

/** A ResourceList with its quantities as strings (numbers as the API writes them). */
export function stringResourceList(l: ResourceList | undefined): Record<string, string> | undefined {
  return l && Object.fromEntries(Object.entries(l).map(([k, v]) => [k, String(v)]));
}

/** A container's requests and limits with string quantities; a list it does not have is left out. */
export function stringResources(r: { requests?: ResourceList; limits?: ResourceList } | undefined): {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
} {
  return { ...(r?.requests ? { requests: stringResourceList(r.requests) } : {}), ...(r?.limits ? { limits: stringResourceList(r.limits) } : {}) };
}
