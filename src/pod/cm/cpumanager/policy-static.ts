// The `static` CPU manager policy (upstream cm/cpumanager/policy_static.go, container-level allocation):
// a container of a Guaranteed pod with an integer cpu request gets that many CPUs of its own, taken from
// the shared pool (the default set minus the reserved CPUs) by topology (cpu-assignment.ts); every other
// container runs on the default set. The reserved CPUs stay in the default set and are never given out.
// The CPUs of (non-sidecar) init containers are handed on to the app containers of the same pod.
import { parseQuantity, quantityMilliValue } from "../../../config/quantity.ts";
import type { ContainerLike, PodLike } from "../../pod-like.ts";
import { podUid } from "../../pod-like.ts";
import { defaultedRequests, getPodQOS } from "../../qos.ts";
import { takeByTopology } from "./cpu-assignment.ts";
import { difference, equals, formatCPUSet, intersection, union, type CPUSet } from "../../../config/cpuset.ts";
import { deleteCPUSet, getCPUSet, setCPUSet, type CPUManagerState } from "./state.ts";
import { allCPUs, type CPUTopology } from "./topology.ts";

export interface StaticPolicy {
  topology: CPUTopology;
  reservedCPUs: CPUSet;
  /** Pod UID → CPUs of its init containers that its next containers may take (upstream cpusToReuse). */
  cpusToReuse: Map<string, CPUSet>;
}

/**
 * Upstream NewStaticPolicy: the reserved CPUs are `reservedSystemCPUs` when given, else the first
 * `numReservedCPUs` taken by topology; throws when they are not exactly that many.
 */
export function newStaticPolicy(topology: CPUTopology, numReservedCPUs: number, reservedSystemCPUs: CPUSet): StaticPolicy {
  const reserved = reservedSystemCPUs.length > 0 ? reservedSystemCPUs : safeTake(topology, allCPUs(topology.details), numReservedCPUs);
  if (reserved.length !== numReservedCPUs)
    throw new Error(`[cpumanager] unable to reserve the required amount of CPUs (size of ${formatCPUSet(reserved)} did not equal ${numReservedCPUs})`);
  return { topology, reservedCPUs: reserved, cpusToReuse: new Map() };
}

function safeTake(topology: CPUTopology, from: CPUSet, n: number): CPUSet {
  try {
    return takeByTopology(topology, from, n);
  } catch {
    return [];
  }
}

/** Upstream validateState: an empty state becomes "all CPUs shared"; a state that does not fit the machine throws. */
export function validateState(p: StaticPolicy, s: CPUManagerState): void {
  const all = allCPUs(p.topology.details);
  const def = s.defaultCPUSet;
  if (def.length === 0) {
    if (s.assignments.size !== 0) throw new Error("default cpuset cannot be empty");
    s.defaultCPUSet = all;
    return;
  }
  if (!equals(intersection(p.reservedCPUs, def), p.reservedCPUs))
    throw new Error(`not all reserved cpus: "${formatCPUSet(p.reservedCPUs)}" are present in defaultCpuSet: "${formatCPUSet(def)}"`);
  const known: CPUSet[] = [def];
  for (const [pod, containers] of s.assignments)
    for (const [name, cset] of containers) {
      if (intersection(def, cset).length > 0)
        throw new Error(`pod: ${pod}, container: ${name} cpuset: "${formatCPUSet(cset)}" overlaps with default cpuset "${formatCPUSet(def)}"`);
      known.push(cset);
    }
  const total = union(...known);
  if (!equals(total, all)) throw new Error(`current set of available CPUs "${formatCPUSet(all)}" doesn't match with CPUs in state "${formatCPUSet(total)}"`);
}

/** CPUs that may ever be exclusive: all but the reserved (upstream GetAllocatableCPUs). */
export function allocatableCPUs(p: StaticPolicy): CPUSet {
  return difference(allCPUs(p.topology.details), p.reservedCPUs);
}

/** The shared pool minus the reserved CPUs: what an allocation takes from (upstream GetAvailableCPUs). */
export function availableCPUs(p: StaticPolicy, s: CPUManagerState): CPUSet {
  return difference(s.defaultCPUSet, p.reservedCPUs);
}

/** Upstream guaranteedCPUs: the integer cpu request of a container of a Guaranteed pod, else 0. */
export function guaranteedCPUs(pod: PodLike, container: ContainerLike): number {
  if (getPodQOS(pod) !== "Guaranteed") return 0;
  const cpu = defaultedRequests(container).cpu;
  if (cpu === undefined) return 0;
  const milli = quantityMilliValue(parseQuantity(String(cpu)));
  return milli % 1000 === 0 ? milli / 1000 : 0;
}

function isRestartableInit(pod: PodLike, name: string): boolean | undefined {
  const init = pod.spec.initContainers?.find((c) => c.name === name);
  return init === undefined ? undefined : init.restartPolicy === "Always";
}

/** Upstream updateCPUsToReuse: an init container's CPUs become reusable; a later container's are no longer. */
function updateCPUsToReuse(p: StaticPolicy, pod: PodLike, containerName: string, cset: CPUSet): void {
  const uid = podUid(pod);
  for (const k of [...p.cpusToReuse.keys()]) if (k !== uid) p.cpusToReuse.delete(k);
  const current = p.cpusToReuse.get(uid) ?? [];
  const restartable = isRestartableInit(pod, containerName);
  p.cpusToReuse.set(uid, restartable === false ? union(current, cset) : difference(current, cset));
}

/**
 * Upstream allocateForAdd: exclusive CPUs for the container if it qualifies (already assigned: kept);
 * throws upstream's takeByTopology error when the shared pool cannot give them.
 */
export function allocate(p: StaticPolicy, s: CPUManagerState, pod: PodLike, container: ContainerLike): CPUSet | undefined {
  const numCPUs = guaranteedCPUs(pod, container);
  if (numCPUs === 0) return undefined;
  const uid = podUid(pod);
  const existing = getCPUSet(s, uid, container.name);
  if (existing) {
    updateCPUsToReuse(p, pod, container.name, existing);
    return existing;
  }
  const pool = union(availableCPUs(p, s), p.cpusToReuse.get(uid) ?? []);
  const cpus = takeByTopology(p.topology, pool, numCPUs);
  s.defaultCPUSet = difference(s.defaultCPUSet, cpus);
  setCPUSet(s, uid, container.name, cpus);
  updateCPUsToReuse(p, pod, container.name, cpus);
  return cpus;
}

/** Upstream RemoveContainer: its CPUs go back to the default set unless a sibling of the same pod still holds them. */
export function removeContainer(s: CPUManagerState, podUidValue: string, containerName: string): CPUSet {
  const cpus = getCPUSet(s, podUidValue, containerName);
  if (!cpus) return [];
  deleteCPUSet(s, podUidValue, containerName);
  const siblings = union(...(s.assignments.get(podUidValue)?.values() ?? []));
  const release = difference(cpus, siblings);
  s.defaultCPUSet = union(s.defaultCPUSet, release);
  return release;
}
