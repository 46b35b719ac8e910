// The pod syncer the pod workers call (upstream kubelet.go SyncPod, SyncTerminatingPod,
// SyncTerminatedPod, the activeDeadlineHandler, and pod_workers.go killPodNow): plain functions over
// the shared LifecycleContext (lifecycle-context.ts); statuses go through status-sync.ts.
import { podRef } from "../events/types.ts";
import { kv, log } from "../log.ts";
import { dispatch, type LifecycleContext } from "./lifecycle-context.ts";
import type { KillPodRequest } from "./lifecycle-types.ts";
import { podKey, type PodLike } from "./pod-like.ts";
import { effectiveGracePeriod, type SyncResult, type UpdateType } from "./pod-workers.ts";
import { statusMatchesRelist } from "./pleg.ts";
import type { RuntimePodStatus } from "./runtime.ts";
import { isTerminalPhase } from "./status-manager.ts";
import { allocatedPodForSync, noteResizeProgress } from "./pod-resize.ts";
import { updateStatus } from "./status-sync.ts";
import { terminalStatus } from "./status.ts";
import type { Pod } from "./types.ts";

async function readStatus(ctx: LifecycleContext, pod: Pod): Promise<RuntimePodStatus> {
  const status = await ctx.runtime.getPodStatus(pod.metadata.uid, pod.metadata.name, pod.metadata.namespace);
  ctx.lastRuntimeStatus.set(pod.metadata.uid, { status, atMs: ctx.clock.now() });
  return status;
}

/** The runtime status of the pod's last sync, when a relist since shows nothing of it changed (see lastRuntimeStatus). */
function reusableStatus(ctx: LifecycleContext, pod: Pod): RuntimePodStatus | undefined {
  const uid = pod.metadata.uid;
  const cached = ctx.lastRuntimeStatus.get(uid);
  const relist = ctx.pleg.relisted();
  if (!relist) return undefined;
  // A UID never read before that a relist of this agent does not show has nothing in the runtime:
  // only its own worker creates sandboxes for it, and that worker has not acted yet (upstream's
  // first sync reads the PLEG cache, empty for such a pod). 100 new pods then start without 200
  // CRI listings in the way of the first sandbox.
  if (!cached) return relist.pods.has(uid) ? undefined : { uid, name: pod.metadata.name, namespace: pod.metadata.namespace, sandboxes: [], containers: [] };
  if (relist.startMs <= cached.atMs) return undefined;
  return statusMatchesRelist(cached.status, relist.pods.get(uid)) ? cached.status : undefined;
}

/**
 * Upstream SyncPod. `signal`: a kill preempted this sync (pod workers); stop before the next step.
 */
export async function syncPod(ctx: LifecycleContext, desired: Pod, _type: UpdateType, signal?: AbortSignal): Promise<SyncResult> {
  const { runtime, probes, lastRuntimeStatus } = ctx;
  const uid = desired.metadata.uid;
  const pod = allocatedPodForSync(ctx, desired);
  if (isTerminalPhase(ctx.statuses.get(uid))) return { terminal: true };
  if (pastActiveDeadline(ctx, pod)) return { terminal: true };
  // A static pod replaced by an edited manifest (new UID, same name) starts only once the old
  // one is gone (upstream allowStaticPodStart); the old worker's finish kicks us.
  for (const [otherUid, other] of ctx.known)
    if (otherUid !== uid && podKey(other) === podKey(pod) && ctx.workers.couldHaveRunningContainers(otherUid)) {
      log.debug(`pod waits for its predecessor to stop ${kv({ pod: podKey(pod), uid, predecessor: otherUid })}`);
      return {};
    }
  const cgroupParent = await ctx.deps.cgroups?.ensurePod(pod);
  if (signal?.aborted) return {};
  const before = reusableStatus(ctx, pod) ?? (await readStatus(ctx, pod));
  // Preempted: still record what the runtime showed (an adopted pod's containers), without
  // probes — the termination removed them — until the termination's own status lands.
  if (signal?.aborted) {
    updateStatus(ctx, pod, before, { podIsTerminal: true, withProbes: false });
    return {};
  }
  probes.addPod(pod);
  // The runtime may change under this sync: until its "after" status lands, the next sync reads
  // the runtime (a sync that throws half-way never leaves a stale or assumed-empty status behind).
  const kept = lastRuntimeStatus.get(uid);
  lastRuntimeStatus.set(uid, { status: before, atMs: Number.POSITIVE_INFINITY });
  const result = await runtime.syncPod(pod, before, ctx.backOff, {
    unhealthy: probes.unhealthy(uid),
    cgroupParent,
    started: (c) => probes.isStarted(uid, c),
    podCgroup: ctx.deps.cgroups?.resize,
  });
  if (signal?.aborted) {
    updateStatus(ctx, pod, await runtime.getPodStatus(uid, pod.metadata.name, pod.metadata.namespace), {
      syncErrors: result.errors,
      podIsTerminal: true,
      withProbes: false,
    });
    return {};
  }
  for (const e of result.errors)
    if (e.reason !== "CrashLoopBackOff" && e.message)
      log.warn(`container start failed ${kv({ pod: podKey(pod), container: e.container, reason: e.reason, message: e.message })}`);
  if (result.unchanged && kept) lastRuntimeStatus.set(uid, kept);
  const after = result.unchanged ? before : await readStatus(ctx, pod);
  noteResizeProgress(ctx, pod, after, result.resizeError);
  const status = updateStatus(ctx, pod, after, { syncErrors: result.errors });
  if (isTerminalPhase(status)) return { terminal: true };
  return { retry: result.errors.length > 0, retryAfterMs: result.retryAfterMs };
}

/**
 * Upstream SyncTerminatingPod: liveness and startup probes stop, the runtime kills the pod (its
 * readiness probes run on meanwhile: a container failing them goes unready while it stops), then the
 * rest of the probes stop and its final status is recorded.
 */
export async function syncTerminatingPod(ctx: LifecycleContext, pod: Pod, gracePeriodSeconds: number): Promise<void> {
  const { runtime, podManager } = ctx;
  const uid = pod.metadata.uid;
  ctx.lastRuntimeStatus.delete(uid);
  ctx.probes.stopLivenessAndStartup(uid);
  log.info(`killing pod ${kv({ pod: podKey(pod), uid, gracePeriod: gracePeriodSeconds })}`);
  const killed = runtime.killPod({ uid, name: pod.metadata.name, namespace: pod.metadata.namespace }, gracePeriodSeconds, pod);
  // A kill that preempted the pod's first sync: its status never saw the containers. Record
  // them alongside the kill (never before it), unless the post-kill status lands first.
  let final = false;
  if (podManager.get(uid) && !ctx.statuses.get(uid)?.containerStatuses?.some((c) => c.containerID)) {
    runtime.getPodStatus(uid, pod.metadata.name, pod.metadata.namespace).then(
      (rs) => void (final || updateStatus(ctx, pod, rs, { podIsTerminal: true, withProbes: false })),
      () => undefined,
    );
  }
  await killed;
  ctx.probes.removePod(uid);
  if (podManager.get(uid)) {
    const rs = await runtime.getPodStatus(uid, pod.metadata.name, pod.metadata.namespace);
    final = true;
    updateStatus(ctx, pod, rs, { podIsTerminal: true });
  }
}

/** Upstream SyncTerminatedPod: the pod cgroup goes; then its containers and status, or only its volumes. */
export async function syncTerminatedPod(ctx: LifecycleContext, pod: Pod): Promise<void> {
  const { runtime } = ctx;
  const uid = pod.metadata.uid;
  await ctx.deps.cgroups?.removePod(uid);
  await ctx.deps.userns?.release(uid).catch((e: Error) => log.warn(`releasing the pod's user namespace failed ${kv({ pod: podKey(pod), error: e.message })}`));
  if (!ctx.podManager.get(uid)) {
    ctx.deps.allocation?.removePod(uid);
    // The source no longer wants it: remove its containers and forget its status.
    await runtime.removePod(uid);
    ctx.statuses.delete(uid);
    ctx.loggedExits.delete(uid);
  } else {
    // Terminated but still known (evicted, or finished under restartPolicy Never): its status
    // stays, its volumes go, as upstream's volume manager tears down volumes of terminated pods —
    // an eviction for disk held in an emptyDir only relieves pressure once this has run.
    await runtime.tearDownVolumes?.(uid);
  }
}

/**
 * spec.activeDeadlineSeconds (upstream activeDeadlineHandler): once the pod has been active that
 * long since its startTime it is failed with DeadlineExceeded and stopped. A timer re-syncs the pod
 * at its deadline so it does not wait for the periodic sync.
 */
function pastActiveDeadline(ctx: LifecycleContext, pod: Pod): boolean {
  const { clock, statuses, deadlineTimers } = ctx;
  const limit = pod.spec.activeDeadlineSeconds;
  const start = statuses.get(pod.metadata.uid)?.startTime;
  if (limit === undefined || !start) return false;
  const deadlineMs = Date.parse(start) + limit * 1000;
  if (clock.now() < deadlineMs) {
    if (!deadlineTimers.has(pod.metadata.uid))
      deadlineTimers.set(
        pod.metadata.uid,
        clock.setTimeout(() => {
          deadlineTimers.delete(pod.metadata.uid);
          const p = ctx.podManager.get(pod.metadata.uid);
          if (p) dispatch(ctx, p, "sync");
        }, deadlineMs - clock.now()),
      );
    return false;
  }
  const message = "Pod was active on the node longer than the specified deadline";
  log.info(`pod exceeded its active deadline ${kv({ pod: podKey(pod), uid: pod.metadata.uid, activeDeadlineSeconds: limit })}`);
  ctx.deps.events?.event(podRef(pod), "Normal", "DeadlineExceeded", message);
  statuses.set(pod.metadata.uid, terminalStatus(statuses.get(pod.metadata.uid), "DeadlineExceeded", message, clock.now()));
  return true;
}

/**
 * Upstream killPodNow: the pod is stopped through its worker and recorded Failed with the request's
 * reason; resolves once its containers are stopped. No stop within 1.5 × grace is a Warning event.
 */
export function killPodNow(ctx: LifecycleContext, pod: PodLike, gracePeriodOverrideSeconds: number | undefined, req: KillPodRequest): Promise<void> {
  const { clock, statuses, workers } = ctx;
  const uid = pod.metadata.uid ?? "";
  const target = ctx.podManager.get(uid) ?? ctx.known.get(uid);
  if (!target) return Promise.reject(new Error(`killPod: pod ${podKey(pod)} uid=${uid} is not known to the pod workers`));
  // Already finished (terminal, or stopped earlier): keep its recorded outcome.
  if (workers.state(uid) === "finished") return Promise.resolve();
  const st = terminalStatus(statuses.get(uid), req.reason, req.message, clock.now(), true);
  if (req.condition)
    st.conditions = st.conditions?.map((c) => (c.type === "DisruptionTarget" ? { ...c, reason: req.condition!.reason, message: req.condition!.message } : c));
  statuses.set(uid, st);
  if (req.annotations) statuses.setAnnotations(uid, req.annotations);
  log.info(
    `stopping pod for the kubelet ${kv({ pod: podKey(target), uid, reason: req.reason, gracePeriodOverride: gracePeriodOverrideSeconds, message: req.message })}`,
  );
  // Upstream killPodNow: no stop within 1.5 × grace (at least 10 s) is a Warning event.
  const grace = effectiveGracePeriod(undefined, target.spec.terminationGracePeriodSeconds, gracePeriodOverrideSeconds);
  const overdue = clock.setTimeout(
    () => ctx.deps.events?.event(podRef(target), "Warning", "ExceededGracePeriod", "Container runtime did not kill the pod within specified grace period."),
    Math.max(10, grace + Math.floor(grace / 2)) * 1000,
  );
  return new Promise<void>((resolve) => {
    ctx.known.set(uid, target);
    const done = () => (clock.clearTimeout(overdue), resolve());
    workers.updatePod({ type: "kill", pod: target, kill: { gracePeriodOverrideSeconds, onDone: done } });
  });
}

/** A pod of this full name ("name_namespace") was removed by its source and is still stopping. */
export function isPodTerminatingByFullName(ctx: LifecycleContext, name: string): boolean {
  for (const [uid, p] of ctx.known)
    if (`${p.metadata.name}_${p.metadata.namespace ?? "default"}` === name && !ctx.podManager.get(uid) && ctx.workers.state(uid) !== "finished") return true;
  return false;
}
