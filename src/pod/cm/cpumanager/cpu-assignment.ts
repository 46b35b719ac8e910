// Which CPUs to take for a request (upstream cm/cpumanager/cpu_assignment.go takeByTopologyNUMAPacked with
// the packed sorting): whole NUMA nodes or sockets first (whichever level is larger), then the other level,
// then whole cores, then single threads; at each level the candidates with the fewest free CPUs come first,
// so allocations pack onto already-used sockets and cores and leave whole ones free.
import { cpuSet, difference, union, type CPUSet } from "../../../config/cpuset.ts";
import { allCPUs, cpusAt, cpusPerCore, cpusPerSocket, idsAt, keepOnly, type CPUDetails, type CPUTopology } from "./topology.ts";

interface Accumulator {
  topo: CPUTopology;
  /** The CPUs still free (available minus taken). */
  details: CPUDetails;
  needed: number;
  result: CPUSet;
  numaFirst: boolean;
}

/** Upstream cpuAccumulator.sort: by free CPUs at that id, ascending, then by id. */
function sortByFree(acc: Accumulator, ids: number[], level: "numaNodeId" | "socketId" | "coreId"): number[] {
  const free = (id: number) => cpusAt(acc.details, level, id).length;
  return [...ids].sort((a, b) => free(a) - free(b) || a - b);
}

function sortedNUMANodes(acc: Accumulator): number[] {
  if (acc.numaFirst) return sortByFree(acc, idsAt(acc.details, "numaNodeId"), "numaNodeId");
  return sortedSockets(acc).flatMap((s) => sortByFree(acc, idsAt(acc.details, "numaNodeId", { level: "socketId", id: s }), "numaNodeId"));
}

function sortedSockets(acc: Accumulator): number[] {
  if (!acc.numaFirst) return sortByFree(acc, idsAt(acc.details, "socketId"), "socketId");
  return sortedNUMANodes(acc).flatMap((n) => sortByFree(acc, idsAt(acc.details, "socketId", { level: "numaNodeId", id: n }), "socketId"));
}

function sortedCores(acc: Accumulator): number[] {
  if (acc.numaFirst) return sortedSockets(acc).flatMap((s) => sortByFree(acc, idsAt(acc.details, "coreId", { level: "socketId", id: s }), "coreId"));
  return sortedNUMANodes(acc).flatMap((n) => sortByFree(acc, idsAt(acc.details, "coreId", { level: "numaNodeId", id: n }), "coreId"));
}

function take(acc: Accumulator, cpus: CPUSet): void {
  acc.result = union(acc.result, cpus);
  acc.details = keepOnly(acc.details, difference(allCPUs(acc.details), acc.result));
  acc.needed -= cpus.length;
}

/** Takes every wholly free id of `level` (in sorted order) whose CPUs still fit in what is needed. */
function takeFull(acc: Accumulator, level: "numaNodeId" | "socketId" | "coreId"): void {
  const sorted = level === "numaNodeId" ? sortedNUMANodes(acc) : level === "socketId" ? sortedSockets(acc) : sortedCores(acc);
  const wholeSize = (id: number) =>
    level === "numaNodeId" ? cpusAt(acc.topo.details, level, id).length : level === "socketId" ? cpusPerSocket(acc.topo) : cpusPerCore(acc.topo);
  const free = sorted.filter((id) => cpusAt(acc.details, level, id).length === wholeSize(id));
  for (const id of free) {
    const cpus = cpusAt(acc.topo.details, level, id);
    if (acc.needed >= cpus.length) take(acc, cpus);
  }
}

function takeRemainingCPUs(acc: Accumulator): void {
  const packed = sortedCores(acc).flatMap((core) => [...cpusAt(acc.details, "coreId", core)]);
  for (const cpu of packed) {
    take(acc, cpuSet(cpu));
    if (acc.needed < 1) return;
  }
}

/** The error upstream's takeByTopology returns when fewer CPUs are available than requested. */
export function notEnoughCPUsMessage(requested: number, available: number): string {
  return `not enough cpus available to satisfy request: requested=${requested}, available=${available}`;
}

/** Upstream takeByTopologyNUMAPacked (packed, no uncore-cache alignment): `numCPUs` of `available`, or throws. */
export function takeByTopology(topo: CPUTopology, available: CPUSet, numCPUs: number): CPUSet {
  const acc: Accumulator = {
    topo,
    details: keepOnly(topo.details, available),
    needed: numCPUs,
    result: [],
    numaFirst: topo.numSockets >= topo.numNUMANodes,
  };
  if (acc.needed < 1) return acc.result;
  if (acc.needed > acc.details.size) throw new Error(notEnoughCPUsMessage(numCPUs, available.length));
  takeFull(acc, acc.numaFirst ? "numaNodeId" : "socketId");
  if (acc.needed < 1) return acc.result;
  takeFull(acc, acc.numaFirst ? "socketId" : "numaNodeId");
  if (acc.needed < 1) return acc.result;
  takeFull(acc, "coreId");
  if (acc.needed < 1) return acc.result;
  takeRemainingCPUs(acc);
  if (acc.needed < 1) return acc.result;
  throw new Error("failed to allocate cpus");
}
