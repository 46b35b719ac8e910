// Pod readiness gates (upstream pkg/kubelet/status/generate.go GeneratePodReadyCondition; which
// conditions the kubelet owns: pkg/kubelet/types/pod_status.go PodConditionsByKubelet). A pod with
// spec.readinessGates is Ready only once its containers are ready AND, for each gate, a condition of
// that type is True in the pod's API status — set there by someone else (a load balancer controller,
// say). The API source keeps those conditions on the pod (sources/api.ts), so a change to one reaches
// the lifecycle as a RECONCILE, which re-syncs the pod (upstream HandlePodReconcile,
// NeedToReconcilePodReadiness). bunlet never writes them back: its status PATCH is a strategic merge
// by condition type, which leaves conditions it does not send as the API server has them.
import type { PodCondition, PodPhase, PodStatus } from "./types.ts";

/** PodConditionsByKubelet, with the gates that add to it on by default in v1.37. */
export const KUBELET_POD_CONDITIONS: readonly string[] = [
  "PodScheduled",
  "Ready",
  "Initialized",
  "ContainersReady",
  "PodResizeInProgress",
  "PodResizePending",
  "PodReadyToStartContainers",
  "AllContainersRestarting",
];

/** upstream status.ReadinessGatesNotReady. */
export const READINESS_GATES_NOT_READY = "ReadinessGatesNotReady";

const PHASES: readonly string[] = ["Pending", "Running", "Succeeded", "Failed", "Unknown"];
const str = (v: unknown) => (typeof v === "string" ? v : undefined);

/** The conditions of an API pod's status that the kubelet does not own, in their API order. */
export function conditionsSetByOthers(status: unknown): PodCondition[] {
  const list = (status as { conditions?: unknown } | null | undefined)?.conditions;
  if (!Array.isArray(list)) return [];
  return list.flatMap((c): PodCondition[] => {
    const type = str(c?.type);
    const s = str(c?.status);
    if (!type || KUBELET_POD_CONDITIONS.includes(type) || (s !== "True" && s !== "False" && s !== "Unknown")) return [];
    const reason = str(c.reason);
    const message = str(c.message);
    return [
      {
        type,
        status: s,
        lastProbeTime: str(c.lastProbeTime) ?? null,
        lastTransitionTime: str(c.lastTransitionTime) ?? "",
        ...(reason ? { reason } : {}),
        ...(message ? { message } : {}),
      },
    ];
  });
}

/**
 * What the kubelet keeps of an API pod's status (upstream reads pod.Status): its phase and the
 * conditions others set, for a pod with readiness gates; undefined otherwise (nothing reads it).
 */
export function apiStatusForGates(spec: { readinessGates?: { conditionType: string }[] }, status: unknown): PodStatus | undefined {
  if (!spec.readinessGates?.length) return undefined;
  const conditions = conditionsSetByOthers(status);
  if (conditions.length === 0) return undefined;
  const phase = str((status as { phase?: unknown }).phase);
  return { phase: phase && PHASES.includes(phase) ? (phase as PodPhase) : "Pending", conditions };
}

/** One message per gate whose condition is missing or not True (upstream's wording); empty when all are met. */
export function unreadyGateMessages(gates: { conditionType: string }[] | undefined, conditions: PodCondition[] | undefined): string[] {
  return (gates ?? []).flatMap((g) => {
    const c = conditions?.find((x) => x.type === g.conditionType);
    if (!c) return [`corresponding condition of pod readiness gate "${g.conditionType}" does not exist.`];
    return c.status === "True" ? [] : [`the status of pod readiness gate "${g.conditionType}" is not "True", but ${c.status}`];
  });
}

/** upstream NeedToReconcilePodReadiness, simplified: a pod with gates re-syncs when its API status changes. */
export const needsReadinessReconcile = (pod: { spec: { readinessGates?: unknown[] } }): boolean => (pod.spec.readinessGates?.length ?? 0) > 0;
