// LinuxContainerResources from a container's requests/limits and the pod's QoS class, as upstream
// generateLinuxContainerResources (pkg/kubelet/kuberuntime/kuberuntime_container_linux.go) and
// GetContainerOOMScoreAdjust (pkg/kubelet/qos/policy.go).
import { parseQuantity, quantityMilliValue, quantityValue } from "../../config/quantity.ts";
import type { LinuxContainerResources } from "../../cri/types.ts";
import { isCriticalPod, podKey, type PodLike } from "../pod-like.ts";
import { kv, log } from "../../log.ts";
import { defaultedRequests, getPodQOS } from "../qos.ts";
import { containerSwap, type SwapHost } from "./swap.ts";
import type { KubeContainer } from "./types.ts";

export const MIN_SHARES = 2;
export const SHARES_PER_CPU = 1024;
export const QUOTA_PERIOD_US = 100_000;
export const MIN_QUOTA_PERIOD_US = 1000;
export const GUARANTEED_OOM_SCORE_ADJ = -997;
export const BESTEFFORT_OOM_SCORE_ADJ = 1000;

/** cgroup cpu.shares for a cpu request in millicores (0 → the minimum, 2). */
export function milliCPUToShares(milliCPU: number): number {
  if (milliCPU === 0) return MIN_SHARES;
  const shares = Math.floor((milliCPU * SHARES_PER_CPU) / 1000);
  return Math.max(shares, MIN_SHARES);
}

/** CFS quota in µs for a cpu limit in millicores over `periodUs` (0 → no quota). */
export function milliCPUToQuota(milliCPU: number, periodUs: number): number {
  if (milliCPU === 0) return 0;
  const quota = Math.floor((milliCPU * periodUs) / 1000);
  return Math.max(quota, MIN_QUOTA_PERIOD_US);
}

function milli(list: Record<string, string | number> | undefined, name: string): number {
  const v = list?.[name];
  return v === undefined ? 0 : quantityMilliValue(parseQuantity(String(v)));
}

function value(list: Record<string, string | number> | undefined, name: string): number {
  const v = list?.[name];
  return v === undefined ? 0 : quantityValue(parseQuantity(String(v)));
}

/** oom_score_adj of a container: -997 Guaranteed/node-critical, 1000 BestEffort, Burstable by memory request. */
export function containerOOMScoreAdjust(pod: PodLike, container: KubeContainer, memoryCapacityBytes: number): number {
  if (isCriticalPod(pod) && pod.spec.priorityClassName === "system-node-critical") return GUARANTEED_OOM_SCORE_ADJ;
  const qos = getPodQOS(pod);
  if (qos === "Guaranteed") return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === "BestEffort") return BESTEFFORT_OOM_SCORE_ADJ;
  const memoryRequest = value(defaultedRequests(container), "memory");
  const adj = memoryCapacityBytes > 0 ? 1000 - Math.floor((1000 * memoryRequest) / memoryCapacityBytes) : 1000;
  // A burstable container must score above every guaranteed one and below every best-effort one.
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}

/**
 * What the host's cgroups offer that changes a container's resources (detected once at start), with
 * the node's swap and its swap behaviour (swap.ts).
 */
export interface ContainerCgroupHost extends SwapHost {
  /** KubeletConfiguration singleProcessOOMKill (v2 default false: the whole container is OOM-killed). */
  singleProcessOOMKill?: boolean;
}

/**
 * LinuxContainerResources.unified on cgroup v2, as upstream sets it: memory.oom.group=1 unless
 * singleProcessOOMKill (calculateLinuxResources), memory.swap.max as the container's swap decision
 * (configureContainerSwapResources; swap.ts) when the swap controller is there.
 */
export function unifiedContainerResources(host: ContainerCgroupHost | undefined, swapMaxBytes?: number): Record<string, string> | undefined {
  if (!host?.unified) return undefined;
  const unified: Record<string, string> = {};
  if (host.singleProcessOOMKill !== true) unified["memory.oom.group"] = "1";
  if (swapMaxBytes !== undefined) unified["memory.swap.max"] = String(swapMaxBytes);
  return Object.keys(unified).length > 0 ? unified : undefined;
}

export function containerResources(pod: PodLike, container: KubeContainer, memoryCapacityBytes: number, host?: ContainerCgroupHost): LinuxContainerResources {
  const requests = defaultedRequests(container);
  const limits = container.resources?.limits;
  const cpuRequest = milli(requests, "cpu");
  const cpuLimit = milli(limits, "cpu");
  const out: LinuxContainerResources = {
    cpuShares: milliCPUToShares(cpuRequest),
    memoryLimitInBytes: value(limits, "memory"),
    oomScoreAdj: containerOOMScoreAdjust(pod, container, memoryCapacityBytes),
  };
  if (cpuLimit > 0) {
    out.cpuPeriod = QUOTA_PERIOD_US;
    out.cpuQuota = milliCPUToQuota(cpuLimit, QUOTA_PERIOD_US);
  }
  const swap = containerSwap(host, pod, container, { memoryCapacityBytes, memoryLimitInBytes: out.memoryLimitInBytes ?? 0 });
  if (swap?.error)
    log.error(`Cannot calculate swap allocation amount; disallowing swap ${kv({ pod: podKey(pod), container: container.name, err: swap.error })}`);
  if (swap?.memorySwapLimitInBytes !== undefined) out.memorySwapLimitInBytes = swap.memorySwapLimitInBytes;
  const unified = unifiedContainerResources(host, swap?.swapMaxBytes);
  if (unified) out.unified = unified;
  return out;
}
