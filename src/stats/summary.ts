// Kubelet Summary API types (k8s.io/kubelet/pkg/apis/stats/v1alpha1), as served at /stats/summary.
// Times are RFC 3339 strings, as in the JSON; every field the kubelet may omit is optional.
// The one shape shared by the kernel stats layer, the pod stats, the eviction manager and
// `bunlet eviction simulate`.

export interface CPUStats {
  time: string;
  usageNanoCores?: number;
  usageCoreNanoSeconds?: number;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

/** The swap of a node, pod or container (stats/v1alpha1 SwapStats). */
export interface SwapStats {
  time: string;
  swapAvailableBytes?: number;
  swapUsageBytes?: number;
}

export interface FsStats {
  time: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export interface RuntimeStats {
  imageFs?: FsStats;
  containerFs?: FsStats;
}

export interface InterfaceStats {
  name: string;
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

/** The default interface's figures inline (name "" when it has none) and every interface. */
export interface NetworkStats extends Partial<InterfaceStats> {
  time: string;
  interfaces?: InterfaceStats[];
}

export interface RlimitStats {
  time: string;
  maxpid?: number;
  curproc?: number;
}

export interface ProcessStats {
  process_count?: number;
}

/** Well-known system container names (stats/v1alpha1 SystemContainer*). */
export const SYSTEM_CONTAINER_KUBELET = "kubelet";
export const SYSTEM_CONTAINER_RUNTIME = "runtime";
export const SYSTEM_CONTAINER_MISC = "misc";
export const SYSTEM_CONTAINER_PODS = "pods";

export interface ContainerStats {
  name: string;
  startTime?: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
  rootfs?: FsStats;
  logs?: FsStats;
  swap?: SwapStats;
}

export interface PodReference {
  name: string;
  namespace: string;
  uid: string;
}

export interface VolumeStats extends FsStats {
  name: string;
  /** The claim of a persistent volume (upstream PVCReference). */
  pvcRef?: { name: string; namespace: string };
}

export interface PodStats {
  podRef: PodReference;
  startTime?: string;
  containers?: ContainerStats[];
  cpu?: CPUStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  volume?: VolumeStats[];
  "ephemeral-storage"?: FsStats;
  process_stats?: ProcessStats;
  swap?: SwapStats;
}

export interface NodeStats {
  nodeName: string;
  systemContainers?: ContainerStats[];
  startTime?: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  fs?: FsStats;
  runtime?: RuntimeStats;
  rlimit?: RlimitStats;
  swap?: SwapStats;
}

export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}

/** What a caller of the summary provider may ask for (the eviction manager's pressure paths). */
export interface SummaryRequest {
  /** Fresh memory only, the rest from the last full summary (a full one when there is none yet). */
  memoryOnly?: boolean;
  /**
   * Volumes walked now rather than served from the cache (up to volumeTtlMs old): the eviction
   * manager ranking pods under disk pressure, when a pod filling its emptyDir must show it. A walk
   * that takes longer than 2 s falls back to the cached value.
   */
  freshVolumes?: boolean;
}
