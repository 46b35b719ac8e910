// The allocation manager (upstream pkg/kubelet/allocation/allocation_manager.go): the resources each
// admitted pod was granted, kept in the allocated_pods_state checkpoint so a restart neither restarts
// nor re-resizes anything. A resize (the API server changed spec.containers[].resources) is admitted
// against the other pods' allocations like a new pod (handleResize); if it fits it becomes the
// allocation, else the pod reports PodResizePending (Deferred, or Infeasible when no admission could
// ever take it) and is tried again at its next sync. The pod workers run the allocated pod.
import { join } from "node:path";
import { podRef } from "../../events/types.ts";
import type { EventRecorder } from "../../events/types.ts";
import { kv, log } from "../../log.ts";
import { podKey, type ContainerLike, type PodLike } from "../pod-like.ts";
import { stringResources } from "../pod-resources.ts";
import type { Pod } from "../types.ts";
import { createResizeConditions, type ResizeConditions } from "./conditions.ts";
import { resizeSummary } from "./events.ts";
import { createResourceState, type ContainerResources, type PodResourceInfo, type ResourceState } from "./state.ts";

export const ALLOCATED_PODS_STATE_FILE = "allocated_pods_state";
export const ACTUATED_PODS_STATE_FILE = "actuated_pods_state";

/** An admit handler's verdict, as the lifecycle's handlers give it. */
export type AdmitFn = (pod: Pod, others: Pod[]) => { admit: boolean; reason?: string; message?: string };

export interface AllocationManager {
  /** What was last applied to each container (kuberuntime's actuated state). */
  readonly actuated: ResourceState;
  /** The resize conditions of each pod. */
  readonly conditions: ResizeConditions;
  /** The pod with its containers' resources as allocated; `updated` when they differ from its spec. */
  updatePodFromAllocation(pod: Pod): { pod: Pod; updated: boolean };
  /** upstream SetAllocatedResources: the pod's spec resources become its allocation (at admission). */
  setAllocated(pod: PodLike): void;
  /** The pods that have an allocation, each with its allocated resources (admission and eviction read these). */
  allocatedPods(pods: Pod[]): Pod[];
  /** upstream handlePodResourcesResize: true when the resize was allocated now. */
  handleResize(pod: Pod, others: Pod[], admit: AdmitFn, nowMs: number): boolean;
  removePod(uid: string): void;
  removeOrphans(keep: ReadonlySet<string>): void;
}

/** upstream ResourceInfoForPod: the resources of every container (init ones included). */
export function resourceInfoForPod(pod: PodLike): PodResourceInfo {
  const containers: Record<string, ContainerResources> = {};
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) containers[c.name] = stringResources(c.resources);
  return { containers };
}

const sameList = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) => {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b ?? {}).length && ka.every((k) => a?.[k] === b?.[k]);
};
const sameResources = (a: ContainerResources, b: ContainerResources) => sameList(a.requests, b.requests) && sameList(a.limits, b.limits);

/** upstream updatePodFromAllocation: a copy of the pod with each allocated container's resources; the pod itself when equal. */
export function podFromAllocation(pod: Pod, allocated: PodResourceInfo | undefined): { pod: Pod; updated: boolean } {
  if (!allocated) return { pod, updated: false };
  let updated = false;
  const apply = <C extends ContainerLike>(cs: C[] | undefined): C[] | undefined =>
    cs?.map((c) => {
      const want = allocated.containers[c.name];
      if (!want || sameResources(stringResources(c.resources), want)) return c;
      updated = true;
      return { ...c, resources: { ...(want.requests ? { requests: { ...want.requests } } : {}), ...(want.limits ? { limits: { ...want.limits } } : {}) } };
    });
  const containers = apply(pod.spec.containers)!;
  const initContainers = apply(pod.spec.initContainers);
  if (!updated) return { pod, updated };
  return { pod: { ...pod, spec: { ...pod.spec, containers, ...(initContainers ? { initContainers } : {}) } }, updated };
}

export interface AllocationManagerOptions {
  /** kubelet rootDir for the checkpoints; undefined keeps them in memory only. */
  rootDir?: string;
  events?: EventRecorder;
}

export function createAllocationManager(opts: AllocationManagerOptions = {}): AllocationManager {
  const allocated = createResourceState(opts.rootDir && join(opts.rootDir, ALLOCATED_PODS_STATE_FILE));
  const actuated = createResourceState(opts.rootDir && join(opts.rootDir, ACTUATED_PODS_STATE_FILE));
  const conditions = createResizeConditions();
  const event = (pod: Pod, type: "Normal" | "Warning", reason: string, message: string) => opts.events?.event(podRef(pod), type, reason, message);
  const updatePodFromAllocation = (pod: Pod) => podFromAllocation(pod, allocated.get(pod.metadata.uid));
  return {
    actuated,
    conditions,
    updatePodFromAllocation,
    setAllocated: (pod) => allocated.setPod(pod.metadata.uid ?? "", resourceInfoForPod(pod)),
    allocatedPods: (pods) => pods.filter((p) => allocated.get(p.metadata.uid)).map((p) => updatePodFromAllocation(p).pod),
    handleResize(pod, others, admit, nowMs) {
      const uid = pod.metadata.uid;
      if (!updatePodFromAllocation(pod).updated) {
        conditions.clearPending(uid);
        return false;
      }
      const generation = pod.metadata.generation ?? 0;
      const verdict = admit(
        pod,
        others.filter((p) => p.metadata.uid !== uid),
      );
      if (verdict.admit) {
        allocated.setPod(uid, resourceInfoForPod(pod));
        conditions.clearPending(uid);
        conditions.clearInProgress(uid);
        conditions.setInProgress(uid, "", "", generation, nowMs);
        log.info(`pod resize allocated ${kv({ pod: podKey(pod), uid, generation })}`);
        event(pod, "Normal", "ResizeStarted", `Pod resize started: ${resizeSummary(pod, generation)}`);
        return true;
      }
      const reason = verdict.reason === "Infeasible" ? "Infeasible" : "Deferred";
      const message = verdict.message ?? "";
      if (conditions.setPending(uid, reason, message, generation, nowMs)) {
        log.info(`pod resize pending ${kv({ pod: podKey(pod), uid, reason, message })}`);
        event(
          pod,
          "Warning",
          reason === "Infeasible" ? "ResizeInfeasible" : "ResizeDeferred",
          `Pod resize ${reason}: ${resizeSummary(pod, generation, message)}`,
        );
      }
      return false;
    },
    removePod(uid) {
      allocated.removePod(uid);
      actuated.removePod(uid);
      conditions.forget(uid);
    },
    removeOrphans(keep) {
      allocated.removeOrphans(keep);
      actuated.removeOrphans(keep);
    },
  };
}
