// Ephemeral-storage limit evictions (docs/eviction-contract.md#local-storage-limit-evictions): run every sync, before thresholds, and
// may evict several pods. First violation per pod wins: emptyDir sizeLimit, pod-level limit,
// container limit.
import { formatQuantity, parseQuantity, quantityFromNumber, quantityValue, type QuantityFormat } from "../config/quantity.ts";
import { podKey, type PodLike } from "../pod/pod-like.ts";
import type { FsStats } from "../stats/summary.ts";
import { containerEphemeralStorageMessage, emptyDirMessage, podEphemeralStorageMessage } from "./message.ts";
import { podLimit } from "../pod/pod-resources.ts";
import type { FsLayout, StatsFunc } from "./rank.ts";
import type { Logger } from "./types.ts";

function qty(v: string | number | undefined): { value: number; text: string } | undefined {
  if (v === undefined) return undefined;
  try {
    const q = parseQuantity(String(v));
    return { value: quantityValue(q), text: formatQuantity(q) };
  } catch {
    return undefined;
  }
}

const used = (fs: FsStats | undefined): number => fs?.usedBytes ?? 0;

/** A summed limit printed in the format of the first declared limit, as Quantity.Add keeps it ("2G", "2Gi"). */
function formatLimitSum(pod: PodLike, value: number): string {
  const first = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]
    .map((c) => c.resources?.limits?.["ephemeral-storage"])
    .find((v) => v !== undefined);
  let format: QuantityFormat = "BinarySI";
  try {
    if (first !== undefined) format = parseQuantity(String(first)).format;
  } catch {
    // keep BinarySI
  }
  return formatQuantity(quantityFromNumber(value, format));
}

/** Metric labels upstream uses for local-storage evictions. */
export type LocalStorageSignal = "emptydirfs.limit" | "ephemeralpodfs.limit" | "ephemeralcontainerfs.limit";

export interface Violation {
  signal: LocalStorageSignal;
  message: string;
}

/** The first local-storage violation of a pod; undefined if none. */
export function localStorageViolation(pod: PodLike, stats: ReturnType<StatsFunc>, layout: FsLayout): Violation | undefined {
  if (!stats) return undefined;
  const volUsed = new Map<string, number>();
  for (const v of stats.volume ?? []) if (v.usedBytes !== undefined) volUsed.set(v.name, v.usedBytes);
  for (const v of pod.spec.volumes ?? []) {
    if (!v.emptyDir) continue;
    const limit = qty(v.emptyDir.sizeLimit);
    const u = volUsed.get(v.name);
    if (limit && limit.value > 0 && u !== undefined && u > limit.value) return { signal: "emptydirfs.limit", message: emptyDirMessage(v.name, limit.text) };
  }
  const podLim = podLimit(pod, "ephemeral-storage");
  if (podLim !== undefined) {
    const total = stats["ephemeral-storage"]?.usedBytes ?? 0;
    if (total > podLim) return { signal: "ephemeralpodfs.limit", message: podEphemeralStorageMessage(formatLimitSum(pod, podLim)) };
  }
  const limits = new Map<string, { value: number; text: string }>();
  for (const c of pod.spec.containers) {
    const l = qty(c.resources?.limits?.["ephemeral-storage"]);
    if (l && l.value !== 0) limits.set(c.name, l);
  }
  for (const cs of stats.containers ?? []) {
    const l = limits.get(cs.name);
    if (!l) continue;
    // With a dedicated imagefs the writable layer is not on nodefs, so only logs count.
    const u = used(cs.logs) + (layout.dedicatedImageFs ? 0 : used(cs.rootfs));
    if (u > l.value) return { signal: "ephemeralcontainerfs.limit", message: containerEphemeralStorageMessage(cs.name, l.text) };
  }
  return undefined;
}

/** Evicts every violating, non-exempt pod; returns how many were evicted. */
export function evictLocalStorage(
  pods: readonly PodLike[],
  stats: StatsFunc,
  layout: FsLayout,
  exempt: (p: PodLike) => boolean,
  evict: (pod: PodLike, v: Violation) => void,
  logger: Logger,
): number {
  let n = 0;
  for (const pod of pods) {
    const v = localStorageViolation(pod, stats(pod), layout);
    if (!v) continue;
    if (exempt(pod)) {
      logger.warn(`cannot evict a critical pod over its local storage limit ${podKey(pod)}: ${v.message.trim()}`);
      continue;
    }
    evict(pod, v);
    n++;
  }
  return n;
}
