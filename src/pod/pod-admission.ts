// Pod admission (upstream kubelet.go HandlePodAdditions and canAdmitPod over the admit handlers, and
// GetActivePods): plain functions over the shared LifecycleContext (lifecycle-context.ts); an admitted
// pod goes to its worker, a refused one is recorded Failed with the handler's reason.
import { podRef } from "../events/types.ts";
import { kv, log } from "../log.ts";
import { dispatch, type LifecycleContext } from "./lifecycle-context.ts";
import type { PodAdmitHandler } from "./lifecycle-types.ts";
import { isTerminalPhase } from "./status-manager.ts";
import { terminalStatus } from "./status.ts";
import type { Pod } from "./types.ts";
import { podKey } from "./pod-like.ts";

/** Pods that are admitted and not terminal: what eviction ranks and admission counts. */
export function activePods(ctx: LifecycleContext): Pod[] {
  const active = ctx.podManager.pods().filter((p) => {
    const st = ctx.workers.state(p.metadata.uid);
    return !isTerminalPhase(ctx.statuses.get(p.metadata.uid)) && (st === undefined || st === "syncing");
  });
  // With their allocated resources (upstream getAllocatedPods): a resize not admitted counts as before.
  const allocation = ctx.deps.allocation;
  return allocation ? active.map((p) => allocation.updatePodFromAllocation(p).pod) : active;
}

/** Upstream canAdmitPod: the first refusal ends it (a later handler, e.g. preemption, never runs). */
export function canAdmitPod(ctx: LifecycleContext, pod: Pod, others: Pod[]): { rejected?: ReturnType<PodAdmitHandler>; waits: Promise<unknown>[] } {
  const waits: Promise<unknown>[] = [];
  for (const h of ctx.admitHandlers) {
    const r = h(pod, others);
    if (!r.admit) return { rejected: r, waits };
    if (r.waitFor) waits.push(r.waitFor);
  }
  return { waits };
}

/** Upstream HandlePodAdditions: oldest first, each admitted against the active pods, then started. */
export function handleAdditions(ctx: LifecycleContext, pods: Pod[]): void {
  const { podManager, workers, statuses } = ctx;
  const sorted = [...pods].sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? ""));
  for (const pod of sorted) {
    const uid = pod.metadata.uid;
    podManager.add(pod);
    if (isTerminalPhase(statuses.get(uid)) || workers.isTerminationRequested(uid)) continue;
    const others = activePods(ctx).filter((p) => p.metadata.uid !== uid);
    // After a restart the pod is admitted with what it was allocated before (upstream AddPod).
    const admitted = ctx.deps.allocation?.updatePodFromAllocation(pod).pod ?? pod;
    const { rejected, waits } = canAdmitPod(ctx, admitted, others);
    if (rejected) {
      const reason = rejected.reason ?? "Rejected";
      const message = rejected.message ?? "pod admission rejected";
      log.warn(`pod rejected at admission ${kv({ pod: podKey(pod), uid, reason, message })}`);
      ctx.deps.events?.event(podRef(pod), "Warning", reason, message);
      statuses.set(uid, terminalStatus(statuses.get(uid), reason, message, ctx.clock.now()));
      continue;
    }
    ctx.deps.allocation?.setAllocated(admitted);
    log.info(`pod added ${kv({ pod: podKey(pod), uid, source: pod.metadata.annotations?.["kubernetes.io/config.source"] })}`);
    if (waits.length === 0) dispatch(ctx, pod, "create");
    // Admitted after preempting: started once those pods are stopped, unless it went meanwhile.
    else
      void Promise.allSettled(waits).then(() => podManager.get(uid) && !workers.isTerminationRequested(uid) && dispatch(ctx, podManager.get(uid)!, "create"));
  }
}
