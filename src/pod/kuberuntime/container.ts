// Containers (upstream kuberuntime_container.go: startContainer, killContainer(sWithSyncResult),
// getPodContainerStatuses, RunInContainer; hooks in container-hooks.ts): plain functions over the
// shared KubeRuntimeContext (context.ts), with one SyncPodRound record per pod sync's starts.
import { stringResources } from "../pod-resources.ts";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ContainerConfig, ContainerStatus as CriContainerStatus, Image as CriImage, PodSandboxConfig } from "../../cri/types.ts";
import { reasons } from "../../events/index.ts";
import { kv, log } from "../../log.ts";
import { formatBackOff } from "../backoff.ts";
import { defaultHostIP } from "../lifecycle-types.ts";
import type { BackOff, ExecResult, RuntimeContainerStatus, RuntimePodStatus, SyncPodResult } from "../runtime.ts";
import { imageUserOf } from "../security/index.ts";
import { type PodActions, latestStatus } from "./compute-actions.ts";
import { ContainerConfigError, type ConfigInputs, type PodRef, generateContainerConfig, idmapMounts } from "./config.ts";
import { withDeviceRunOptions } from "./device-options.ts";
import { containerBlockDevices } from "./pod-volumes.ts";
import type { BlockDevice } from "../volumes/index.ts";
import { PRIORITY_CREATE, PRIORITY_START, nodeAllocatable, type HeldSlot, type KubeRuntimeContext } from "./context.ts";
import { ensureImage } from "./image.ts";
import { hashContainer } from "./hash.ts";
import { POD_UID_LABEL } from "./labels.ts";
import { writePodHostsFile } from "./pod-network.ts";
import { toRuntimeContainerStatus } from "./status.ts";
import { signalName } from "./stop-signal.ts";
import { containerTerminationMessage, withTerminationMessage } from "./termination-message.ts";
import { createTerminationOrdering, isSidecar } from "./termination.ts";
import type { KubeContainer, KubeEphemeralContainer, KubePod } from "./types.ts";
import { podKeyOf } from "../pod-like.ts";

/**
 * upstream GetStableKey: the restart back-off is per container spec (its hash), so a changed container
 * (a new image) starts with a fresh back-off.
 */
const backOffKey = (ref: PodRef, container: KubeContainer) => `${ref.name}_${ref.namespace}_${ref.uid}_${container.name}_${hashContainer(container)}`;

/** CRI ExecSync with the output decoded (upstream RunInContainer); the timeout in seconds. */
export async function execInContainer(ctx: KubeRuntimeContext, containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecResult> {
  const r = await ctx.cri.execSync(containerId, cmd, timeoutSeconds);
  const dec = new TextDecoder();
  return { exitCode: r.exitCode, stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
}

/** One StopContainer: the container, the grace it gets and why (the Killing event's message). */
export interface StopContainerRequest {
  id: string;
  name: string;
  ref: PodRef;
  graceSeconds: number;
  message: string;
  pod?: KubePod;
}

/** The runtime's StopContainer with its direct signal, Killing event and log line (killContainer's last step). */
export async function stopContainer(ctx: KubeRuntimeContext, req: StopContainerRequest): Promise<void> {
  const { id, name, ref, graceSeconds, message, pod } = req;
  // The signal and the request go out first; the log line follows (the pressure path's latency is to the signal).
  const direct = ctx.opts.directSignal?.signal(id, graceSeconds);
  const stopped = ctx.cri.stopContainer(id, graceSeconds);
  // Upstream killContainer: "Stopping container <name>" unless the kill has its own message.
  ctx.containerEvent(pod ?? ref, name, "Normal", reasons.KillingContainer, !message || message === "Stopping pod" ? `Stopping container ${name}` : message);
  log.info(
    `killing container ${kv({ pod: podKeyOf(ref.namespace, ref.name), container: name, id: id.slice(0, 13), gracePeriod: graceSeconds, reason: message, signalledPid: direct?.pid, signal: direct && signalName(direct.signal) })}`,
  );
  await stopped;
}

/**
 * Upstream killContainersWithSyncResult, fast first: the containers known to run (last relist /
 * status) get their StopContainer at once, with no round trip before it; the listing that follows
 * catches any started since, which are stopped too. A known ID that is no longer listed as running (it
 * exited or was removed meanwhile) failing to stop is no error. With the pod's spec, preStop hooks
 * run and sidecars stop after the regular containers (killContainer). Returns the errors.
 */
export async function killPodContainers(ctx: KubeRuntimeContext, ref: PodRef, graceSeconds: number, pod?: KubePod): Promise<string[]> {
  const { cri, knownRunning } = ctx;
  const selector = { labelSelector: { [POD_UID_LABEL]: ref.uid } };
  const failed = new Map<string, string>();
  const hasSidecars = (pod?.spec.initContainers ?? []).some(isSidecar);
  const known = knownRunning.get(ref.uid);
  knownRunning.delete(ref.uid);
  // With sidecars, the ordering needs every running container first (one listing, as upstream);
  // a spec-less pod (an orphan's stub from housekeeping) has its preStop hooks restored from the
  // listing's annotations. Without any pod (direct callers) the fast path stays: stop, then list.
  const specless = pod !== undefined && pod.spec.containers.length === 0;
  const preListed = hasSidecars || specless ? await cri.listContainers({ ...selector, state: { state: "CONTAINER_RUNNING" } }) : undefined;
  if (specless && preListed) pod = ctx.hooks.restoreSpecs(ref, preListed, pod);
  const ordering =
    pod && preListed
      ? createTerminationOrdering(pod, [...new Set([...preListed.map((c) => c.metadata?.name ?? ""), ...(known?.values() ?? [])])], ctx.clock)
      : undefined;
  const started = new Set<string>();
  const stop = (id: string, name: string) => {
    started.add(id);
    return ctx.hooks.killContainer(pod, ref, id, name, graceSeconds, "Stopping pod", { ordering }).catch((e) => {
      failed.set(id, `${name}: ${(e as Error).message}`);
    });
  };
  const stops = known ? [...known].map(([id, name]) => stop(id, name)) : [];
  const running = preListed ?? (await cri.listContainers({ ...selector, state: { state: "CONTAINER_RUNNING" } }));
  for (const c of running) if (!started.has(c.id)) stops.push(stop(c.id, c.metadata?.name ?? ""));
  await Promise.all(stops);
  const listed = new Set(running.map((c) => c.id));
  return [...failed].filter(([id]) => listed.has(id)).map(([, e]) => e);
}

/** Upstream getPodContainerStatuses: the pod's containers, newest first, with exited ones' termination messages. */
export async function containerStatuses(ctx: KubeRuntimeContext, filter: { labelSelector: Record<string, string> }): Promise<RuntimeContainerStatus[]> {
  const list = await ctx.cri.listContainers(filter);
  const out: RuntimeContainerStatus[] = [];
  for (const c of list) {
    // A container removed between list and status is simply gone.
    const st = await ctx.cri.containerStatus(c.id).catch(() => undefined);
    if (!st?.status) continue;
    const cs = st.status as CriContainerStatus;
    const rs = toRuntimeContainerStatus(cs);
    // The log manager's path for it, without a ContainerStatus of its own (logs.ts).
    if (cs.state === "CONTAINER_RUNNING" && cs.logPath) ctx.logPaths.set(c.id, cs.logPath);
    // upstream convertToKubeContainerStatus: an exited container's termination message (file or log tail).
    if (rs.state === "exited") {
      const message = withTerminationMessage(rs.message, containerTerminationMessage(cs));
      if (message) rs.message = message;
    }
    out.push(rs);
  }
  return out.sort((a, b) => b.createdAtMs - a.createdAtMs);
}

/** What one SyncPod round hands to its container starts. */
export interface SyncPodRound {
  pod: KubePod;
  ref: PodRef;
  status: RuntimePodStatus;
  sandboxId: string;
  sandboxConfig: PodSandboxConfig;
  inputs: ConfigInputs;
  backOff: BackOff;
  result: SyncPodResult;
  /** The start slot the pod holds from its RunPodSandbox, released at its first container's start. */
  held: HeldSlot;
}

const allContainers = (pod: KubePod): KubeContainer[] => [...(pod.spec.initContainers ?? []), ...pod.spec.containers, ...(pod.spec.ephemeralContainers ?? [])];

/** SyncPod's last steps: ephemeral containers, init containers (one, or in order with sidecars), then the regular ones. */
export async function startPodContainers(ctx: KubeRuntimeContext, round: SyncPodRound, actions: PodActions): Promise<void> {
  const { pod, ref, sandboxId, inputs, result } = round;
  const { opts } = ctx;
  const start = (c: KubeContainer) => startContainer(ctx, round, c);
  const byName = (name: string, list: KubeContainer[] | undefined) => list?.find((c) => c.name === name);
  // env valueFrom (downward API) may need the pod's IP, known once the sandbox runs.
  const needsIP = opts.manageEtcHosts !== false || allContainers(pod).some((c) => c.env?.some((e) => e.valueFrom));
  const ip =
    needsIP &&
    (actions.nextInitContainer || actions.initContainersToStart?.length || actions.containersToStart.length || actions.ephemeralContainersToStart.length)
      ? await ctx.hooks.podIP(pod, sandboxId).catch(() => undefined)
      : undefined;
  inputs.downward = { podIP: ip, hostIP: opts.hostIP ?? defaultHostIP(), nodeAllocatable: nodeAllocatable(ctx) };
  // upstream makeHostsMount: only once the pod IP is known.
  if (ip && opts.manageEtcHosts !== false) {
    try {
      inputs.etcHostsPath = writePodHostsFile(ctx.rootDir, pod, [ip], ctx.dns.clusterDomain);
    } catch (e) {
      log.warn(`cannot write the pod's hosts file ${kv({ pod: podKeyOf(ref.namespace, ref.name), error: (e as Error).message })}`);
    }
  }
  // upstream SyncPod step 7: ephemeral containers first, so a pod whose init container cannot start can be debugged.
  for (const name of actions.ephemeralContainersToStart) {
    const c = byName(name, pod.spec.ephemeralContainers);
    if (c) await start(c);
  }
  if (actions.nextInitContainer) {
    const c = byName(actions.nextInitContainer, pod.spec.initContainers);
    if (c) await start(c);
    return;
  }
  // Pods with sidecars: init containers in order (a regular one that fails to start stops the round).
  for (const name of actions.initContainersToStart ?? []) {
    const c = byName(name, pod.spec.initContainers);
    if (!c) continue;
    const before = result.errors.length;
    await start(c);
    if (result.errors.length > before && !isSidecar(c)) return;
  }
  for (const name of actions.containersToStart) {
    const c = byName(name, pod.spec.containers);
    if (c) await start(c);
  }
}

async function startContainer(ctx: KubeRuntimeContext, round: SyncPodRound, container: KubeContainer): Promise<void> {
  const { held } = round;
  try {
    await startContainerIn(ctx, round, container);
  } finally {
    // Only the first container start after the sandbox uses the pod's slot; later ones queue.
    held.release?.();
    held.release = undefined;
  }
}

/** upstream startContainer step 2: the config (with the image's user and an ephemeral container's target), then CreateContainer. */
async function createContainer(
  ctx: KubeRuntimeContext,
  round: SyncPodRound,
  container: KubeContainer,
  attempt: number,
  present: CriImage | undefined,
  inSlot: <T>(fn: () => Promise<T>, priority: number) => Promise<T>,
): Promise<string | undefined> {
  const { pod, ref, status, sandboxId, sandboxConfig, inputs, result } = round;
  const { cri } = ctx;
  try {
    const nsTargetId = ephemeralTarget(container, status);
    // upstream getImageUser: the image's user decides runAsNonRoot and the default user.
    // The image status EnsureImageExists just read serves here too (upstream asks twice): one
    // ImageStatus per container start instead of two.
    const imageUser = imageUserOf(
      present ??
        (await cri.imageStatus(container.image as string).catch((e) => {
          throw new ContainerConfigError(container.name, `failed to get image status for ${container.image}: ${(e as Error).message}`);
        })),
    );
    // The image as the user wrote it (containerd resolves it), so statuses report that name.
    const devices = await ctx.opts.deviceRunOptions?.(pod, container).catch((e: Error) => {
      throw new ContainerConfigError(container.name, e.message);
    });
    const generated = generateContainerConfig(pod, ref, container, attempt, inputs, { imageUser, nsTargetId });
    const config = idmapMounts(withBlockVolumes(withDeviceRunOptions(generated, devices), ctx, pod, container), inputs.usernsOptions);
    mkdirSync(join(sandboxConfig.logDirectory ?? ctx.podLogsDir, container.name), { recursive: true });
    const id = await inSlot(() => cri.createContainer(sandboxId, config, sandboxConfig), PRIORITY_CREATE);
    // upstream: creating a container marks its resources as actuated.
    if (container.resources) ctx.opts.actuated?.set(ref.uid, container.name, stringResources(container.resources));
    ctx.containerEvent(pod, container.name, "Normal", reasons.CreatedContainer, `Created container ${container.name}`);
    return id;
  } catch (e) {
    const reason = e instanceof ContainerConfigError ? "CreateContainerConfigError" : "CreateContainerError";
    ctx.containerEvent(pod, container.name, "Warning", reasons.FailedToCreateContainer, `Error: ${(e as Error).message}`);
    result.errors.push({ container: container.name, reason, message: (e as Error).message });
    return undefined;
  }
}

/** upstream GenerateRunContainerOptions: the raw block volumes' devices after the device plugins'. */
function withBlockVolumes(config: ContainerConfig, ctx: KubeRuntimeContext, pod: KubePod, container: KubeContainer): ContainerConfig {
  let block: BlockDevice[];
  try {
    block = containerBlockDevices(ctx, pod, container);
  } catch (e) {
    throw new ContainerConfigError(container.name, (e as Error).message);
  }
  return block.length ? { ...config, devices: [...(config.devices ?? []), ...block] } : config;
}

/** upstream startSpec.getTargetID: the ID of the container an ephemeral container targets, which must exist. */
function ephemeralTarget(container: KubeEphemeralContainer, status: RuntimePodStatus): string | undefined {
  const target = container.targetContainerName;
  if (!target) return undefined;
  const s = latestStatus(status, target);
  if (!s) throw new ContainerConfigError(container.name, `unable to find target container ${target}`);
  return s.id;
}

/** Upstream startContainer: back-off, image, create, start, then the postStart hook. */
async function startContainerIn(ctx: KubeRuntimeContext, round: SyncPodRound, container: KubeContainer): Promise<void> {
  const { pod, ref, status, sandboxId, sandboxConfig, backOff, result, held } = round;
  const { cri } = ctx;
  /** A heavy call in the slot this pod still holds from its sandbox, else in a new one. */
  const inSlot = <T>(fn: () => Promise<T>, priority: number): Promise<T> => (held.release ? fn() : ctx.startSlots.run(fn, priority));
  const prev = latestStatus(status, container.name);
  // Upstream doBackOff: a container that exited before restarts only after its back-off expires.
  if (prev && prev.state === "exited") {
    const key = backOffKey(ref, container);
    const nowMs = ctx.now();
    if (backOff.isInBackOff(key, nowMs, prev.finishedAtMs || undefined)) {
      const delay = backOff.delayMs?.(key);
      const msg = `back-off ${delay !== undefined ? `${formatBackOff(delay)} ` : ""}restarting failed container=${container.name} pod=${ref.name}_${ref.namespace}(${ref.uid})`;
      ctx.containerEvent(
        pod,
        container.name,
        "Warning",
        reasons.BackOffStartContainer,
        `Back-off restarting failed container ${container.name} in pod ${ref.name}_${ref.namespace}(${ref.uid})`,
      );
      result.errors.push({ container: container.name, reason: "CrashLoopBackOff", message: msg });
      return;
    }
    backOff.next(key, nowMs);
  }
  const attempt = prev ? prev.attempt + 1 : 0;
  let present: CriImage | undefined;
  try {
    // A pull never holds a slot: the pod queues again for its create after it.
    const beforePull = () => {
      held.release?.();
      held.release = undefined;
    };
    present = (await ensureImage(ctx, { pod, container, sandboxConfig, uid: ref.uid, beforePull })).present;
  } catch (e) {
    const err = e as Error & { reason?: string };
    ctx.containerEvent(pod, container.name, "Warning", reasons.FailedToCreateContainer, `Error: ${err.reason ?? "ErrImagePull"}`);
    result.errors.push({ container: container.name, reason: err.reason ?? "ErrImagePull", message: err.message });
    return;
  }
  const id = await createContainer(ctx, round, container, attempt, present, inSlot);
  if (id === undefined) return;
  try {
    await inSlot(() => cri.startContainer(id), PRIORITY_START);
    // Learn its init for the direct signal (and the eviction fast path's plan) now, not at the next relist.
    ctx.opts.directSignal?.track(id, ref.uid, true);
    log.info(`started container ${kv({ pod: podKeyOf(ref.namespace, ref.name), container: container.name, id: id.slice(0, 13), attempt })}`);
    ctx.containerEvent(pod, container.name, "Normal", reasons.StartedContainer, `Started container ${container.name}`);
  } catch (e) {
    ctx.containerEvent(pod, container.name, "Warning", reasons.FailedToStartContainer, `Error: ${(e as Error).message}`);
    result.errors.push({ container: container.name, reason: "RunContainerError", message: (e as Error).message });
    return;
  }
  // The slot is free before the postStart hook runs (it may take up to the pod's grace period).
  held.release?.();
  held.release = undefined;
  const err = await ctx.hooks.runPostStart(pod, ref, container, id, sandboxId);
  if (err) result.errors.push({ container: container.name, reason: "PostStartHookError", message: err });
}
