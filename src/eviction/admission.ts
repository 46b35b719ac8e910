// Admission under node pressure (docs/eviction-contract.md#admission-under-pressure): which pods may start while conditions are
// reported. Upstream lifecycle.PodAdmitHandler of the eviction manager.
import { CONFIG_SOURCE_ANNOTATION, isCriticalPod, isStaticPod, type PodLike, type TolerationLike } from "../pod/pod-like.ts";
import { getPodQOS } from "../pod/qos.ts";
import { EVICTED_REASON } from "./message.ts";
import type { NodeConditionType } from "./signals.ts";

export interface AdmitResult {
  admit: boolean;
  reason?: string;
  message?: string;
}

export const MEMORY_PRESSURE_TAINT = { key: "node.kubernetes.io/memory-pressure", effect: "NoSchedule", value: "" };

/** v1 Toleration.ToleratesTaint: empty effect matches all, empty key + Exists is a wildcard. */
export function toleratesTaint(t: TolerationLike, taint: { key: string; effect: string; value: string }): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? "") {
    case "":
    case "Equal":
      return (t.value ?? "") === taint.value;
    case "Exists":
      return true;
    default:
      return false;
  }
}

/** Go's %v of a []NodeConditionType: "[MemoryPressure DiskPressure]". */
export const formatConditions = (c: readonly NodeConditionType[]): string => `[${c.join(" ")}]`;

export function admitPod(pod: PodLike, conditions: readonly NodeConditionType[]): AdmitResult {
  if (conditions.length === 0) return { admit: true };
  if (isCriticalPod(pod)) return { admit: true };
  if (conditions.length === 1 && conditions[0] === "MemoryPressure") {
    if (getPodQOS(pod) !== "BestEffort") return { admit: true };
    if ((pod.spec.tolerations ?? []).some((t) => toleratesTaint(t, MEMORY_PRESSURE_TAINT))) return { admit: true };
  }
  return { admit: false, reason: EVICTED_REASON, message: `The node had condition: ${formatConditions(conditions)}. ` };
}

/**
 * Upstream admits every static pod (they are "critical"). With evictStaticPods (bunlet) static pods
 * are ordinary pods for eviction, so they are for admission too: a BestEffort static pod arriving
 * under MemoryPressure is rejected like any other. Mirror pods and critical priorities stay exempt.
 */
export function admissionView(pod: PodLike, evictStaticPods: boolean): PodLike {
  if (!evictStaticPods || !isStaticPod(pod)) return pod;
  const { [CONFIG_SOURCE_ANNOTATION]: _source, ...annotations } = pod.metadata.annotations ?? {};
  return { ...pod, metadata: { ...pod.metadata, annotations } };
}
