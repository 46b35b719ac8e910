// Pod QoS class, as upstream v1qos.GetPodQOS / ComputePodQOS (pkg/apis/core/v1/helper/qos).
// Only cpu and memory count; zero quantities are ignored; init containers count like app
// containers. Requests default from limits (API defaulting), because a manifest read from a file
// or a trimmed PodList may carry only limits, while the kubelet always sees defaulted pods.
import { parseQuantity } from "../config/quantity.ts";
import type { ContainerLike, PodLike, ResourceList } from "./pod-like.ts";

export type QOSClass = "Guaranteed" | "Burstable" | "BestEffort";

const QOS_RESOURCES = ["cpu", "memory"] as const;

// Specs repeat a few quantity strings; parse each once (bounded memo of a pure function).
const parsed = new Map<string, bigint | undefined>();

function nanos(list: ResourceList | undefined, name: string): bigint | undefined {
  const v = list?.[name];
  if (v === undefined) return undefined;
  const key = String(v);
  if (parsed.has(key)) return parsed.get(key);
  let out: bigint | undefined;
  try {
    out = parseQuantity(key).nanos;
  } catch {
    out = undefined; // validated elsewhere; an unparsable value counts as absent
  }
  if (parsed.size > 4096) parsed.clear();
  parsed.set(key, out);
  return out;
}

/** Container requests after API defaulting: a resource with a limit and no request requests the limit. */
export function defaultedRequests(c: ContainerLike): ResourceList {
  return { ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) };
}

export function getPodQOS(pod: PodLike): QOSClass {
  const recorded = pod.status?.qosClass;
  if (recorded === "Guaranteed" || recorded === "Burstable" || recorded === "BestEffort") return recorded;
  return computePodQOS(pod);
}

/** ComputePodQOS: ignores status.qosClass. */
export function computePodQOS(pod: PodLike): QOSClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let guaranteed = true;
  const all = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])];
  for (const c of all) {
    const req = defaultedRequests(c);
    const limitsFound = new Set<string>();
    for (const name of QOS_RESOURCES) {
      const r = nanos(req, name);
      if (r !== undefined && r > 0n) requests.set(name, (requests.get(name) ?? 0n) + r);
      const l = nanos(c.resources?.limits, name);
      if (l !== undefined && l > 0n) {
        limitsFound.add(name);
        limits.set(name, (limits.get(name) ?? 0n) + l);
      }
    }
    if (!limitsFound.has("cpu") || !limitsFound.has("memory")) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return "BestEffort";
  if (guaranteed) {
    for (const [name, r] of requests) {
      if (limits.get(name) !== r) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? "Guaranteed" : "Burstable";
}
