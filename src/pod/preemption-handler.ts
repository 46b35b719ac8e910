// The kubelet's CriticalPodAdmissionHandler (upstream pkg/kubelet/preemption): the predicate admit
// handler's failures for a critical pod. Shortages of resources (OutOfcpu, OutOfmemory, OutOfpods,
// …) are no reason to refuse it: the pods getPodsToPreempt picks are stopped — a Warning
// "Preempting" event each, status Failed/Preempting "Preempted in order to admit critical pod" with
// the DisruptionTarget condition — and the pod is admitted, starting once they are stopped
// (upstream's killPodNow blocks admission until then). Any other failure still refuses it; no set
// of pods that frees enough → UnexpectedAdmissionError.
import type { EventRecorder } from "../events/types.ts";
import { podRef } from "../events/types.ts";
import { kv, log } from "../log.ts";
import type { AdmissionFailureHandler, AdmitRejection } from "./admit-predicate.ts";
import type { KillPodRequest } from "./lifecycle-types.ts";
import { isCriticalPod, podKey, type PodLike } from "./pod-like.ts";
import { getPodsToPreempt, PreemptionError, requirementsText, type AdmissionRequirement } from "./preemption.ts";

/** Upstream preemption's message and events.PreemptContainer. */
export const PREEMPTED_MESSAGE = "Preempted in order to admit critical pod";
export const PREEMPTING_REASON = "Preempting";
export const PREEMPTED_CONDITION_MESSAGE = "Pod was preempted by Kubelet to accommodate a critical pod.";

export interface CriticalPodAdmissionDeps {
  /** Stops the pod, recording the status the request carries; resolves when its containers are stopped. */
  killPod(pod: PodLike, req: KillPodRequest): Promise<void>;
  events?: EventRecorder;
  /** kubelet_preemptions{preemption_signal}: one per pod stopped, labelled with the first short resource. */
  onPreempted?(resourceName: string): void;
}

/** InsufficientResourceError.GetInsufficientAmount: requested − (capacity − used). */
const requirementOf = (f: AdmitRejection): AdmissionRequirement => ({
  resourceName: f.insufficient!.resourceName,
  quantity: f.insufficient!.requested - (f.insufficient!.capacity - f.insufficient!.used),
});

export function criticalPodAdmissionHandler(d: CriticalPodAdmissionDeps): AdmissionFailureHandler {
  return (pod, failures, others) => {
    if (!isCriticalPod(pod)) return { failures };
    const otherFailures = failures.filter((f) => !f.insufficient);
    if (otherFailures.length > 0) return { failures: otherFailures };
    const requirements = failures.map(requirementOf);
    let victims: PodLike[];
    try {
      victims = getPodsToPreempt(pod, others, requirements);
    } catch (e) {
      if (!(e instanceof PreemptionError)) throw e;
      log.warn(`preemption: cannot admit critical pod ${kv({ pod: podKey(pod), insufficientResources: requirementsText(requirements), error: e.message })}`);
      return { failures: [], error: `preemption: error finding a set of pods to preempt: ${e.message}` };
    }
    log.info(
      `Attempting to evict pods in order to free up resources ${kv({ requestingPod: podKey(pod), pods: `[${victims.map(podKey).join(" ")}]`, insufficientResources: requirementsText(requirements) })}`,
    );
    const signal = requirements[0]?.resourceName ?? "";
    const stopped = victims.map((victim) => {
      d.events?.event(podRef(victim), "Warning", PREEMPTING_REASON, PREEMPTED_MESSAGE);
      const req: KillPodRequest = {
        reason: PREEMPTING_REASON,
        message: PREEMPTED_MESSAGE,
        condition: { type: "DisruptionTarget", status: "True", reason: "TerminationByKubelet", message: PREEMPTED_CONDITION_MESSAGE },
      };
      return d.killPod(victim, req).then(
        () => {
          d.onPreempted?.(signal);
          log.info(`Pod evicted successfully ${kv({ pod: podKey(victim), requestingPod: podKey(pod) })}`);
        },
        // upstream goes on: later syncs retry the stuck pod's teardown, and the critical pod is admitted.
        (e: Error) => log.error(`Failed to evict pod ${kv({ pod: podKey(victim), error: e.message })}`),
      );
    });
    return { failures: [], waitFor: Promise.all(stopped) };
  };
}
