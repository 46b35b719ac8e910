// Which running containers an in-place resize touches and how (upstream kuberuntime_manager.go
// computePodResizeAction): the allocated resources (the pod spec handed to SyncPod) against the
// actuated ones (what was last applied to the container). Per resource, resizePolicy says whether the
// container is restarted (RestartContainer) or updated through the CRI (NotRequired, the default).
// Pure; resize.ts carries the actions out.
import { parseQuantity, quantityMilliValue, quantityValue } from "../../config/quantity.ts";
import type { RuntimePodStatus } from "../runtime.ts";
import { latestStatus, type PodActions } from "./compute-actions.ts";
import type { KubeContainer, KubePod } from "./types.ts";

type ResourceList = Record<string, string | number>;
type Requirements = { requests?: ResourceList; limits?: ResourceList };

/** upstream resourceRequirements: the four values a resize compares. */
export interface ResizeResources {
  cpuRequestMilli: number;
  cpuLimitMilli: number;
  memoryRequestBytes: number;
  memoryLimitBytes: number;
}

/** upstream containerToUpdateInfo. */
export interface ContainerToUpdate {
  name: string;
  id: string;
  desired: ResizeResources;
  current: ResizeResources;
}

export interface PodResizeActions {
  /** Per resource, decreases first then increases (upstream ContainersToUpdate). */
  update: { memory: ContainerToUpdate[]; cpu: ContainerToUpdate[] };
  /** A container is restarted by its resize policy: the pod cgroup follows the allocation (upstream UpdatePodResources). */
  updatePodResources: boolean;
}

const milli = (l: ResourceList | undefined, n: string) => (l?.[n] === undefined ? 0 : quantityMilliValue(parseQuantity(String(l[n]))));
const value = (l: ResourceList | undefined, n: string) => (l?.[n] === undefined ? 0 : quantityValue(parseQuantity(String(l[n]))));

/** upstream containerResourcesFromRequirements. */
export function resizeResourcesOf(r: Requirements | undefined): ResizeResources {
  return {
    cpuRequestMilli: milli(r?.requests, "cpu"),
    cpuLimitMilli: milli(r?.limits, "cpu"),
    memoryRequestBytes: value(r?.requests, "memory"),
    memoryLimitBytes: value(r?.limits, "memory"),
  };
}

const sameResources = (a: ResizeResources, b: ResizeResources) =>
  a.cpuRequestMilli === b.cpuRequestMilli &&
  a.cpuLimitMilli === b.cpuLimitMilli &&
  a.memoryRequestBytes === b.memoryRequestBytes &&
  a.memoryLimitBytes === b.memoryLimitBytes;

/** The container's resize policy for a resource: true when a change of it restarts the container. */
export function restartsOnResize(c: KubeContainer, resource: "cpu" | "memory"): boolean {
  return c.resizePolicy?.find((p) => p.resourceName === resource)?.restartPolicy === "RestartContainer";
}

export const emptyResizeActions = (): PodResizeActions => ({ update: { memory: [], cpu: [] }, updatePodResources: false });

/**
 * upstream computePodResizeAction for one running container: false when its resize policy restarts it
 * (the caller kills and starts it), true when it is kept — then `actions` holds its updates, decreases
 * before increases.
 */
export function computeContainerResize(c: KubeContainer, id: string, actuated: Requirements | undefined, actions: PodResizeActions): boolean {
  const desired = resizeResourcesOf(c.resources);
  const current = resizeResourcesOf(actuated);
  if (sameResources(desired, current)) return true;
  const memoryChanged = desired.memoryLimitBytes !== current.memoryLimitBytes || desired.memoryRequestBytes !== current.memoryRequestBytes;
  const cpuChanged = desired.cpuLimitMilli !== current.cpuLimitMilli || desired.cpuRequestMilli !== current.cpuRequestMilli;
  if ((memoryChanged && restartsOnResize(c, "memory")) || (cpuChanged && restartsOnResize(c, "cpu"))) {
    actions.updatePodResources = true;
    return false;
  }
  // One `current` shared by the container's memory and cpu updates (upstream: a pointer), so the cpu
  // step writes the memory the memory step just set.
  const mark = (list: ContainerToUpdate[], want: number, have: number) => {
    const info = { name: c.name, id, desired, current };
    if (want > have) list.push(info);
    else if (want < have) list.unshift(info);
  };
  if (desired.memoryLimitBytes !== current.memoryLimitBytes) mark(actions.update.memory, desired.memoryLimitBytes, current.memoryLimitBytes);
  else if (desired.memoryRequestBytes !== current.memoryRequestBytes) mark(actions.update.memory, desired.memoryRequestBytes, current.memoryRequestBytes);
  if (desired.cpuLimitMilli !== current.cpuLimitMilli) mark(actions.update.cpu, desired.cpuLimitMilli, current.cpuLimitMilli);
  else if (desired.cpuRequestMilli !== current.cpuRequestMilli) mark(actions.update.cpu, desired.cpuRequestMilli, current.cpuRequestMilli);
  return true;
}

/**
 * The resize part of computePodActions over the sidecars and regular containers that keep running: a container
 * its resize policy restarts joins containersToKill and containersToStart ("Container <name> resize
 * requires restart"). Nothing when the pod's sandbox is recreated.
 */
export function computePodResizeActions(
  pod: KubePod,
  status: RuntimePodStatus,
  actuated: (name: string) => Requirements | undefined,
  actions: PodActions,
): PodResizeActions {
  const out = emptyResizeActions();
  if (actions.killPod || actions.createSandbox) return out;
  const killed = new Set(actions.containersToKill.map((k) => k.name));
  // Sidecars (restartable init containers) are resizable too; other init containers are not.
  const sidecars = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  for (const c of [...sidecars, ...pod.spec.containers]) {
    const s = latestStatus(status, c.name);
    if (s?.state !== "running" || killed.has(c.name)) continue;
    if (computeContainerResize(c, s.id, actuated(c.name), out)) continue;
    actions.containersToKill.push({ id: s.id, name: c.name, message: `Container ${c.name} resize requires restart` });
    if (c.restartPolicy === "Always" && !pod.spec.containers.includes(c)) (actions.initContainersToStart ??= []).push(c.name);
    else actions.containersToStart.push(c.name);
  }
  return out;
}

/** Whether a resize is to be carried out (upstream: ContainersToUpdate non-empty or UpdatePodResources). */
export const hasResize = (a: PodResizeActions) => a.updatePodResources || a.update.memory.length > 0 || a.update.cpu.length > 0;
