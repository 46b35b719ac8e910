// PodResources responses built from the pod manager's pods (upstream pkg/kubelet/apis/podresources/server_v1.go).
// cpu_ids come from the CPU manager (its exclusive CPUs; for GetAllocatableResources the CPUs its static
// policy may give out, empty with `none`) and devices from the device manager (src/pod/devicemanager).
// bunlet has no memory manager or DRA, so memory/dynamic_resources are empty — what upstream answers
// when those managers are off.

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

/** The CPU manager's side of the answers (upstream CPUsProvider). */
export interface CPUsProvider {
  exclusive(podUid: string, containerName: string): number[];
  allocatable(): number[];
}

/** The device manager's side of the answers (upstream DevicesProvider). */
export interface DevicesProvider {
  /** The devices assigned to a pod's container. */
  container(podUid: string, containerName: string): ContainerDevices[];
  /** The node's healthy devices. */
  allocatable(): ContainerDevices[];
}

/** The managers that fill the answers; a missing one answers empty, as upstream's with it off. */
export interface ResourceProviders {
  cpus?: CPUsProvider;
  devices?: DevicesProvider;
}

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
export function podResources(pod: PodResourcesPod, providers: ResourceProviders = {}): PodResources {
  const sidecars = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  const uid = pod.metadata.uid ?? "";
  return {
    name: pod.metadata.name,
    namespace: pod.metadata.namespace ?? "default",
    containers: [...sidecars, ...pod.spec.containers].map((c) => ({
      name: c.name,
      devices: providers.devices?.container(uid, c.name) ?? [],
      cpuIds: providers.cpus?.exclusive(uid, c.name) ?? [],
      memory: [],
      dynamicResources: [],
    })),
  };
}

/** List: the active pods (upstream lists GetActivePods since KubeletPodResourcesListUseActivePods). */
export function listPodResources(activePods: PodResourcesPod[], providers: ResourceProviders = {}): { podResources: PodResources[] } {
  return { podResources: activePods.map((p) => podResources(p, providers)) };
}

/** Get: any pod the pod manager knows by namespace/name; PodNotFoundError otherwise. */
export function getPodResources(pods: PodResourcesPod[], name: string, namespace: string, providers: ResourceProviders = {}): { podResources: PodResources } {
  const pod = pods.find((p) => p.metadata.name === name && (p.metadata.namespace ?? "default") === namespace);
  if (!pod) throw new PodNotFoundError(name, namespace);
  return { podResources: podResources(pod, providers) };
}

/** GetAllocatableResources: the node's device plugin devices and the CPUs the CPU manager may give out. */
export function allocatableResources(providers: ResourceProviders = {}): { devices: ContainerDevices[]; cpuIds: number[]; memory: never[] } {
  return { devices: providers.devices?.allocatable() ?? [], cpuIds: providers.cpus?.allocatable() ?? [], memory: [] };
}
