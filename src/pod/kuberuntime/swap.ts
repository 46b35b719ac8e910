// A container's swap (upstream kuberuntime_container_linux.go: configureContainerSwapResources,
// GetContainerSwapBehavior, ConfigureLimitedSwap / ConfigureNoSwap, calcSwapForBurstablePods; KEP 2400).
// Pure: the pod, the container and the host's facts in, the swap fields of LinuxContainerResources out.
//   LimitedSwap (cgroup v2 with the swap controller, not a critical pod, a Burstable pod's container
//   whose memory request differs from its limit): memory.swap.max = request / node memory × node swap.
//   Everything else is NoSwap: memory.swap.max=0 on v2, memorySwapLimitInBytes = memoryLimitInBytes on
//   v1 with memsw. No swap controller: nothing is set.
import { parseQuantity, quantityValue } from "../../config/quantity.ts";
import { isCriticalPod, type PodLike } from "../pod-like.ts";
import { defaultedRequests, getPodQOS } from "../qos.ts";
import type { KubeContainer } from "./types.ts";

/** KubeletConfiguration memorySwap.swapBehavior values (k8s.io/kubelet/pkg/types SwapBehavior). */
export type SwapBehavior = "NoSwap" | "LimitedSwap";
export const NO_SWAP: SwapBehavior = "NoSwap";
export const LIMITED_SWAP: SwapBehavior = "LimitedSwap";

/** The host facts the decision reads. */
export interface SwapHost {
  /** cgroup v2 (the unified hierarchy). */
  unified: boolean;
  /** The swap controller (memory.swap.max on v2, memory.memsw.limit_in_bytes on v1). */
  swapController: boolean;
  /** KubeletConfiguration memorySwap.swapBehavior; "" or absent is NoSwap. */
  swapBehavior?: string;
  /** The node's swap, SwapTotal of /proc/meminfo (cAdvisor machineInfo.SwapCapacity). */
  swapCapacityBytes?: number;
}

/** The swap fields of LinuxContainerResources, and why LimitedSwap fell back to no swap. */
export interface ContainerSwap {
  behavior: SwapBehavior;
  /** unified["memory.swap.max"] (cgroup v2). */
  swapMaxBytes?: number;
  /** memorySwapLimitInBytes (cgroup v1 with memsw). */
  memorySwapLimitInBytes?: number;
  /** calcSwapForBurstablePods refused: the container gets no swap (upstream logs and disallows swap). */
  error?: string;
}

const memoryOf = (list: Record<string, string | number> | undefined): number => {
  const v = list?.memory;
  return v === undefined ? 0 : quantityValue(parseQuantity(String(v)));
};

/** GetContainerSwapBehavior: LimitedSwap only where every requirement holds, else NoSwap. */
export function containerSwapBehavior(host: SwapHost, pod: PodLike, container: KubeContainer): SwapBehavior {
  if (host.swapBehavior !== LIMITED_SWAP) return NO_SWAP;
  if (!host.swapController || !host.unified) return NO_SWAP;
  if (isCriticalPod(pod)) return NO_SWAP;
  const request = memoryOf(defaultedRequests(container));
  const limit = memoryOf(container.resources?.limits);
  const noMemory = request === 0 && limit === 0;
  if (getPodQOS(pod) !== "Burstable" || noMemory || request === limit) return NO_SWAP;
  return LIMITED_SWAP;
}

/**
 * calcSwapForBurstablePods: (request / node memory) × node swap, truncated to whole bytes. Throws
 * upstream's errors when the node's memory is unknown or the request exceeds it.
 */
export function calcSwapForBurstablePods(containerMemoryRequest: number, nodeTotalMemory: number, totalPodsSwapAvailable: number): number {
  if (nodeTotalMemory <= 0) throw new Error("total node memory is 0");
  if (containerMemoryRequest > nodeTotalMemory)
    throw new Error(`container request ${containerMemoryRequest} is larger than total node memory ${nodeTotalMemory}`);
  return Math.floor((containerMemoryRequest / nodeTotalMemory) * totalPodsSwapAvailable);
}

/** NoSwap: 0 swap on v2; on v1 memory+swap = memory (if the memory limit is 0 the kernel ignores it). */
function noSwap(host: SwapHost, memoryLimitInBytes: number): ContainerSwap {
  return host.unified ? { behavior: NO_SWAP, swapMaxBytes: 0 } : { behavior: NO_SWAP, memorySwapLimitInBytes: memoryLimitInBytes };
}

/**
 * configureContainerSwapResources: the container's swap fields; undefined without a swap controller
 * (nothing to set, as upstream).
 */
export function containerSwap(
  host: SwapHost | undefined,
  pod: PodLike,
  container: KubeContainer,
  machine: { memoryCapacityBytes: number; memoryLimitInBytes: number },
): ContainerSwap | undefined {
  if (!host?.swapController) return undefined;
  if (containerSwapBehavior(host, pod, container) !== LIMITED_SWAP) return noSwap(host, machine.memoryLimitInBytes);
  const request = memoryOf(defaultedRequests(container));
  try {
    return { behavior: LIMITED_SWAP, swapMaxBytes: calcSwapForBurstablePods(request, machine.memoryCapacityBytes, host.swapCapacityBytes ?? 0) };
  } catch (e) {
    return { ...noSwap(host, machine.memoryLimitInBytes), error: (e as Error).message };
  }
}
