// PodResources responses built from the pod manager's pods (upstream pkg/kubelet/apis/podresources/server_v1.go).
// cpu_ids are the CPU manager's exclusive CPUs of a container and, for GetAllocatableResources, the CPUs
// its static policy may give out (empty with `none`). bunlet has no device plugins, memory manager or
// DRA, so devices/memory are empty — what upstream answers when those managers are off.

/** The CPU manager's side of the answers (upstream cpusProvider). */
export interface CPUsProvider {
  exclusive(podUid: string, containerName: string): number[];
  allocatable(): number[];
}

const NO_CPUS: CPUsProvider = { exclusive: () => [], allocatable: () => [] };

export interface PodResourcesPod {
  metadata: { name: string; namespace?: string; uid?: string };
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

function containerResources(name: string, cpuIds: number[]): ContainerResources {
  return { name, devices: [], cpuIds, memory: [], dynamicResources: [] };
}

/** Sidecars (restartable init containers) first, then the regular containers — upstream's order. */
export function podResources(pod: PodResourcesPod, cpus: CPUsProvider = NO_CPUS): PodResources {
  const sidecars = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  return {
    name: pod.metadata.name,
    namespace: pod.metadata.namespace ?? "default",
    containers: [...sidecars, ...pod.spec.containers].map((c) => containerResources(c.name, cpus.exclusive(pod.metadata.uid ?? "", c.name))),
  };
}

/** List: the active pods (upstream lists GetActivePods since KubeletPodResourcesListUseActivePods). */
export function listPodResources(activePods: PodResourcesPod[], cpus: CPUsProvider = NO_CPUS): { podResources: PodResources[] } {
  return { podResources: activePods.map((p) => podResources(p, cpus)) };
}

/** Get: any pod the pod manager knows by namespace/name; PodNotFoundError otherwise. */
export function getPodResources(pods: PodResourcesPod[], name: string, namespace: string, cpus: CPUsProvider = NO_CPUS): { podResources: PodResources } {
  const pod = pods.find((p) => p.metadata.name === name && (p.metadata.namespace ?? "default") === namespace);
  if (!pod) throw new PodNotFoundError(name, namespace);
  return { podResources: podResources(pod, cpus) };
}

/** GetAllocatableResources: the CPU manager's allocatable CPUs; no devices or memory are managed. */
export function allocatableResources(cpus: CPUsProvider = NO_CPUS): { devices: never[]; cpuIds: number[]; memory: never[] } {
  return { devices: [], cpuIds: cpus.allocatable(), memory: [] };
}
