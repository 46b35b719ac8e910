// The CPU manager's state (upstream cm/cpumanager/state/state_mem.go): the default (shared) CPU set and
// the exclusive CPU sets assigned to containers, by pod UID and container name.
import type { CPUSet } from "../../../config/cpuset.ts";

/** Pod UID → container name → its exclusive CPUs. */
export type ContainerCPUAssignments = Map<string, Map<string, CPUSet>>;

export interface CPUManagerState {
  defaultCPUSet: CPUSet;
  assignments: ContainerCPUAssignments;
}

export function emptyState(): CPUManagerState {
  return { defaultCPUSet: [], assignments: new Map() };
}

export function getCPUSet(s: CPUManagerState, podUid: string, containerName: string): CPUSet | undefined {
  return s.assignments.get(podUid)?.get(containerName);
}

/** The container's exclusive CPUs, else the default set (upstream GetCPUSetOrDefault). */
export function getCPUSetOrDefault(s: CPUManagerState, podUid: string, containerName: string): CPUSet {
  return getCPUSet(s, podUid, containerName) ?? s.defaultCPUSet;
}

export function setCPUSet(s: CPUManagerState, podUid: string, containerName: string, cpus: CPUSet): void {
  let pod = s.assignments.get(podUid);
  if (!pod) s.assignments.set(podUid, (pod = new Map()));
  pod.set(containerName, cpus);
}

export function deleteCPUSet(s: CPUManagerState, podUid: string, containerName: string): void {
  const pod = s.assignments.get(podUid);
  pod?.delete(containerName);
  if (pod?.size === 0) s.assignments.delete(podUid);
}
