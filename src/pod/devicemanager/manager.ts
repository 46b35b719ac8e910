// The device manager (upstream pkg/kubelet/cm/devicemanager/manager.go): the plugins' endpoints by
// resource, their devices and health (ListAndWatch), the devices assigned to containers (pod-devices.ts)
// kept in the checkpoint, and the node's capacity of each resource (GetCapacity). Admission and the
// containers' run options are in admission.ts, over the same state.
//
// A plugin whose stream ends (it stopped, its socket went away) has its devices marked unhealthy: the
// resource's capacity stays, its allocatable is 0; after upstream's grace period (5 min) without a new
// registration the resource is removed and reported with capacity 0 (endpointStopGracePeriod).
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { writeFileAtomicSync } from "../../atomic-file.ts";
import type { Clock } from "../../clock.ts";
import { kv, log } from "../../log.ts";
import { CHECKPOINT_FILE, marshalCheckpoint, unmarshalCheckpoint, type PodDevicesEntry } from "./checkpoint.ts";
import { createPluginEndpoint, devicePluginCodec, type PluginEndpoint } from "./endpoint.ts";
import { createPodDevices, fromCheckpointEntries, type PodDevices } from "./pod-devices.ts";
import { devicePluginsDir, KUBELET_SOCKET } from "./registration.ts";
import { HEALTHY, type ContainerAllocateResponse, type DevicePluginOptions, type PluginDevice } from "./types.ts";

/** Upstream endpointStopGracePeriod. */
export const ENDPOINT_STOP_GRACE_PERIOD_MS = 5 * 60_000;

export interface EndpointInfo {
  /** Undefined for a resource known only from the checkpoint (upstream newStoppedEndpointImpl). */
  endpoint?: PluginEndpoint;
  options?: DevicePluginOptions;
  /** When its stream ended; undefined while it runs. */
  stopTimeMs?: number;
}

export interface DevicePluginCapacity {
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  /** Resources no longer served: reported with capacity 0. */
  removed: string[];
}

export interface DeviceManagerDeps {
  rootDir: string;
  clock: Clock;
  /** Pods admitted and not terminal: devices of any other pod are freed (upstream UpdateAllocatedDevices). */
  activePods(): { metadata: { uid?: string } }[];
  /** False until every pod source delivered its pods: nothing is freed before (a restart's pods come back). */
  sourcesReady(): boolean;
  /** A resource's capacity or health changed: the node status is to be updated. */
  onCapacityChange?(): void;
  /** Injected for tests. */
  connectEndpoint?(resourceName: string, socketPath: string): PluginEndpoint;
}

/** The manager's state, shared with admission.ts. */
export interface DeviceManagerState {
  deps: DeviceManagerDeps;
  endpoints: Map<string, EndpointInfo>;
  healthy: Map<string, Set<string>>;
  unhealthy: Map<string, Set<string>>;
  allDevices: Map<string, Map<string, PluginDevice>>;
  podDevices: PodDevices;
  /** Devices reserved at admission whose Allocate call has not answered yet: podUID → container → resource → ids. */
  reserved: Map<string, Map<string, Map<string, string[]>>>;
  removed: Set<string>;
  /** Set by stop(): the streams it closes are not plugins going away. */
  stopped: boolean;
  writeCheckpoint(): void;
  encodeResponse(r: ContainerAllocateResponse): Uint8Array;
}

export function createDeviceManagerState(deps: DeviceManagerDeps): DeviceManagerState {
  const codec = devicePluginCodec();
  const file = path.join(devicePluginsDir(deps.rootDir), CHECKPOINT_FILE);
  const state: DeviceManagerState = {
    deps,
    endpoints: new Map(),
    healthy: new Map(),
    unhealthy: new Map(),
    allDevices: new Map(),
    podDevices: createPodDevices(),
    reserved: new Map(),
    removed: new Set(),
    stopped: false,
    encodeResponse: (r) => codec.encode("ContainerAllocateResponse", r),
    writeCheckpoint() {
      const entries: PodDevicesEntry[] = state.podDevices.entries().map((e) => ({
        podUID: e.podUID,
        containerName: e.containerName,
        resourceName: e.resource,
        deviceIds: e.assignment.deviceIds,
        allocResp: state.encodeResponse(e.assignment.allocResp),
      }));
      const registeredDevices = Object.fromEntries([...state.healthy].map(([r, s]) => [r, [...s]]));
      try {
        mkdirSync(path.dirname(file), { recursive: true, mode: 0o750 });
        writeFileAtomicSync(file, marshalCheckpoint({ entries, registeredDevices }), { mode: 0o600 });
      } catch (e) {
        log.error(`Failed to write checkpoint file ${kv({ checkpoint: CHECKPOINT_FILE, error: (e as Error).message })}`);
      }
    },
  };
  return state;
}

/**
 * Upstream readCheckpoint: the assignments come back; each registered resource is known with no
 * devices and a stopped endpoint, so its capacity is 0 until its plugin registers again.
 */
export function readCheckpoint(state: DeviceManagerState): void {
  const file = path.join(devicePluginsDir(state.deps.rootDir), CHECKPOINT_FILE);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return; // no checkpoint yet
  }
  try {
    const data = unmarshalCheckpoint(text, file);
    const codec = devicePluginCodec();
    fromCheckpointEntries(data.entries, (b) => codec.decode<ContainerAllocateResponse>("ContainerAllocateResponse", b), state.podDevices);
    const now = state.deps.clock.now();
    for (const r of Object.keys(data.registeredDevices)) {
      state.healthy.set(r, new Set());
      state.unhealthy.set(r, new Set());
      state.endpoints.set(r, { stopTimeMs: now });
    }
    log.info(
      `Read data from checkpoint file ${kv({ checkpoint: file, entries: data.entries.length, resources: Object.keys(data.registeredDevices).join(",") })}`,
    );
  } catch (e) {
    log.error(`Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date ${kv({ error: (e as Error).message })}`);
  }
}

/** Upstream CleanupPluginDirectory: every socket left in the directory goes, the checkpoint stays. */
export function cleanupPluginDirectory(rootDir: string): void {
  const dir = devicePluginsDir(rootDir);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) if (n !== CHECKPOINT_FILE && n !== KUBELET_SOCKET) rmSync(path.join(dir, n), { force: true });
}

/** Upstream genericDeviceUpdateCallback: the plugin's whole list, each device healthy or not. */
export function devicesUpdated(state: DeviceManagerState, resource: string, devices: PluginDevice[]): void {
  const healthy = new Set<string>();
  const unhealthy = new Set<string>();
  for (const d of devices) (d.health === HEALTHY ? healthy : unhealthy).add(d.ID);
  state.allDevices.set(resource, new Map(devices.map((d) => [d.ID, d])));
  state.healthy.set(resource, healthy);
  state.unhealthy.set(resource, unhealthy);
  state.removed.delete(resource);
  state.writeCheckpoint();
  log.info(`Processed device updates for resource ${kv({ resourceName: resource, totalCount: devices.length, healthyCount: healthy.size })}`);
  state.deps.onCapacityChange?.();
}

/** Upstream PluginDisconnected + markResourceUnhealthy: the stream of the resource's endpoint ended. */
export function endpointStopped(state: DeviceManagerState, resource: string, endpoint: PluginEndpoint, error?: Error): void {
  const info = state.endpoints.get(resource);
  if (state.stopped || info?.endpoint !== endpoint) return; // stopping, or a newer registration replaced it
  info.stopTimeMs = state.deps.clock.now();
  endpoint.close();
  const healthy = state.healthy.get(resource) ?? new Set<string>();
  state.unhealthy.set(resource, new Set([...(state.unhealthy.get(resource) ?? []), ...healthy]));
  state.healthy.set(resource, new Set());
  log.warn(`Device plugin stream ended; devices marked unhealthy ${kv({ resourceName: resource, socket: endpoint.socketPath, error: error?.message })}`);
  state.deps.onCapacityChange?.();
}

/** Upstream PluginConnected + the client's Run: options, then the ListAndWatch stream. */
export async function connectPlugin(state: DeviceManagerState, resource: string, socketPath: string): Promise<void> {
  const endpoint = (state.deps.connectEndpoint ?? createPluginEndpoint)(resource, socketPath);
  let options: DevicePluginOptions;
  try {
    options = await endpoint.getDevicePluginOptions();
  } catch (e) {
    endpoint.close();
    throw new Error(`failed to get device plugin options: ${(e as Error).message}`);
  }
  const old = state.endpoints.get(resource)?.endpoint;
  state.endpoints.set(resource, { endpoint, options });
  old?.close();
  if (!state.healthy.has(resource)) state.healthy.set(resource, new Set());
  if (!state.unhealthy.has(resource)) state.unhealthy.set(resource, new Set());
  log.info(
    `Device plugin connected ${kv({ resourceName: resource, socket: socketPath, preStartRequired: options.preStartRequired, getPreferredAllocationAvailable: options.getPreferredAllocationAvailable })}`,
  );
  endpoint.listAndWatch(
    (devices) => devicesUpdated(state, resource, devices),
    (e) => endpointStopped(state, resource, endpoint, e),
  );
}

/** Upstream GetCapacity: healthy + unhealthy as capacity, healthy as allocatable; expired resources removed. */
export function getCapacity(state: DeviceManagerState): DevicePluginCapacity {
  updateAllocatedDevices(state); // each node status sync frees the devices of pods that ended
  const capacity: Record<string, string> = {};
  const allocatable: Record<string, string> = {};
  const now = state.deps.clock.now();
  let deleted = false;
  for (const r of new Set([...state.healthy.keys(), ...state.unhealthy.keys()])) {
    const info = state.endpoints.get(r);
    if (!info || (info.stopTimeMs !== undefined && now - info.stopTimeMs > ENDPOINT_STOP_GRACE_PERIOD_MS)) {
      state.endpoints.delete(r);
      state.healthy.delete(r);
      state.unhealthy.delete(r);
      state.removed.add(r);
      deleted = true;
      continue;
    }
    const h = state.healthy.get(r)?.size ?? 0;
    capacity[r] = String(h + (state.unhealthy.get(r)?.size ?? 0));
    allocatable[r] = String(h);
  }
  if (deleted) state.writeCheckpoint();
  return { capacity, allocatable, removed: [...state.removed] };
}

/** Upstream UpdateAllocatedDevices: devices of pods no longer active are freed (once the sources are ready). */
export function updateAllocatedDevices(state: DeviceManagerState): void {
  if (!state.deps.sourcesReady()) return;
  const active = new Set(state.deps.activePods().map((p) => p.metadata.uid ?? ""));
  const gone = [...state.podDevices.pods()].filter((uid) => !active.has(uid) && !state.reserved.has(uid));
  if (gone.length === 0) return;
  log.info(`Freeing the devices of pods no longer active ${kv({ podUIDs: gone.join(",") })}`);
  state.podDevices.delete(gone);
  state.writeCheckpoint();
}

/** Devices assigned or reserved, by resource. */
export function devicesInUse(state: DeviceManagerState): Map<string, Set<string>> {
  const out = state.podDevices.devices();
  for (const pod of state.reserved.values())
    for (const c of pod.values())
      for (const [r, ids] of c) {
        const s = out.get(r) ?? new Set<string>();
        for (const id of ids) s.add(id);
        out.set(r, s);
      }
  return out;
}
