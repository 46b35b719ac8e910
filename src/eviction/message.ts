// Eviction message and event annotations for threshold evictions (docs/eviction-contract.md#what-the-evicted-pod-gets,
// #eviction-message), and the texts of local-storage evictions (#local-storage-limit-evictions).
// Literal strings are upstream's.
import { formatQuantity, parseQuantity, quantityFromNumber, type Quantity } from "../config/quantity.ts";
import type { PodLike } from "../pod/pod-like.ts";
import type { ContainerStats, PodStats } from "../stats/summary.ts";
import { SIGNAL_RESOURCE, signalIsCount, type StarvedResource } from "./signals.ts";
import { thresholdAmount, type Observations, type Threshold } from "./threshold.ts";

export const EVICTED_REASON = "Evicted";
export const OFFENDING_CONTAINERS_KEY = "offending_containers";
export const OFFENDING_CONTAINERS_USAGE_KEY = "offending_containers_usage";
export const STARVED_RESOURCE_KEY = "starved_resource";

/** Canonical Kubernetes text of a byte amount (BinarySI) or a count (DecimalSI). */
export function formatAmount(n: number, count = false): string {
  return formatQuantity(quantityFromNumber(n, count ? "DecimalSI" : "BinarySI"));
}

/** GetThresholdQuantity printed: a quantity keeps its own format; a percentage amount is BinarySI. */
export function formatThresholdAmount(t: Threshold, capacity: number): string {
  if (t.value.quantity) return formatQuantity(t.value.quantity);
  return formatAmount(thresholdAmount(t.value, capacity));
}

function requestQuantity(pod: PodLike, containerName: string, resource: string): Quantity {
  const all = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])];
  const c = all.find((x) => x.name === containerName);
  const v = c?.resources?.requests?.[resource] ?? c?.resources?.limits?.[resource];
  if (v === undefined) return { nanos: 0n, format: "DecimalSI" };
  try {
    return parseQuantity(String(v));
  } catch {
    return { nanos: 0n, format: "DecimalSI" };
  }
}

export interface EvictionMessage {
  message: string;
  annotations: Record<string, string>;
}

/**
 * evictionMessage: "The node was low on resource: R. ", then the first actionable threshold on R
 * with an observation, then one sentence per container using more than its request (memory:
 * working set; ephemeral-storage: rootfs + logs when both are known; never for inodes/pids).
 */
export function evictionMessage(
  resource: StarvedResource,
  pod: PodLike,
  stats: PodStats | undefined,
  thresholds: readonly Threshold[],
  obs: Observations,
): EvictionMessage {
  let message = `The node was low on resource: ${resource}. `;
  for (const t of thresholds) {
    if (SIGNAL_RESOURCE[t.signal] !== resource) continue;
    const o = obs[t.signal];
    if (!o) continue;
    message += `Threshold quantity: ${formatThresholdAmount(t, o.capacity)}, available: ${formatAmount(o.available, signalIsCount(t.signal))}. `;
    break;
  }
  const annotations: Record<string, string> = {};
  if (!stats) return { message, annotations };
  const containers: string[] = [];
  const usages: string[] = [];
  const specNames = new Set([...pod.spec.containers, ...(pod.spec.initContainers ?? [])].map((c) => c.name));
  for (const cs of stats.containers ?? []) {
    if (!specNames.has(cs.name)) continue;
    let usage: number | undefined;
    if (resource === "memory") usage = cs.memory?.workingSetBytes;
    else if (resource === "ephemeral-storage" && cs.rootfs?.usedBytes !== undefined && cs.logs?.usedBytes !== undefined) {
      usage = cs.rootfs.usedBytes + cs.logs.usedBytes;
    }
    if (usage === undefined) continue;
    const request = requestQuantity(pod, cs.name, resource);
    if (BigInt(usage) * 1_000_000_000n <= request.nanos) continue;
    const u = formatAmount(usage);
    message += `Container ${cs.name} was using ${u}, request is ${formatQuantity(request)}, has larger consumption of ${resource}. `;
    containers.push(cs.name);
    usages.push(u);
  }
  annotations[OFFENDING_CONTAINERS_KEY] = containers.join(",");
  annotations[OFFENDING_CONTAINERS_USAGE_KEY] = usages.join(",");
  annotations[STARVED_RESOURCE_KEY] = resource;
  return { message, annotations };
}

/**
 * A memory eviction's stats for the message: the containers' memory as read at eviction time
 * (EvictionDeps.containerMemory) over the summary's, which may predate the ramp that crossed the line
 * or not know a pod started since. Other resources, or nothing read: the summary's as they are.
 */
export function withFreshContainerMemory(
  resource: StarvedResource,
  pod: PodLike,
  stats: PodStats | undefined,
  fresh: readonly ContainerStats[] | undefined,
): PodStats | undefined {
  if (resource !== "memory" || !fresh) return stats;
  const before = new Map((stats?.containers ?? []).map((c) => [c.name, c]));
  const read = new Set(fresh.map((c) => c.name));
  // A container the fresh read missed keeps the summary's figure rather than vanish from the message.
  const containers = [
    ...fresh.map((c) => ({ ...before.get(c.name), ...c, memory: c.memory ?? before.get(c.name)?.memory })),
    ...(stats?.containers ?? []).filter((c) => !read.has(c.name)),
  ];
  const podRef = stats?.podRef ?? { name: pod.metadata.name, namespace: pod.metadata.namespace ?? "default", uid: pod.metadata.uid ?? "" };
  return { ...stats, podRef, containers };
}

// Go's %q for the names and limits in local-storage messages.
const q = (s: string): string => JSON.stringify(s);

export const emptyDirMessage = (volume: string, limit: string): string => `Usage of EmptyDir volume ${q(volume)} exceeds the limit ${q(limit)}. `;
export const podEphemeralStorageMessage = (limit: string): string => `Pod ephemeral local storage usage exceeds the total limit of containers ${limit}. `;
export const containerEphemeralStorageMessage = (container: string, limit: string): string =>
  `Container ${container} exceeded its local ephemeral storage limit ${q(limit)}. `;
