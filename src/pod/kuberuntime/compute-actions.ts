// What SyncPod must do to bring a pod to its spec (upstream computePodActions,
// pkg/kubelet/kuberuntime/kuberuntime_manager.go). Pure: reads the pod spec and the runtime status,
// returns the actions; back-off and image checks happen when the actions are carried out.
import type { RuntimeContainerStatus, RuntimePodStatus } from "../runtime.ts";
import { containerChanged } from "./hash.ts";
import { computeInitContainerActions } from "./init-actions.ts";
import { isSidecar } from "./termination.ts";
import type { ContainerToKill, KubeContainer, KubePod } from "./types.ts";

export type { ContainerToKill };

export interface PodActions {
  /** Stop every container and the sandbox(es) first (sandbox changed, or nothing left to run). */
  killPod: boolean;
  createSandbox: boolean;
  /** The ready sandbox to start containers in (when not creating one). */
  sandboxId: string;
  /** Attempt number of the sandbox to create, or of the existing one. */
  attempt: number;
  /** Next init container to start (init containers run one by one before app containers). */
  nextInitContainer?: string;
  /** An init container failed and restartPolicy is Never: the pod has failed. */
  initFailed?: { name: string };
  containersToStart: string[];
  containersToKill: ContainerToKill[];
  /** Pods with sidecars: init containers (sidecars or regular) to start, in spec order, before containersToStart. */
  initContainersToStart?: string[];
  /** Ephemeral containers never started yet (they are never restarted), started before the others. */
  ephemeralContainersToStart: string[];
}

export interface Unhealthy {
  container: string;
  message: string;
  probe?: "liveness" | "startup";
}

const restartPolicy = (pod: KubePod) => pod.spec.restartPolicy ?? "Always";
const shouldRestartOnFailure = (pod: KubePod) => restartPolicy(pod) !== "Never";

/** Newest status of the container named `name` (statuses are newest first). */
export function latestStatus(status: RuntimePodStatus, name: string): RuntimeContainerStatus | undefined {
  let best: RuntimeContainerStatus | undefined;
  for (const c of status.containers) {
    if (c.name !== name) continue;
    if (!best || c.attempt > best.attempt || (c.attempt === best.attempt && c.createdAtMs > best.createdAtMs)) best = c;
  }
  return best;
}

function succeeded(s: RuntimeContainerStatus | undefined): boolean {
  return s !== undefined && s.state === "exited" && s.exitCode === 0;
}

/** upstream ShouldContainerBeRestarted. */
export function shouldContainerBeRestarted(pod: KubePod, s: RuntimeContainerStatus | undefined): boolean {
  if (!s) return true;
  if (s.state === "running") return false;
  if (s.state === "unknown" || s.state === "created") return true;
  if (restartPolicy(pod) === "Never") return false;
  if (restartPolicy(pod) === "OnFailure" && s.exitCode === 0) return false;
  return true;
}

/** Whether a new sandbox is needed and with which attempt (upstream podSandboxChanged). */
export function podSandboxChanged(_pod: KubePod, status: RuntimePodStatus): { changed: boolean; attempt: number; sandboxId: string } {
  const newest = status.sandboxes[0];
  if (!newest) return { changed: true, attempt: 0, sandboxId: "" };
  const readyCount = status.sandboxes.filter((s) => s.state === "ready").length;
  // More than one ready sandbox, or the newest not ready: start over with a fresh one.
  if (readyCount > 1 || newest.state !== "ready") return { changed: true, attempt: newest.attempt + 1, sandboxId: newest.id };
  return { changed: false, attempt: newest.attempt, sandboxId: newest.id };
}

function initActions(pod: KubePod, status: RuntimePodStatus, inits: KubeContainer[]): Pick<PodActions, "nextInitContainer" | "initFailed"> & { done: boolean } {
  // Once any app container has run, initialisation is over (upstream findNextInitContainerToRun).
  if (pod.spec.containers.some((c) => latestStatus(status, c.name))) return { done: true };
  for (let i = inits.length - 1; i >= 0; i--) {
    const c = inits[i] as KubeContainer;
    const s = latestStatus(status, c.name);
    if (!s) continue;
    if (s.state === "running" || s.state === "created") return { done: false };
    if (s.state === "exited" && s.exitCode === 0) {
      const next = inits[i + 1];
      return next ? { done: false, nextInitContainer: next.name } : { done: true };
    }
    // Failed (or unknown): retry it unless the pod never restarts.
    if (!shouldRestartOnFailure(pod)) return { done: false, initFailed: { name: c.name } };
    return { done: false, nextInitContainer: c.name };
  }
  return { done: false, nextInitContainer: (inits[0] as KubeContainer).name };
}

/**
 * `started(name)`: a sidecar's startup probe passed for its current instance (default: always; a
 * sidecar without a startup probe counts as started once running).
 */
export function computePodActions(
  pod: KubePod,
  status: RuntimePodStatus,
  unhealthy: Unhealthy[] = [],
  started: (name: string) => boolean = () => true,
): PodActions {
  const sandbox = podSandboxChanged(pod, status);
  const actions: PodActions = {
    killPod: sandbox.changed,
    createSandbox: sandbox.changed,
    sandboxId: sandbox.sandboxId,
    attempt: sandbox.attempt,
    containersToStart: [],
    containersToKill: [],
    ephemeralContainersToStart: [],
  };
  if (sandbox.changed) return actionsForNewSandbox(pod, status, sandbox.attempt, actions);
  // Ephemeral containers may start even before initialisation is complete; any instance of one,
  // running or exited, means it was started (upstream: ephemeral containers are never restarted).
  for (const c of pod.spec.ephemeralContainers ?? []) if (!latestStatus(status, c.name)) actions.ephemeralContainersToStart.push(c.name);
  const unhealthyBy = new Map(unhealthy.map((u) => [u.container, u]));
  if (!initContainerActions(pod, status, unhealthyBy, started, actions)) return actions;
  return containerActions(pod, status, unhealthyBy, actions);
}

/** The sandbox is (re)created: what starts in it first (upstream computePodActions' createPodSandbox branch). */
function actionsForNewSandbox(pod: KubePod, status: RuntimePodStatus, attempt: number, actions: PodActions): PodActions {
  const inits = pod.spec.initContainers ?? [];
  // A pod that never restarts and has already run is not brought back in a new sandbox.
  if (!shouldRestartOnFailure(pod) && attempt !== 0 && status.containers.length > 0) {
    actions.createSandbox = false;
    return actions;
  }
  if (inits.length > 0) {
    actions.nextInitContainer = (inits[0] as KubeContainer).name;
    return actions;
  }
  for (const c of pod.spec.containers) {
    if (restartPolicy(pod) === "OnFailure" && succeeded(latestStatus(status, c.name))) continue;
    actions.containersToStart.push(c.name);
  }
  return actions;
}

/**
 * Fills in the init containers' actions; true when initialisation is over and the app containers are
 * next (upstream computeInitContainerActions for sidecars, findNextInitContainerToRun otherwise).
 */
function initContainerActions(
  pod: KubePod,
  status: RuntimePodStatus,
  unhealthyBy: Map<string, Unhealthy>,
  started: (name: string) => boolean,
  actions: PodActions,
): boolean {
  const inits = pod.spec.initContainers ?? [];
  if (inits.some(isSidecar)) {
    const init = computeInitContainerActions({
      pod,
      status,
      latest: (n) => latestStatus(status, n),
      started,
      unhealthy: unhealthyBy,
      restartOnFailure: shouldRestartOnFailure(pod),
    });
    actions.containersToKill.push(...init.toKill);
    actions.initContainersToStart = init.toStart;
    if (init.initFailed) {
      actions.initFailed = init.initFailed;
      actions.killPod = true;
      return false;
    }
    return init.initialized;
  }
  if (inits.length === 0) return true;
  const init = initActions(pod, status, inits);
  if (init.done) return true;
  if (init.initFailed) {
    actions.initFailed = init.initFailed;
    actions.killPod = true;
  }
  if (init.nextInitContainer) actions.nextInitContainer = init.nextInitContainer;
  return false;
}

/** The app containers to start, restart or keep (upstream computePodActions' loop over pod.Spec.Containers). */
function containerActions(pod: KubePod, status: RuntimePodStatus, unhealthyBy: Map<string, Unhealthy>, actions: PodActions): PodActions {
  let keepCount = 0;
  for (const c of pod.spec.containers) {
    const s = latestStatus(status, c.name);
    if (s?.state !== "running") {
      if (shouldContainerBeRestarted(pod, s)) actions.containersToStart.push(c.name);
      continue;
    }
    let message: string;
    let restart: boolean;
    let reason: ContainerToKill["reason"];
    if (containerChanged(c, s.hash)) {
      message = `Container ${c.name} definition changed, will be restarted`;
      restart = true;
    } else if (unhealthyBy.has(c.name)) {
      const u = unhealthyBy.get(c.name)!;
      message = u.message;
      reason = u.probe;
      restart = shouldRestartOnFailure(pod);
    } else {
      keepCount++;
      continue;
    }
    if (restart) actions.containersToStart.push(c.name);
    actions.containersToKill.push({ id: s.id, name: c.name, message, ...(reason ? { reason } : {}) });
  }
  // Nothing running and nothing to start: the pod is done, stop its sandbox — sidecars do not keep it alive.
  if (keepCount === 0 && actions.containersToStart.length === 0) {
    actions.killPod = true;
    actions.initContainersToStart = undefined;
  }
  return actions;
}
