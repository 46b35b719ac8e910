// The node status the kubelet reports, as upstream's nodestatus setters build it, pure over plain
// inputs: capacity/allocatable (allocatable = capacity − systemReserved − kubeReserved − hard
// eviction thresholds; memory also − hugepages), nodeInfo, addresses, daemonEndpoints, images,
// runtimeHandlers, and the conditions MemoryPressure, DiskPressure, PIDPressure, Ready — each keeping its
// lastTransitionTime while its status holds, with lastHeartbeatTime = now.
import { formatQuantity, parseQuantity, quantityFromNumber } from "../config/quantity.ts";
import { NODE_CONDITION_TEXT, type NodeConditionType } from "../eviction/index.ts";
import { thresholdAmount, type Threshold } from "../eviction/threshold.ts";
import { metav1Time, type NodeCondition } from "../kube/types.ts";
import type { NodeAddress } from "./addresses.ts";
import type { MachineInfo } from "./machine-info.ts";
import type { RuntimeHandler } from "../cri/types.ts";

export interface ContainerImage {
  names: string[];
  sizeBytes: number;
}

export interface NodeStatusInput {
  nowMs: number;
  machine: MachineInfo;
  /** Undefined when the addresses setter failed (a --node-ip validateNodeIP refuses): the node keeps the ones it had. */
  addresses?: NodeAddress[];
  kubeletVersion: string;
  /** "containerd://1.6.20" once the runtime answered. */
  runtimeVersion?: string;
  /** Why the node is not ready (runtime down, network not ready, …); empty = ready. */
  readyErrors: string[];
  pressure: readonly NodeConditionType[];
  images: ContainerImage[];
  maxImages: number;
  maxPods: number;
  kubeletPort: number;
  systemReserved?: Record<string, string>;
  kubeReserved?: Record<string, string>;
  hardEvictionThresholds: readonly Threshold[];
  /** The device plugins' resources (upstream devicePluginResourceCapacityFunc); none without a device manager. */
  devicePlugins?: DevicePluginResources;
  /** The runtime's handlers and their features (upstream RuntimeHandlers setter); none reported when empty. */
  runtimeHandlers?: readonly RuntimeHandler[];
  /** The attachable volumes in use (upstream VolumesInUse setter), sorted. */
  volumesInUse?: readonly string[];
}

/** Capacity (healthy + unhealthy devices) and allocatable (healthy) by resource; removed resources are reported as 0. */
export interface DevicePluginResources {
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  removed: string[];
}

export type NodeStatus = Record<string, any> & { conditions: NodeCondition[] };

const bytes = (n: number) => formatQuantity(quantityFromNumber(n, "BinarySI"));
const qBytes = (s: string) => Number(parseQuantity(s).nanos / 1_000_000_000n);

export function nodeCapacity(m: MachineInfo, maxPods: number): Record<string, string> {
  const cap: Record<string, string> = { cpu: String(m.cpus), memory: bytes(m.memoryBytes), pods: String(maxPods) };
  if (m.ephemeralStorageBytes !== undefined) cap["ephemeral-storage"] = bytes(m.ephemeralStorageBytes);
  for (const [size, b] of Object.entries(m.hugepagesBytes)) cap[`hugepages-${size}`] = bytes(b);
  return cap;
}

function hardReservation(signal: string, thresholds: readonly Threshold[], capacityBytes: number): number {
  const t = thresholds.find((x) => x.signal === signal && x.gracePeriodMs === 0);
  return t ? thresholdAmount(t.value, capacityBytes) : 0;
}

export function nodeAllocatable(
  cap: Record<string, string>,
  input: Pick<NodeStatusInput, "systemReserved" | "kubeReserved" | "hardEvictionThresholds" | "machine">,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(cap)) {
    let n = parseQuantity(v).nanos;
    for (const r of [input.systemReserved?.[k], input.kubeReserved?.[k]]) if (r) n -= parseQuantity(r).nanos;
    const capBytes = k === "cpu" || k === "pods" ? 0 : qBytes(v);
    if (k === "memory") {
      n -= BigInt(hardReservation("memory.available", input.hardEvictionThresholds, capBytes)) * 1_000_000_000n;
      n -= BigInt(Object.values(input.machine.hugepagesBytes).reduce((a, b) => a + b, 0)) * 1_000_000_000n;
    }
    if (k === "ephemeral-storage") n -= BigInt(hardReservation("nodefs.available", input.hardEvictionThresholds, capBytes)) * 1_000_000_000n;
    if (n < 0n) n = 0n;
    out[k] = formatQuantity({ nanos: n, format: k === "cpu" || k === "pods" ? "DecimalSI" : "BinarySI" });
  }
  return out;
}

function condition(type: string, status: boolean, text: { reason: string; message: string }, prev: NodeCondition | undefined, now: string): NodeCondition {
  const s = status ? "True" : "False";
  return {
    type,
    status: s,
    lastHeartbeatTime: now,
    lastTransitionTime: prev?.status === s && prev.lastTransitionTime ? prev.lastTransitionTime : now,
    reason: text.reason,
    message: text.message,
  };
}

/** errors.NewAggregate(errs).Error(): one error as is, several as "[a, b]". */
const aggregate = (errs: string[]) => (errs.length === 1 ? errs[0]! : `[${errs.join(", ")}]`);

export function nodeConditions(input: NodeStatusInput, prev: readonly NodeCondition[] = []): NodeCondition[] {
  const now = metav1Time(input.nowMs);
  const old = (t: string) => prev.find((c) => c.type === t);
  const out: NodeCondition[] = [];
  for (const type of ["MemoryPressure", "DiskPressure", "PIDPressure"] as const) {
    const on = input.pressure.includes(type);
    out.push(condition(type, on, NODE_CONDITION_TEXT[type][on ? "true" : "false"], old(type), now));
  }
  const ready = input.readyErrors.length === 0;
  out.push(
    condition(
      "Ready",
      ready,
      ready ? { reason: "KubeletReady", message: "kubelet is posting ready status" } : { reason: "KubeletNotReady", message: aggregate(input.readyErrors) },
      old("Ready"),
      now,
    ),
  );
  // Conditions other components own (NetworkUnavailable, …) are kept as they are.
  for (const c of prev) if (!out.some((o) => o.type === c.type)) out.push(c);
  return out;
}

/**
 * Upstream MachineInfo setter: the device plugins' capacity over the machine's, a removed resource kept
 * at 0 (so the scheduler knows it is the node's and has none), their allocatable over the computed one.
 */
function withDevicePlugins(
  capacity: Record<string, string>,
  input: NodeStatusInput,
): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const dp = input.devicePlugins;
  if (!dp) return { capacity, allocatable: nodeAllocatable(capacity, input) };
  const cap = { ...capacity, ...dp.capacity };
  for (const r of dp.removed) cap[r] = "0";
  return { capacity: cap, allocatable: { ...nodeAllocatable(cap, input), ...dp.allocatable } };
}

export function buildNodeStatus(
  input: NodeStatusInput,
  prev?: { conditions?: readonly NodeCondition[] | null; addresses?: unknown; volumesInUse?: unknown },
): NodeStatus {
  const m = input.machine;
  const { capacity, allocatable } = withDevicePlugins(nodeCapacity(m, input.maxPods), input);
  const images = [...input.images].sort((a, b) => b.sizeBytes - a.sizeBytes);
  return {
    capacity,
    allocatable,
    conditions: nodeConditions(input, prev?.conditions ?? []),
    addresses: input.addresses ?? prev?.addresses ?? [],
    daemonEndpoints: { kubeletEndpoint: { Port: input.kubeletPort } },
    nodeInfo: {
      machineID: m.machineID,
      systemUUID: m.systemUUID,
      bootID: m.bootID,
      kernelVersion: m.kernelVersion,
      osImage: m.osImage,
      containerRuntimeVersion: input.runtimeVersion ?? "",
      kubeletVersion: input.kubeletVersion,
      kubeProxyVersion: "",
      operatingSystem: m.operatingSystem,
      architecture: m.architecture,
      // nodestatus.MachineInfo: the node's swap, when it has any (NodeSwap, GA and locked on).
      ...(m.swapCapacityBytes ? { swap: { capacity: m.swapCapacityBytes } } : {}),
    },
    images: input.maxImages >= 0 ? images.slice(0, input.maxImages) : images,
    ...(input.runtimeHandlers?.length ? { runtimeHandlers: input.runtimeHandlers.map(nodeRuntimeHandler) } : {}),
    // The status is sent as a strategic merge patch: an emptied list is sent as null, which removes it.
    ...(input.volumesInUse?.length ? { volumesInUse: [...input.volumesInUse] } : prev?.volumesInUse ? { volumesInUse: null } : {}),
  };
}

/** Upstream v1.NodeRuntimeHandler: both features always present, false when the runtime gave none. */
function nodeRuntimeHandler(h: RuntimeHandler) {
  return {
    name: h.name,
    features: { recursiveReadOnlyMounts: h.features?.recursiveReadOnlyMounts === true, userNamespaces: h.features?.userNamespaces === true },
  };
}

/** Upstream nodeStatusHasChanged: equal but for the conditions' lastHeartbeatTime. */
export function nodeStatusHasChanged(a: unknown, b: unknown): boolean {
  const strip = (s: any) => stableJson({ ...s, conditions: (s?.conditions ?? []).map((c: NodeCondition) => ({ ...c, lastHeartbeatTime: undefined })) });
  return strip(a) !== strip(b);
}

/** JSON with object keys sorted, so equal objects compare equal whatever order the server kept. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .filter((k) => (v as any)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as any)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}
