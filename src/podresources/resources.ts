// PodResources responses built from the pod manager's pods (upstream pkg/kubelet/apis/podresources/server_v1.go).
// Devices come from the device manager (src/pod/devicemanager) when it is given; bunlet has no CPU
// manager, memory manager or DRA, so cpu_ids/memory/dynamic_resources are empty — what upstream
// answers when those managers are off.

export interface PodResourcesPod {
  metadata: { name: string; namespace?: string; uid?: string };
  spec: { containers: { name: string }[]; initContainers?: { name: string; restartPolicy?: string }[] };
}

/** Upstream ContainerDevices: one resource's device ids, with the NUMA nodes when the plugin gave them. */
export interface ContainerDevices {
  resourceName: string;
  deviceIds: string[];
  topology?: { nodes: { ID: number }[] };
}

/** The devices of a pod's container (podUID, containerName); none without a device manager. */
export type ContainerDevicesOf = (podUID: string, containerName: string) => ContainerDevices[];

export interface ContainerResources {
  name: string;
  devices: ContainerDevices[];
  cpuIds: number[];
  memory: never[];
  dynamicResources: never[];
}

export interface PodResources {
  name: string;
  namespace: string;
  containers: ContainerResources[];
}

export class PodNotFoundError extends Error {
  constructor(name: string, namespace: string) {
    super(`pod ${name} in namespace ${namespace} not found`); // upstream's message
    this.name = "PodNotFoundError";
  }
}

/** Sidecars (restartable init containers) first, then the regular containers — upstream's order. */
export function podResources(pod: PodResourcesPod, devices?: ContainerDevicesOf): PodResources {
  const sidecars = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  const uid = pod.metadata.uid ?? "";
  return {
    name: pod.metadata.name,
    namespace: pod.metadata.namespace ?? "default",
    containers: [...sidecars, ...pod.spec.containers].map((c) => ({
      name: c.name,
      devices: devices?.(uid, c.name) ?? [],
      cpuIds: [],
      memory: [],
      dynamicResources: [],
    })),
  };
}

/** List: the active pods (upstream lists GetActivePods since KubeletPodResourcesListUseActivePods). */
export function listPodResources(activePods: PodResourcesPod[], devices?: ContainerDevicesOf): { podResources: PodResources[] } {
  return { podResources: activePods.map((p) => podResources(p, devices)) };
}

/** Get: any pod the pod manager knows by namespace/name; PodNotFoundError otherwise. */
export function getPodResources(pods: PodResourcesPod[], name: string, namespace: string, devices?: ContainerDevicesOf): { podResources: PodResources } {
  const pod = pods.find((p) => p.metadata.name === name && (p.metadata.namespace ?? "default") === namespace);
  if (!pod) throw new PodNotFoundError(name, namespace);
  return { podResources: podResources(pod, devices) };
}

/** GetAllocatableResources: the node's device plugin devices; no exclusive CPUs or memory on a bunlet node. */
export function allocatableResources(devices: ContainerDevices[] = []): { devices: ContainerDevices[]; cpuIds: number[]; memory: never[] } {
  return { devices, cpuIds: [], memory: [] };
}
