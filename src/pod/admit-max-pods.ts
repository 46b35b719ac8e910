// The pods part of upstream's predicate admit handler (pkg/kubelet/lifecycle/predicate.go, with the
// scheduler's NodeResourcesFit pod count): a node runs at most maxPods (allocatable "pods") pods, so a
// new one is rejected when the active pods already fill it. The rejected pod ends Failed with reason
// OutOfpods and the InsufficientResourceError text.
import type { PodAdmitHandler } from "./lifecycle-types.ts";

/** Upstream lifecycle.OutOfPods. */
export const OUT_OF_PODS = "OutOfpods";

export type MaxPodsVerdict = { admit: true } | { admit: false; reason: string; message: string };

/** Pure: may one more pod join `activePods` other active pods on a node of capacity `maxPods`? */
export function admitMaxPods(activePods: number, maxPods: number): MaxPodsVerdict {
  const requested = 1;
  if (activePods + requested <= maxPods) return { admit: true };
  return {
    admit: false,
    reason: OUT_OF_PODS,
    message: `Node didn't have enough resource: pods, requested: ${requested}, used: ${activePods}, capacity: ${maxPods}`,
  };
}

/** The admit handler for the pod lifecycle (activePods excludes the pod being admitted). */
export function maxPodsAdmitHandler(maxPods: number): PodAdmitHandler {
  return (_pod, activePods) => admitMaxPods(activePods.length, maxPods);
}
