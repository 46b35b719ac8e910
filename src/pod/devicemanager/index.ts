// The device manager's public surface (upstream pkg/kubelet/cm/devicemanager): the registration
// socket, the plugins' devices in the node's capacity, the admit handler, the containers' run options
// and the podresources views.
import type { PodAdmitHandler } from "../lifecycle-types.ts";
import type { ContainerLike, PodLike } from "../pod-like.ts";
import { admitPod, runContainerOptions } from "./admission.ts";
import {
  cleanupPluginDirectory,
  connectPlugin,
  createDeviceManagerState,
  getCapacity,
  readCheckpoint,
  updateAllocatedDevices,
  type DeviceManagerDeps,
  type DevicePluginCapacity,
} from "./manager.ts";
import { createRegistrationServer } from "./registration.ts";
import type { DeviceRunContainerOptions } from "./types.ts";

export { UNEXPECTED_ADMISSION_ERROR } from "./admission.ts";
export { devicePluginsDir, KUBELET_SOCKET } from "./registration.ts";
export type { DeviceManagerDeps, DevicePluginCapacity } from "./manager.ts";
export type { DeviceRunContainerOptions } from "./types.ts";

/** A container's devices of one resource, as podresources reports them. */
export interface ResourceDevices {
  resourceName: string;
  deviceIds: string[];
  topology?: { nodes: { ID: number }[] };
}

export interface DeviceManager {
  /** Reads the checkpoint, clears old sockets and serves kubelet.sock (plugins re-register when it appears). */
  start(): Promise<void>;
  stop(): Promise<void>;
  admitHandler: PodAdmitHandler;
  runContainerOptions(pod: PodLike, container: ContainerLike): Promise<DeviceRunContainerOptions | undefined>;
  /** Upstream GetCapacity, for the node status. */
  capacity(): DevicePluginCapacity;
  /** podresources List/Get: the devices of a container. */
  containerDevices(podUID: string, containerName: string): ResourceDevices[];
  /** podresources GetAllocatableResources: every healthy device. */
  allocatableDevices(): ResourceDevices[];
}

const topologyOf = (nodes: number[]) => (nodes.length && !(nodes.length === 1 && nodes[0] === -1) ? { nodes: nodes.map((ID) => ({ ID })) } : undefined);

export function createDeviceManager(deps: DeviceManagerDeps): DeviceManager {
  const state = createDeviceManagerState(deps);
  const pending = new Map<string, Promise<void>>();
  const server = createRegistrationServer(deps.rootDir, (resource, socketPath) => connectPlugin(state, resource, socketPath));
  return {
    async start() {
      readCheckpoint(state);
      cleanupPluginDirectory(deps.rootDir);
      await server.start();
    },
    async stop() {
      state.stopped = true;
      await server.stop();
      for (const info of state.endpoints.values()) info.endpoint?.close();
    },
    admitHandler: (pod) => admitPod(state, pod, pending),
    runContainerOptions: (pod, container) => runContainerOptions(state, pod, container, pending),
    capacity: () => getCapacity(state),
    containerDevices(podUID, containerName) {
      updateAllocatedDevices(state);
      const byResource = state.podDevices.podAssignments(podUID)?.get(containerName);
      // One entry per device (and NUMA node), as upstream's containerDevicesFromResourceDeviceInstances.
      return [...(byResource ?? [])].flatMap(([resourceName, a]) =>
        [...a.deviceIds].flatMap(([numa, ids]) => {
          const t = topologyOf([numa]);
          return ids.map((id) => ({ resourceName, deviceIds: [id], ...(t ? { topology: t } : {}) }));
        }),
      );
    },
    allocatableDevices() {
      const out: ResourceDevices[] = [];
      for (const [resourceName, ids] of state.healthy)
        for (const id of ids) {
          const t = topologyOf((state.allDevices.get(resourceName)?.get(id)?.topology?.nodes ?? []).map((n) => n.ID));
          out.push({ resourceName, deviceIds: [id], ...(t ? { topology: t } : {}) });
        }
      return out;
    },
  };
}
