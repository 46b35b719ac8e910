// Which pods a critical pod preempts (upstream pkg/kubelet/preemption getPodsToPreempt), pure:
//   a critical pod (static, mirror, or priority ≥ 2000000000) refused only for resources may evict
//   pods it can preempt (non-critical ones, or of lower priority), chosen to hurt least:
//   BestEffort before Burstable before Guaranteed — each class only as far as the classes before it
//   fall short — and within a class by "distance": the squared, normalised shortfall a candidate
//   would leave, the smaller request (memory, then cpu) winning a tie. Fewest pods first, then
//   the smallest requests (best effort, as upstream says).
// Quantities are upstream's resource.GetResourceRequest units: cpu in millicores, memory and
// ephemeral-storage in bytes, pods as a count (each pod is 1).
import { podRequest, podRequestMilli } from "./pod-resources.ts";
import { isCriticalPod, type PodLike } from "./pod-like.ts";
import { getPodQOS } from "./qos.ts";

/** One InsufficientResourceError: how much of a resource the pod is short of. */
export interface AdmissionRequirement {
  resourceName: string;
  quantity: number;
}

export class PreemptionError extends Error {}

/** resource.GetResourceRequest. */
export function resourceRequest(pod: PodLike, resourceName: string): number {
  if (resourceName === "pods") return 1;
  if (resourceName === "cpu") return podRequestMilli(pod, "cpu");
  return podRequest(pod, resourceName);
}

/** kubetypes.Preemptable: a critical pod preempts non-critical ones; otherwise a higher priority a lower one. */
export function preemptable(preemptor: PodLike, preemptee: PodLike): boolean {
  if (isCriticalPod(preemptor) && !isCriticalPod(preemptee)) return true;
  const a = preemptor.spec.priority;
  const b = preemptee.spec.priority;
  return a !== undefined && b !== undefined && a > b;
}

/** What stays short of the requirements once `pods` are gone (those fully met drop out). */
export function subtractRequirements(reqs: readonly AdmissionRequirement[], pods: readonly PodLike[]): AdmissionRequirement[] {
  const out: AdmissionRequirement[] = [];
  for (const r of reqs) {
    let left = r.quantity;
    for (const p of pods) {
      left -= resourceRequest(p, r.resourceName);
      if (left <= 0) break;
    }
    if (left > 0) out.push({ resourceName: r.resourceName, quantity: left });
  }
  return out;
}

/** Sum over the requirements of (the fraction the pod leaves unmet)²: 0 when it meets them all. */
export function requirementDistance(reqs: readonly AdmissionRequirement[], pod: PodLike): number {
  let d = 0;
  for (const r of reqs) {
    const remaining = r.quantity - resourceRequest(pod, r.resourceName);
    if (remaining > 0) d += (remaining / r.quantity) ** 2;
  }
  return d;
}

/** True when a's request is smaller than b's, memory first, then cpu (equal counts as smaller). */
export function smallerResourceRequest(a: PodLike, b: PodLike): boolean {
  for (const name of ["memory", "cpu"]) {
    const x = resourceRequest(a, name);
    const y = resourceRequest(b, name);
    if (x !== y) return x < y;
  }
  return true;
}

/** upstream's toString: "[(res: memory, q: 104857600), ]". */
export const requirementsText = (reqs: readonly AdmissionRequirement[]) => `[${reqs.map((r) => `(res: ${r.resourceName}, q: ${r.quantity}), `).join("")}]`;

const unable = (reqs: readonly AdmissionRequirement[]) => new PreemptionError(`no set of running pods found to reclaim resources: ${requirementsText(reqs)}`);

/** getPodsToPreemptByDistance: repeatedly the pod closest to what is still missing. */
export function podsToPreemptByDistance<P extends PodLike>(candidates: readonly P[], requirements: readonly AdmissionRequirement[]): P[] {
  const pods = [...candidates];
  const chosen: P[] = [];
  let reqs = [...requirements];
  while (reqs.length > 0) {
    if (pods.length === 0) throw unable(reqs);
    let best = 0;
    let bestDistance = reqs.length + 1; // each requirement adds at most 1
    pods.forEach((p, i) => {
      const d = requirementDistance(reqs, p);
      if (d < bestDistance || (d === bestDistance && smallerResourceRequest(p, pods[best]!))) {
        bestDistance = d;
        best = i;
      }
    });
    const pod = pods[best]!;
    reqs = subtractRequirements(reqs, [pod]);
    chosen.push(pod);
    // upstream swaps the last candidate into the chosen one's place; the order matters for ties.
    pods[best] = pods[pods.length - 1]!;
    pods.pop();
  }
  return chosen;
}

/** sortPodsByQOS: the pods `preemptor` may preempt, by QoS class. */
function preemptableByQos<P extends PodLike>(preemptor: PodLike, pods: readonly P[]): { bestEffort: P[]; burstable: P[]; guaranteed: P[] } {
  const out = { bestEffort: [] as P[], burstable: [] as P[], guaranteed: [] as P[] };
  for (const p of pods) {
    if (!preemptable(preemptor, p)) continue;
    const qos = getPodQOS(p);
    if (qos === "BestEffort") out.bestEffort.push(p);
    else if (qos === "Burstable") out.burstable.push(p);
    else out.guaranteed.push(p);
  }
  return out;
}

/** getPodsToPreempt: the pods to evict so that `pod` fits; PreemptionError when no set frees enough. */
export function getPodsToPreempt<P extends PodLike>(pod: PodLike, activePods: readonly P[], requirements: readonly AdmissionRequirement[]): P[] {
  const { bestEffort, burstable, guaranteed } = preemptableByQos(pod, activePods);
  const unmet = subtractRequirements(requirements, [...bestEffort, ...burstable, ...guaranteed]);
  if (unmet.length > 0) throw unable(unmet);
  // Guaranteed pods only for what all BestEffort and Burstable pods together cannot free; Burstable
  // ones for what BestEffort pods and those Guaranteed cannot; BestEffort ones for the rest.
  const guaranteedToEvict = podsToPreemptByDistance(guaranteed, subtractRequirements(requirements, [...bestEffort, ...burstable]));
  const burstableToEvict = podsToPreemptByDistance(burstable, subtractRequirements(requirements, [...bestEffort, ...guaranteedToEvict]));
  const bestEffortToEvict = podsToPreemptByDistance(bestEffort, subtractRequirements(requirements, [...burstableToEvict, ...guaranteedToEvict]));
  return [...bestEffortToEvict, ...burstableToEvict, ...guaranteedToEvict];
}
