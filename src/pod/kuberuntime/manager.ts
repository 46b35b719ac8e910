// The CRI-backed container runtime (upstream kuberuntime_manager.go kubeGenericRuntimeManager):
// implements src/pod/runtime.ts over a CriClient — GetPods, GetPodStatus, SyncPod, KillPod here; the
// parts (container.ts, sandbox.ts, image.ts, logs.ts, pod-volumes.ts) share one KubeRuntimeContext.
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { ContainerFilter, PodSandboxConfig, PodSandboxFilter } from "../../cri/types.ts";
import { kv, log } from "../../log.ts";
import { realClock } from "../../clock.ts";
import { podKeyOf, type PodLike, podUid } from "../pod-like.ts";
import type { BackOff, Runtime, RuntimePod, RuntimePodStatus, SyncPodOptions, SyncPodResult } from "../runtime.ts";
import { createSlots } from "./slots.ts";
import { type PodActions, computePodActions } from "./compute-actions.ts";
import { computePodResizeActions, emptyResizeActions, hasResize, type PodResizeActions } from "./resize-actions.ts";
import { doPodResizeAction } from "./resize.ts";
import { DEFAULT_CONTAINER_GC_POLICY, runContainerGc } from "./container-gc.ts";
import type { PodRef } from "./config.ts";
import { podDir } from "./empty-dir.ts";
import { createContainerHooks } from "./container-hooks.ts";
import { cleanSubPaths } from "../volumes/index.ts";
import { DEFAULT_DNS_SETTINGS } from "./pod-network.ts";
import { createBackOff } from "../backoff.ts";
import { createImagePuller } from "../images/puller.ts";
import { containerNameOf, POD_UID_LABEL, podIdentityFromLabels } from "./labels.ts";
import { toContainerState } from "./status.ts";
import { podContainersDir } from "./termination-message.ts";
import { MINIMUM_GRACE_PERIOD_SECONDS, containerSpec, terminationGracePeriod } from "./termination.ts";
import { type KubePod, asKubePod } from "./types.ts";
import { noopRecorder, podRef, reasons } from "../../events/index.ts";
import { detectContainerCgroupHost } from "./cgroup-host.ts";
import {
  DEFAULT_CONCURRENT_START_CALLS,
  type HeldSlot,
  type KubeRuntimeContext,
  type KubeRuntimeOptions,
  containerEventRecorder,
  memTotalBytes,
  untimed,
} from "./context.ts";
import { containerStatuses, execInContainer, killPodContainers, startPodContainers, stopContainer } from "./container.ts";
import { listContainerLogs } from "./logs.ts";
import { forgetMountedVolumes, resolveApiObjects, setUpVolumes, tearDownPod, volumeRetryDelayMs } from "./pod-volumes.ts";
import { inputsFor } from "./run-options.ts";
import { createPodSandbox, podSandboxStatuses, sandboxConfigFailed, sandboxConfigFor, usernsOptionsFor } from "./sandbox.ts";

/** Upstream minimumGracePeriodInSeconds: containers always get this long to stop, unless overridden. */
export { MINIMUM_GRACE_PERIOD_SECONDS };
export type { KubeRuntimeOptions, PodApiObjectsSource, StorageOperation } from "./context.ts";
export { goDuration } from "./image.ts";

function refOf(pod: PodLike): PodRef {
  return { name: pod.metadata.name, namespace: pod.metadata.namespace ?? "", uid: podUid(pod) };
}

export function createKubeRuntime(opts: KubeRuntimeOptions): Runtime & { execSync: NonNullable<Runtime["execSync"]> } {
  const ctx = createKubeRuntimeContext(opts);
  const { cri } = ctx;
  return {
    async version() {
      const v = await cri.version();
      return { runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion };
    },
    getPods: (all) => getPods(ctx, all),
    podClaims: (uid) => ctx.podObjects.get(uid)?.claims,
    foreignPodUids: () => (cri as { foreignPodUids?: () => ReadonlySet<string> }).foreignPodUids?.() ?? new Set(),
    getPodStatus: (uid, name, namespace) => getPodStatus(ctx, uid, name, namespace),
    syncPod: (pod, status, backOff, options) => syncPod(ctx, pod, status, backOff, options),
    killPod: (pod, gracePeriodSeconds, spec) => killPod(ctx, pod, gracePeriodSeconds, spec && asKubePod(spec)),
    removePod: (uid) => removePod(ctx, uid),
    async tearDownVolumes(uid) {
      forgetMountedVolumes(ctx, uid);
      if (!opts.volumeHostPath) await tearDownPod(ctx, uid, "volumes");
    },
    execSync: (containerId, cmd, timeoutMs) => execInContainer(ctx, containerId, cmd, Math.max(1, Math.ceil(timeoutMs / 1000))),
    garbageCollect: async (pods) =>
      void (await runContainerGc(cri, opts.containerGcPolicy ?? DEFAULT_CONTAINER_GC_POLICY, pods, ctx.podLogsDir, ctx.now(), ctx.gcSeenUids)),
    listContainerLogs: () => listContainerLogs(ctx),
    reopenContainerLog: (containerId) => cri.reopenContainerLog(containerId),
  };
}

/** The shared record of the runtime's parts, with their defaults and empty caches. */
function createKubeRuntimeContext(opts: KubeRuntimeOptions): KubeRuntimeContext {
  const { cri } = opts;
  const rootDir = opts.rootDir ?? "/var/lib/kubelet";
  const clock = opts.clock ?? realClock;
  const events = opts.events ?? noopRecorder;
  const containerEvent = containerEventRecorder(events);
  const ctx: KubeRuntimeContext = {
    opts,
    cri,
    clock,
    now: opts.now ?? Date.now,
    podLogsDir: opts.podLogsDir ?? "/var/log/pods",
    rootDir,
    memoryCapacityBytes: opts.memoryCapacityBytes ?? memTotalBytes(),
    cgroupHost: opts.cgroupHost ?? detectContainerCgroupHost(),
    storageOperation: opts.storageOperation ?? untimed,
    dns: { ...DEFAULT_DNS_SETTINGS, ...opts.dns },
    seccomp: { seccompProfileRoot: opts.seccompProfileRoot ?? join(rootDir, "seccomp"), seccompDefault: opts.seccompDefault === true },
    events,
    containerEvent,
    hooks: createContainerHooks({
      cri,
      clock,
      hostIP: opts.hostIP,
      fetch: opts.fetch,
      execSync: (id, cmd, t) => execInContainer(ctx, id, cmd, t),
      stopContainer: (id, name, ref, graceSeconds, message, pod) => stopContainer(ctx, { id, name, ref, graceSeconds, message, pod }),
      hookFailed: (pod, name, reason, message) => containerEvent(pod, name, "Warning", reason, message),
    }),
    startSlots: createSlots(opts.concurrentStartCalls ?? DEFAULT_CONCURRENT_START_CALLS),
    imageBackOff: createBackOff(),
    imagePuller: opts.imagePuller ?? createImagePuller(1),
    podObjects: new Map(),
    mountedVolumes: new Set(),
    mountFailures: new Map(),
    knownRunning: new Map(),
    gcSeenUids: new Set(),
    logPaths: new Map(),
    relist: {},
  };
  return ctx;
}

/** Upstream GetPodStatus: the pod's sandboxes and containers; what runs is remembered for a kill. */
async function getPodStatus(ctx: KubeRuntimeContext, uid: string, name: string, namespace: string): Promise<RuntimePodStatus> {
  const selector = { labelSelector: { [POD_UID_LABEL]: uid } };
  const statuses = await podSandboxStatuses(ctx, selector);
  const containers = await containerStatuses(ctx, selector);
  noteRunning(ctx, uid, containers);
  retainRunning(ctx);
  return { uid, name, namespace, sandboxes: statuses, containers };
}

/** Upstream GetPods: the runtime's pods by their kubelet labels (all, or only ready sandboxes and running containers). */
async function getPods(ctx: KubeRuntimeContext, all: boolean): Promise<RuntimePod[]> {
  const { cri, relist } = ctx;
  const sandboxFilter: PodSandboxFilter | undefined = all ? undefined : { state: { state: "SANDBOX_READY" } };
  const containerFilter: ContainerFilter | undefined = all ? undefined : { state: { state: "CONTAINER_RUNNING" } };
  let sandboxes;
  let containers;
  if (all && relist.sandboxesListed === 0) {
    // An empty node's relist: no sandbox means no container (a container lives in a sandbox and
    // goes before it), so the containers are listed only once a sandbox shows — one CRI call a
    // second instead of two on an idle empty node.
    sandboxes = await cri.listPodSandbox(sandboxFilter);
    containers = sandboxes.length === 0 ? [] : await cri.listContainers(containerFilter);
  } else [sandboxes, containers] = await Promise.all([cri.listPodSandbox(sandboxFilter), cri.listContainers(containerFilter)]);
  if (all) relist.sandboxesListed = sandboxes.length;
  // The CRI codec hands out the same (frozen) object for an unchanged entry: when every entry of
  // both lists is the one of the last full listing, nothing changed and its pods are returned as
  // they were — the same array, which tells the PLEG there is nothing to diff. In any
  // order: containerd lists its stores in Go's random map order, a new order at every call.
  const lastFull = relist.lastFull;
  if (all && lastFull && sameEntries(lastFull.sandboxes, sandboxes) && sameEntries(lastFull.containers, containers)) return lastFull.pods;
  const pods = new Map<string, RuntimePod>();
  const podFor = (labels: Record<string, string>): RuntimePod | undefined => {
    const id = podIdentityFromLabels(labels);
    if (!id) return undefined; // not created by a kubelet: not ours to manage
    let p = pods.get(id.uid);
    if (!p) {
      p = { ...id, sandboxIds: [], containers: [] };
      pods.set(id.uid, p);
    }
    return p;
  };
  for (const s of sandboxes) {
    const p = podFor(s.labels);
    if (!p) continue;
    p.sandboxIds.push(s.id);
    if (s.state === "SANDBOX_READY") p.readySandboxes = (p.readySandboxes ?? 0) + 1;
  }
  for (const c of containers) {
    podFor(c.labels)?.containers.push({
      id: c.id,
      name: containerNameOf(c),
      state: toContainerState(c.state),
    });
  }
  // Every running container is in this listing: it replaces what was known.
  for (const uid of ctx.knownRunning.keys()) if (!pods.has(uid)) ctx.knownRunning.delete(uid);
  for (const p of pods.values()) noteRunning(ctx, p.uid, p.containers);
  retainRunning(ctx);
  const out = [...pods.values()];
  if (all) relist.lastFull = { sandboxes: new Set(sandboxes), containers: new Set(containers), pods: out };
  return out;
}

// The same set: as many, each one held, none twice (ids are unique; the last check is for a runtime that breaks that).
const sameEntries = (last: ReadonlySet<object>, now: readonly object[]) =>
  last.size === now.length && now.every((x) => last.has(x)) && new Set(now).size === now.length;

/** Remembers the pod's running containers (knownRunning) and tells the direct signaller about them. */
function noteRunning(ctx: KubeRuntimeContext, uid: string, containers: readonly { id: string; name: string; state: string }[]) {
  let ids: Map<string, string> | undefined;
  for (const c of containers) if (c.state === "running") (ids ??= new Map()).set(c.id, c.name);
  if (ids) ctx.knownRunning.set(uid, ids);
  else ctx.knownRunning.delete(uid);
  for (const id of ids?.keys() ?? []) ctx.opts.directSignal?.track(id, uid);
}

/** The direct signaller forgets what no longer runs: once per relist or pod status, not per pod. */
function retainRunning(ctx: KubeRuntimeContext) {
  ctx.opts.directSignal?.retain(new Set([...ctx.knownRunning.values()].flatMap((m) => [...m.keys()])));
}

/**
 * Upstream killPodWithSyncResult: the containers (killPodContainers, known ones first), then every
 * sandbox of the pod stopped; all failures are reported together.
 */
async function killPod(ctx: KubeRuntimeContext, ref: PodRef, graceSeconds: number, pod?: KubePod): Promise<void> {
  const selector = { labelSelector: { [POD_UID_LABEL]: ref.uid } };
  const errors = await killPodContainers(ctx, ref, graceSeconds, pod);
  for (const s of await ctx.cri.listPodSandbox(selector)) {
    await ctx.cri.stopPodSandbox(s.id).catch((e) => errors.push(`sandbox ${s.id.slice(0, 13)}: ${(e as Error).message}`));
  }
  if (errors.length > 0) throw new Error(`killing pod ${podKeyOf(ref.namespace, ref.name)}: ${errors.join("; ")}`);
}

/**
 * Upstream SyncPod: computePodActions (pure), then kill what must go, volumes and API objects,
 * the sandbox (created or reused), and the containers to start.
 */
async function syncPod(
  ctx: KubeRuntimeContext,
  podLike: PodLike,
  status: RuntimePodStatus,
  backOff: BackOff,
  options: SyncPodOptions = {},
): Promise<SyncPodResult> {
  const pod = asKubePod(podLike);
  const ref = refOf(pod);
  const result: SyncPodResult = { errors: [] };
  const actions = computePodActions(pod, status, options.unhealthy ?? [], (n) => options.started?.(n) ?? true);
  const resize = computeResize(ctx, pod, status, actions);
  const cgroupParent = options.cgroupParent ?? ctx.opts.cgroupParent?.(pod);
  const inputs = inputsFor(ctx, pod, cgroupParent);

  if (!(await killForSync(ctx, pod, ref, actions, status, result))) return result;

  await resolveApiObjects(ctx, pod, ref);
  inputs.objects = ctx.podObjects.get(ref.uid);
  const mountError = await setUpVolumes(ctx, pod);
  if (mountError) {
    const { message } = mountError;
    log.warn(`volume set-up failed ${kv({ pod: podKeyOf(ref.namespace, ref.name), event: "FailedMount", message })}`);
    ctx.events.event(podRef(pod), "Warning", reasons.FailedMountVolume, message);
    // Upstream's containers wait in ContainerCreating with no message; the event says why.
    for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers])
      result.errors.push({ container: c.name, reason: "ContainerCreating", message: "" });
    const failures = (ctx.mountFailures.get(ref.uid) ?? 0) + 1;
    ctx.mountFailures.set(ref.uid, failures);
    // A claim not resolved (not bound yet) is read again at the pod worker's back-off, as upstream.
    if (!mountError.processing) result.retryAfterMs = volumeRetryDelayMs(failures);
    return result;
  }
  ctx.mountFailures.delete(ref.uid);
  // upstream SyncPod: a new sandbox of a pod with its own user namespace counts, failed if any step failed.
  const counted = actions.createSandbox && pod.spec.hostUsers === false;
  const done = () => (counted && ctx.opts.userNamespacedPodStarted?.(result.errors.length > 0), result);
  let sandboxId = actions.sandboxId;
  let sandboxConfig: PodSandboxConfig;
  try {
    inputs.usernsOptions = await usernsOptionsFor(ctx, pod);
    sandboxConfig = sandboxConfigFor(ctx, pod, ref, actions, inputs);
  } catch (e) {
    sandboxConfigFailed(ctx, pod, ref, actions, result, e as Error);
    return done();
  }
  const held: HeldSlot = {};
  if (actions.createSandbox) {
    const created = await createPodSandbox(ctx, { pod, ref, actions, sandboxConfig, cgroupParent, held, result });
    if (created === undefined) return done();
    sandboxId = created;
  }

  // upstream SyncPod step 6: resize the pod and its running containers before starting any.
  if (hasResize(resize)) {
    const error = await doPodResizeAction(ctx, pod, resize, options.podCgroup);
    if (error) result.resizeError = error;
  }
  try {
    await startPodContainers(ctx, { pod, ref, status, sandboxId, sandboxConfig, inputs, backOff, result, held }, actions);
  } finally {
    held.release?.();
  }
  if (noRuntimeActions(actions) && !hasResize(resize) && result.errors.length === 0) result.unchanged = true;
  return done();
}

/** The resize part of computePodActions, over the actuated resources (none without them). */
function computeResize(ctx: KubeRuntimeContext, pod: KubePod, status: RuntimePodStatus, actions: PodActions): PodResizeActions {
  const actuated = ctx.opts.actuated;
  if (!actuated) return emptyResizeActions();
  actuated.initPod(pod);
  const uid = podUid(pod);
  return computePodResizeActions(pod, status, (name) => actuated.get(uid, name), actions);
}

/**
 * SyncPod's kill steps: the whole pod when its sandbox must go (then, without a new sandbox, the sync
 * ends, reporting a failed init container), else each container computePodActions marked. False ends
 * the sync (its failure is in result.errors).
 */
async function killForSync(
  ctx: KubeRuntimeContext,
  pod: KubePod,
  ref: PodRef,
  actions: PodActions,
  status: RuntimePodStatus,
  result: SyncPodResult,
): Promise<boolean> {
  const graceSeconds = Math.max(pod.spec.terminationGracePeriodSeconds ?? 30, MINIMUM_GRACE_PERIOD_SECONDS);
  if (actions.killPod) {
    // Upstream kills the running pod made of the status (ConvertPodStatusToRunningPod): a new pod's
    // empty status kills nothing. Skipping it spares a new pod two label listings of every sandbox
    // and container on the node (100 new pods: 200 calls in the way of their starts).
    const nothingRuns = status.sandboxes.length === 0 && status.containers.length === 0 && !ctx.knownRunning.has(ref.uid);
    try {
      if (!nothingRuns) await killPod(ctx, ref, graceSeconds, pod);
    } catch (e) {
      result.errors.push({ container: "", reason: "KillPodSandboxError", message: (e as Error).message });
      return false;
    }
    if (!actions.createSandbox) {
      if (actions.initFailed) {
        result.errors.push({
          container: actions.initFailed.name,
          reason: "InitContainerFailed",
          message: `init container ${actions.initFailed.name} failed and restartPolicy is Never`,
        });
      }
      return false;
    }
    return true;
  }
  for (const k of actions.containersToKill) {
    try {
      const grace = terminationGracePeriod(pod, containerSpec(pod, k.name), k.reason ?? "unknown");
      await ctx.hooks.killContainer(pod, ref, k.id, k.name, grace, k.message, { sandboxId: actions.sandboxId, floor: true });
    } catch (e) {
      result.errors.push({ container: k.name, reason: "KillContainerError", message: (e as Error).message });
      return false;
    }
  }
  return true;
}

/** The pod's containers and sandboxes removed, its volumes torn down and its caches forgotten. */
async function removePod(ctx: KubeRuntimeContext, uid: string): Promise<void> {
  const { cri, opts } = ctx;
  const selector = { labelSelector: { [POD_UID_LABEL]: uid } };
  for (const c of await cri.listContainers(selector)) await cri.removeContainer(c.id);
  for (const s of await cri.listPodSandbox(selector)) {
    await cri.stopPodSandbox(s.id);
    await cri.removePodSandbox(s.id);
  }
  // Upstream unmounts a removed pod's volumes and deletes its directory (cleanupOrphanedPodDirs);
  // with custom volume paths the caller owns them.
  ctx.podObjects.delete(uid);
  ctx.mountFailures.delete(uid);
  forgetMountedVolumes(ctx, uid);
  opts.apiObjects?.forget(uid);
  // The termination-log files and the subPath bind mounts are ours whoever owns the volumes
  // (upstream CleanSubPaths before the volume is unmounted).
  if (uid) {
    rmSync(podContainersDir(ctx.rootDir, uid), { recursive: true, force: true });
    cleanSubPaths(podDir(ctx.rootDir, uid));
  }
  if (!opts.volumeHostPath) await tearDownPod(ctx, uid);
}

/** The pod's runtime state is as wanted: nothing to create, start or kill. */
function noRuntimeActions(a: PodActions): boolean {
  return (
    !a.killPod &&
    !a.createSandbox &&
    !a.nextInitContainer &&
    !a.initFailed &&
    a.containersToStart.length === 0 &&
    a.ephemeralContainersToStart.length === 0 &&
    a.containersToKill.length === 0 &&
    (a.initContainersToStart?.length ?? 0) === 0
  );
}
