// The lifecycle's status side (upstream kubelet_pods.go generateAPIPodStatus feeding
// status/status_manager.go SetPodStatus, and the statuses served to the API): plain functions over
// the shared LifecycleContext (lifecycle-context.ts).
import { kv, log } from "../log.ts";
import type { LifecycleContext } from "./lifecycle-context.ts";
import type { RuntimePodStatus, SyncPodResult } from "./runtime.ts";
import { generatePodStatus, markRuntimeDown, withContainerReadiness } from "./status.ts";
import { MAX_WAIT_FOR_CONTAINER_RUNTIME_MS } from "./runtime-state.ts";
import { runtimeError } from "./sync-loop.ts";
import type { Pod, PodStatus } from "./types.ts";
import { podKey } from "./pod-like.ts";

export interface UpdateStatusOptions {
  /** The errors of the sync that read this runtime status. */
  syncErrors?: SyncPodResult["errors"];
  /** The pod is being (or was) terminated: no container will start again. */
  podIsTerminal?: boolean;
  /** Hand the containers to the prober (default true; not for a preempted or terminating pod). */
  withProbes?: boolean;
}

/**
 * Upstream generateAPIPodStatus + statusManager.SetPodStatus: the pod's status from the runtime's,
 * its probes and the old status; phase changes and container exits are logged once each.
 */
export function updateStatus(ctx: LifecycleContext, given: Pod, rs: RuntimePodStatus, o: UpdateStatusOptions = {}): PodStatus {
  const { statuses, probes, clock } = ctx;
  const { syncErrors, podIsTerminal, withProbes = true } = o;
  const uid = given.metadata.uid;
  const allocation = ctx.deps.allocation;
  // The status shows the allocation (upstream generateAPIPodStatus over the allocated pod); a terminal pod has no resize conditions.
  const pod = allocation?.updatePodFromAllocation(given).pod ?? given;
  if (podIsTerminal) allocation?.conditions.forget(uid);
  const resize = allocation && { actuated: (name: string) => allocation.actuated.getContainer(uid, name), conditions: allocation.conditions.list(uid) };
  const old = statuses.get(uid);
  logContainerExits(ctx, pod, rs);
  const status = generatePodStatus({
    pod,
    runtime: rs,
    oldStatus: statuses.get(uid),
    syncErrors,
    ready: (c) => probes.isReady(uid, c),
    started: (c) => probes.isStarted(uid, c),
    nowMs: clock.now(),
    hostIP: ctx.hostIP,
    runtimeName: ctx.state.runtimeName,
    podIsTerminal,
    ...(resize ? { resize } : {}),
  });
  statuses.set(uid, status);
  if (old?.phase !== status.phase) {
    log.info(`pod phase ${kv({ pod: podKey(pod), uid, from: old?.phase, to: status.phase })}`);
    if (status.phase === "Running") ctx.deps.metrics?.podRunning?.(pod, clock.now());
  }
  const probed = [...(pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === "Always"), ...pod.spec.containers];
  for (const c of withProbes ? probed : []) {
    const latest = rs.containers.filter((x) => x.name === c.name).sort((a, b) => b.attempt - a.attempt)[0];
    if (latest)
      probes.updateContainer(uid, c.name, {
        id: latest.id,
        running: latest.state === "running",
        startedAtMs: latest.startedAtMs,
        started: false,
        podIP: status.podIP,
      });
  }
  return statuses.get(uid)!;
}

/**
 * upstream syncLoopIteration on a readiness update → statusManager.SetContainerReadiness: the
 * result is in the pod's status at once, also while its worker is busy stopping it (a terminating
 * pod goes unready when its readiness probe fails, before its containers are gone).
 */
export function setContainerReadiness(ctx: LifecycleContext, uid: string, containerId: string, ready: boolean): void {
  const pod = ctx.podManager.get(uid) ?? ctx.known.get(uid);
  const old = ctx.statuses.get(uid);
  if (!pod || !old) return;
  const status = withContainerReadiness(pod, old, containerId, ready, ctx.clock.now());
  if (status !== old) ctx.statuses.set(uid, status);
}

/** One line per container exit (seen once per container ID): the first thing an SRE greps for. */
function logContainerExits(ctx: LifecycleContext, pod: Pod, rs: RuntimePodStatus): void {
  const uid = pod.metadata.uid;
  let seen = ctx.loggedExits.get(uid);
  if (!seen) ctx.loggedExits.set(uid, (seen = new Set()));
  for (const c of [...rs.containers].sort((a, b) => a.attempt - b.attempt)) {
    if (c.state !== "exited" || seen.has(c.id)) continue;
    seen.add(c.id);
    if (c.finishedAtMs && c.finishedAtMs < ctx.startedAtMs) continue; // exited before this bunlet started
    log.info(
      `container exited ${kv({ pod: podKey(pod), container: c.name, exitCode: c.exitCode, reason: c.reason, restartCount: c.attempt, id: c.id.slice(0, 13) })}`,
    );
  }
}

/**
 * Pods' Ready follows the runtime's reachability: while it is down past the grace, every
 * non-terminal pod is served Ready=False (upstream: the node goes NotReady and the node controller
 * marks its pods not ready). Derived when read, so no timer runs for it.
 */
export function servedStatus(ctx: LifecycleContext, status: PodStatus | undefined): PodStatus | undefined {
  const down = runtimeError(ctx);
  if (!down || !status) return status;
  const lastSeen = ctx.pleg.lastRelistMs() ?? ctx.startedAtMs;
  return markRuntimeDown(status, down, lastSeen + (ctx.config.runtimeDownGraceMs ?? MAX_WAIT_FOR_CONTAINER_RUNTIME_MS));
}

/** v1 Pods with their served status and status-manager annotations, sorted by namespace/name (/pods). */
export function listPodsForApi(ctx: LifecycleContext): Pod[] {
  return ctx.podManager
    .pods()
    .map((p) => {
      const extra = ctx.statuses.annotations(p.metadata.uid);
      return {
        ...p,
        metadata: extra ? { ...p.metadata, annotations: { ...p.metadata.annotations, ...extra } } : p.metadata,
        status: servedStatus(ctx, ctx.statuses.get(p.metadata.uid)) ?? { phase: "Pending" as const },
      };
    })
    .sort((a, b) => podKey(a).localeCompare(podKey(b)));
}

/** Calls `fn(uid)` when a pod's status is set or its worker finished; returns the unsubscribe. */
export function onStatusChange(ctx: LifecycleContext, fn: (uid: string) => void): () => void {
  ctx.finishedListeners.add(fn);
  const off = ctx.statuses.onChange(fn);
  return () => {
    ctx.finishedListeners.delete(fn);
    off();
  };
}
