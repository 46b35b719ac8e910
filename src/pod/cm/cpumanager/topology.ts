// The node's CPU topology (upstream cm/cpumanager/topology/topology.go Discover, over what cadvisor reads
// from sysfs): for each online CPU its NUMA node, socket and core. A core's id is the lowest CPU id among
// its threads (upstream getUniqueCoreID), so cores of different sockets never share one. The sysfs reader
// is injected: tests describe a machine as a table of files.
import { cpuSet, parseCPUSet, type CPUSet } from "../../../config/cpuset.ts";

export interface CPUInfo {
  numaNodeId: number;
  socketId: number;
  coreId: number;
}

export interface CPUTopology {
  numCPUs: number;
  numCores: number;
  numSockets: number;
  numNUMANodes: number;
  /** CPU id → where it sits. */
  details: ReadonlyMap<number, CPUInfo>;
}

export type CPUDetails = ReadonlyMap<number, CPUInfo>;

/** Reads one sysfs file (trimmed text), undefined when it is not there. */
export type SysfsReader = (path: string) => Promise<string | undefined>;

export const SYSFS_CPU_ROOT = "/sys/devices/system/cpu";
export const SYSFS_NODE_ROOT = "/sys/devices/system/node";

/** The CPU → NUMA node map from /sys/devices/system/node/node<N>/cpulist; one node 0 without NUMA (as cadvisor). */
async function numaNodeOf(read: SysfsReader, cpus: CPUSet): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  const online = await read(`${SYSFS_NODE_ROOT}/online`);
  for (const node of online ? parseCPUSet(online) : []) {
    const list = await read(`${SYSFS_NODE_ROOT}/node${node}/cpulist`);
    for (const c of list ? parseCPUSet(list) : []) out.set(c, node);
  }
  for (const c of cpus) if (!out.has(c)) out.set(c, 0);
  return out;
}

/** Upstream topology.Discover over sysfs: the online CPUs with their socket, core and NUMA node. */
export async function discoverTopology(read: SysfsReader): Promise<CPUTopology> {
  const online = await read(`${SYSFS_CPU_ROOT}/online`);
  if (!online) throw new Error(`could not detect number of cpus: ${SYSFS_CPU_ROOT}/online is empty`);
  const cpus = parseCPUSet(online);
  const numa = await numaNodeOf(read, cpus);
  const raw: { cpu: number; socket: number; core: number }[] = [];
  for (const cpu of cpus) {
    const socket = Number((await read(`${SYSFS_CPU_ROOT}/cpu${cpu}/topology/physical_package_id`)) ?? "0");
    const core = Number((await read(`${SYSFS_CPU_ROOT}/cpu${cpu}/topology/core_id`)) ?? String(cpu));
    raw.push({ cpu, socket, core });
  }
  return topologyFrom(raw.map((r) => ({ ...r, numaNode: numa.get(r.cpu) ?? 0 })));
}

/** The topology of CPUs described by socket, per-socket core id and NUMA node (threads sharing a core id are siblings). */
export function topologyFrom(cpus: { cpu: number; socket: number; core: number; numaNode: number }[]): CPUTopology {
  const firstOfCore = new Map<string, number>();
  for (const c of cpus) {
    const key = `${c.socket}/${c.core}`;
    firstOfCore.set(key, Math.min(firstOfCore.get(key) ?? c.cpu, c.cpu));
  }
  const details = new Map<number, CPUInfo>();
  for (const c of [...cpus].sort((a, b) => a.cpu - b.cpu))
    details.set(c.cpu, { numaNodeId: c.numaNode, socketId: c.socket, coreId: firstOfCore.get(`${c.socket}/${c.core}`)! });
  return {
    numCPUs: details.size,
    numCores: firstOfCore.size,
    numSockets: new Set(cpus.map((c) => c.socket)).size,
    numNUMANodes: new Set(cpus.map((c) => c.numaNode)).size,
    details,
  };
}

export function cpusPerCore(t: CPUTopology): number {
  return t.numCores === 0 ? 0 : t.numCPUs / t.numCores;
}

export function cpusPerSocket(t: CPUTopology): number {
  return t.numSockets === 0 ? 0 : t.numCPUs / t.numSockets;
}

/** Every CPU of the details. */
export function allCPUs(d: CPUDetails): CPUSet {
  return cpuSet(...d.keys());
}

/** The details of only the CPUs in `set` (upstream CPUDetails.KeepOnly). */
export function keepOnly(d: CPUDetails, set: CPUSet): CPUDetails {
  const keep = new Set(set);
  return new Map([...d].filter(([c]) => keep.has(c)));
}

type Level = keyof CPUInfo;

/** The distinct ids at one level (sockets, cores, NUMA nodes) among the CPUs of the details. */
export function idsAt(d: CPUDetails, level: Level, within?: { level: Level; id: number }): number[] {
  const out = new Set<number>();
  for (const info of d.values()) if (!within || info[within.level] === within.id) out.add(info[level]);
  return [...out];
}

/** The CPUs whose `level` id is `id` (upstream CPUsInSockets / CPUsInCores / CPUsInNUMANodes). */
export function cpusAt(d: CPUDetails, level: Level, id: number): CPUSet {
  const out: number[] = [];
  for (const [c, info] of d) if (info[level] === id) out.push(c);
  return cpuSet(...out);
}

/** Printed as upstream's "Detected CPU topology" log. */
export function describeTopology(t: CPUTopology): string {
  return `numCPUs=${t.numCPUs} numCores=${t.numCores} numSockets=${t.numSockets} numNUMANodes=${t.numNUMANodes}`;
}
