// PodResources responses built from the pod manager's pods (upstream pkg/kubelet/apis/podresources/server_v1.go).
// bunlet has no device plugins, CPU manager, memory manager or DRA, so every container carries empty
// devices/cpu_ids/memory — what upstream answers when those managers are off — and the node's
// allocatable devices/CPUs/memory are empty too.

export interface PodResourcesPod {
  metadata: { name: string; namespace?: string };
  spec: { containers: { name: string }[]; initContainers?: { name: string; restartPolicy?: string }[] };
}

export interface ContainerResources {
  name: string;
  devices: never[];
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

function containerResources(name: string): ContainerResources {
  return { name, devices: [], cpuIds: [], memory: [], dynamicResources: [] };
}

/** Sidecars (restartable init containers) first, then the regular containers — upstream's order. */
export function podResources(pod: PodResourcesPod): PodResources {
  const sidecars = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  return {
    name: pod.metadata.name,
    namespace: pod.metadata.namespace ?? "default",
    containers: [...sidecars, ...pod.spec.containers].map((c) => containerResources(c.name)),
  };
}

/** List: the active pods (upstream lists GetActivePods since KubeletPodResourcesListUseActivePods). */
export function listPodResources(activePods: PodResourcesPod[]): { podResources: PodResources[] } {
  return { podResources: activePods.map(podResources) };
}

/** Get: any pod the pod manager knows by namespace/name; PodNotFoundError otherwise. */
export function getPodResources(pods: PodResourcesPod[], name: string, namespace: string): { podResources: PodResources } {
  const pod = pods.find((p) => p.metadata.name === name && (p.metadata.namespace ?? "default") === namespace);
  if (!pod) throw new PodNotFoundError(name, namespace);
  return { podResources: podResources(pod) };
}

/** GetAllocatableResources: nothing is managed exclusively on a bunlet node. */
export function allocatableResources(): { devices: never[]; cpuIds: number[]; memory: never[] } {
  return { devices: [], cpuIds: [], memory: [] };
}
