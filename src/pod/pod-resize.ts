// The lifecycle's side of in-place resize (upstream kubelet.go SyncPod's resize steps and
// HandlePodUpdates → allocationManager.RetryPendingResizes): before each sync a pending resize is
// admitted against the other pods' allocations, and the pod runs as allocated; after it,
// PodResizeInProgress is set while a running container's actuated cpu/memory differ from the
// allocation (reason Error when the resize failed), and cleared with a ResizeCompleted event once done.
import { podRef } from "../events/types.ts";
import { parseQuantity, quantityMilliValue } from "../config/quantity.ts";
import { kv, log } from "../log.ts";
import { resizeSummary } from "./allocation/events.ts";
import type { ContainerResources } from "./allocation/state.ts";
import type { LifecycleContext } from "./lifecycle-context.ts";
import { activePods, canAdmitPod } from "./pod-admission.ts";
import { podKey, type PodLike } from "./pod-like.ts";
import { stringResourceList } from "./pod-resources.ts";
import type { RuntimePodStatus } from "./runtime.ts";
import type { Pod } from "./types.ts";

/** upstream handlePodResourcesResize at sync time, then UpdatePodFromAllocation: the pod as the runtime is to run it. */
export function allocatedPodForSync(ctx: LifecycleContext, pod: Pod): Pod {
  const allocation = ctx.deps.allocation;
  if (!allocation) return pod;
  const admit = (p: Pod, others: Pod[]) => {
    const r = canAdmitPod(ctx, p, others).rejected;
    return r ? { admit: false, reason: r.reason, message: r.message } : { admit: true };
  };
  allocation.handleResize(pod, activePods(ctx), admit, ctx.clock.now());
  return allocation.updatePodFromAllocation(pod).pod;
}

const milli = (v: string | undefined) => (v === undefined ? 0 : quantityMilliValue(parseQuantity(v)));
const sameQuantities = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) =>
  ["cpu", "memory"].every((r) => milli(a?.[r]) === milli(b?.[r]));

/** upstream isContainerResourceResizeInProgress: a running container whose actuated cpu/memory differ from its allocation. */
export function resizeInProgress(pod: PodLike, running: ReadonlySet<string>, actuated: (name: string) => ContainerResources | undefined): boolean {
  const resizable = [...(pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === "Always"), ...pod.spec.containers];
  return resizable.some((c) => {
    if (!running.has(c.name)) return false;
    const want = c.resources;
    const have = actuated(c.name);
    return !sameQuantities(stringResourceList(want?.requests), have?.requests) || !sameQuantities(stringResourceList(want?.limits), have?.limits);
  });
}

/** After the runtime's sync: PodResizeInProgress set (or Error), or cleared with ResizeCompleted. */
export function noteResizeProgress(ctx: LifecycleContext, pod: Pod, after: RuntimePodStatus, resizeError: string | undefined): void {
  const allocation = ctx.deps.allocation;
  if (!allocation) return;
  const uid = pod.metadata.uid;
  const generation = pod.metadata.generation ?? 0;
  const now = ctx.clock.now();
  const event = (type: "Normal" | "Warning", reason: string, message: string) => ctx.deps.events?.event(podRef(pod), type, reason, message);
  if (resizeError) {
    if (allocation.conditions.setInProgress(uid, "Error", resizeError, generation, now))
      event("Warning", "ResizeError", `Pod resize error: ${resizeSummary(pod, generation, resizeError)}`);
    return;
  }
  const running = new Set(after.containers.filter((c) => c.state === "running").map((c) => c.name));
  if (resizeInProgress(pod, running, (name) => allocation.actuated.getContainer(uid, name))) {
    allocation.conditions.setInProgress(uid, "", "", generation, now);
    return;
  }
  const done = allocation.conditions.clearInProgress(uid);
  if (done === undefined) return;
  log.info(`pod resize completed ${kv({ pod: podKey(pod), uid, generation: done })}`);
  event("Normal", "ResizeCompleted", `Pod resize completed: ${resizeSummary(pod, done)}`);
}
