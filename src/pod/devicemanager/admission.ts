// Device allocation (upstream ManagerImpl.Allocate, allocateContainerResources, GetDeviceRunContainerOptions):
// at admission each container's devices are chosen and reserved at once — a pod the node cannot serve
// is refused with upstream's UnexpectedAdmissionError and message — then the plugin is asked
// (GetPreferredAllocation where it offers it, then Allocate) before the pod starts: the admission's
// `waitFor`. bunlet's admit handlers answer synchronously, so a failing Allocate call does not refuse
// the pod as upstream's would: its containers are not created (CreateContainerConfigError) until a
// later try succeeds.
import { parseQuantity, quantityValue } from "../../config/quantity.ts";
import { kv, log } from "../../log.ts";
import type { ContainerLike, PodLike } from "../pod-like.ts";
import { podKey } from "../pod-like.ts";
import { devicesToAllocate } from "./allocate.ts";
import { devicesInUse, updateAllocatedDevices, type DeviceManagerState } from "./manager.ts";
import { devicesPerNuma, deviceRunContainerOptions } from "./pod-devices.ts";
import type { DeviceRunContainerOptions } from "./types.ts";

/** Upstream admission.ErrorReasonUnexpected. */
export const UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError";

type Reservation = Map<string, Map<string, string[]>>; // container → resource → ids

/** Upstream isDevicePluginResource: registered, or with devices still assigned. */
function isDevicePluginResource(state: DeviceManagerState, resource: string): boolean {
  return state.healthy.has(resource) || state.podDevices.devices().has(resource);
}

/** The container's device plugin resources and counts (limits; extended resources are never overcommitted). */
export function deviceRequests(state: DeviceManagerState, c: ContainerLike): [string, number][] {
  return Object.entries(c.resources?.limits ?? {})
    .filter(([r]) => isDevicePluginResource(state, r))
    .map(([r, v]): [string, number] => [r, quantityValue(parseQuantity(String(v)))])
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => a.localeCompare(b));
}

/** Chooses every container's devices (init containers first, their devices reusable by the later ones). */
function planPod(state: DeviceManagerState, pod: PodLike, only?: string): Reservation {
  const uid = pod.metadata.uid ?? "";
  const inUse = devicesInUse(state);
  const reusable = new Map<string, Set<string>>();
  const plan: Reservation = new Map();
  const inits = (pod.spec.initContainers ?? []).map((c) => ({ c, reuse: c.restartPolicy !== "Always" }));
  for (const { c, reuse } of [...inits, ...pod.spec.containers.map((c) => ({ c, reuse: false }))]) {
    for (const [resource, required] of deviceRequests(state, c)) {
      const held = state.podDevices.containerDevices(uid, c.name, resource);
      // Only after a kubelet restart is a pod admitted holding devices (the checkpoint's): it keeps them,
      // whatever the plugin's state meanwhile, as upstream does for containers found running.
      const keep = held !== undefined && held.size === required;
      const ids =
        keep || (only !== undefined && c.name !== only)
          ? []
          : devicesToAllocate({
              podUID: uid,
              containerName: c.name,
              resource,
              required,
              held,
              healthy: state.healthy.get(resource),
              inUse: inUse.get(resource) ?? new Set(),
              reusable: reusable.get(resource),
            });
      const pool = reusable.get(resource) ?? new Set<string>();
      reusable.set(resource, pool);
      for (const id of [...ids, ...(held ?? [])]) reuse ? pool.add(id) : pool.delete(id);
      if (ids.length === 0) continue;
      const s = inUse.get(resource) ?? new Set<string>();
      for (const id of ids) s.add(id);
      inUse.set(resource, s);
      const forContainer = plan.get(c.name) ?? new Map<string, string[]>();
      forContainer.set(resource, ids);
      plan.set(c.name, forContainer);
    }
  }
  return plan;
}

/** The plugin's preferred devices, when it offers them, among the free ones and the reservation. */
async function preferredChoice(state: DeviceManagerState, uid: string, containerName: string, resource: string, reserved: string[]): Promise<string[]> {
  const info = state.endpoints.get(resource);
  if (!info?.endpoint || !info.options?.getPreferredAllocationAvailable) return reserved;
  const inUse = new Set(devicesInUse(state).get(resource) ?? []);
  for (const id of reserved) inUse.delete(id);
  const available = [...(state.healthy.get(resource) ?? [])].filter((d) => !inUse.has(d));
  let preferred: string[];
  try {
    preferred = await info.endpoint.getPreferredAllocation(available, [], reserved.length);
  } catch (e) {
    throw new Error(`device plugin GetPreferredAllocation rpc failed with err: ${(e as Error).message}`);
  }
  const healthy = state.healthy.get(resource);
  const ids = devicesToAllocate({ podUID: uid, containerName, resource, required: reserved.length, healthy, inUse, preferred });
  state.reserved.get(uid)?.get(containerName)?.set(resource, ids);
  return ids;
}

/** Allocate for each reserved container and resource; the answers become the pod's assignments. */
async function allocateReserved(state: DeviceManagerState, pod: PodLike, plan: Reservation): Promise<void> {
  const uid = pod.metadata.uid ?? "";
  state.reserved.set(uid, plan);
  try {
    for (const [containerName, resources] of plan) {
      for (const [resource, reserved] of resources) {
        const endpoint = state.endpoints.get(resource)?.endpoint;
        if (!endpoint) throw new Error(`unknown Device Plugin ${resource}`);
        const ids = await preferredChoice(state, uid, containerName, resource, reserved);
        const allocResp = await endpoint.allocate(ids);
        const all = state.allDevices.get(resource);
        const deviceIds = devicesPerNuma(ids, (id) => all?.get(id)?.topology?.nodes);
        state.podDevices.insert(uid, containerName, resource, { deviceIds, allocResp });
        log.info(`Allocated devices ${kv({ pod: podKey(pod), containerName, resourceName: resource, devices: ids.join(",") })}`);
      }
    }
  } finally {
    if (state.reserved.get(uid) === plan) state.reserved.delete(uid);
    state.writeCheckpoint();
  }
}

export interface DeviceAdmission {
  admit: boolean;
  reason?: string;
  message?: string;
  waitFor?: Promise<unknown>;
}

/** The admit handler: the pod's devices chosen and reserved now, allocated by the plugin before it starts. */
export function admitPod(state: DeviceManagerState, pod: PodLike, pending: Map<string, Promise<void>>): DeviceAdmission {
  updateAllocatedDevices(state);
  let plan: Reservation;
  try {
    plan = planPod(state, pod);
  } catch (e) {
    const message = `Allocate failed due to ${(e as Error).message}, which is unexpected`;
    return { admit: false, reason: UNEXPECTED_ADMISSION_ERROR, message };
  }
  if (plan.size === 0) return { admit: true };
  const uid = pod.metadata.uid ?? "";
  const done = allocateReserved(state, pod, plan).catch((e: Error) => {
    log.error(`Device allocation failed; the containers wait for it ${kv({ pod: podKey(pod), error: e.message })}`);
  });
  pending.set(uid, done);
  void done.finally(() => pending.get(uid) === done && pending.delete(uid));
  return { admit: true, waitFor: done };
}

/** Upstream callPreStartContainerIfNeeded. */
async function preStartIfNeeded(state: DeviceManagerState, uid: string, containerName: string, resource: string): Promise<void> {
  const info = state.endpoints.get(resource);
  if (!info) throw new Error(`endpoint not found in cache for a registered resource: ${resource}`);
  if (!info.options?.preStartRequired) return;
  const ids = state.podDevices.containerDevices(uid, containerName, resource);
  if (!ids) throw new Error(`no devices found allocated in local cache for pod ${uid}, container ${containerName}, resource ${resource}`);
  if (!info.endpoint) throw new Error(`endpoint not found in cache for a registered resource: ${resource}`);
  try {
    await info.endpoint.preStartContainer([...ids]);
  } catch (e) {
    throw new Error(`device plugin PreStartContainer rpc failed with err: ${(e as Error).message}`);
  }
}

/** Upstream GetDeviceRunContainerOptions: allocated again when the assignment is missing, then the merged answers. */
export async function runContainerOptions(
  state: DeviceManagerState,
  pod: PodLike,
  container: ContainerLike,
  pending: Map<string, Promise<void>>,
): Promise<DeviceRunContainerOptions | undefined> {
  const requests = deviceRequests(state, container);
  if (requests.length === 0) return undefined;
  const uid = pod.metadata.uid ?? "";
  await pending.get(uid);
  const active = state.deps.activePods().some((p) => p.metadata.uid === uid);
  if (active && requests.some(([r]) => !state.podDevices.containerDevices(uid, container.name, r))) {
    log.info(`Needs to re-allocate device plugin resources for pod ${kv({ pod: podKey(pod), containerName: container.name })}`);
    await allocateReserved(state, pod, planPod(state, pod, container.name));
  }
  for (const [r] of requests) await preStartIfNeeded(state, uid, container.name, r);
  const byResource = state.podDevices.podAssignments(uid)?.get(container.name);
  if (!byResource) return undefined;
  return deviceRunContainerOptions([...byResource].sort(([a], [b]) => a.localeCompare(b)).map(([, a]) => a.allocResp));
}
