// What the summary provider is built from (upstream pkg/kubelet/stats: the providers' dependencies),
// apart from the provider so that its parts (CRI, cgroup and storage stats, the shared context) can
// name them without importing the provider.
import type { Clock } from "../clock.ts";
import type { CriClient } from "../cri/client.ts";
import type { PodLike } from "../pod/pod-like.ts";
import type { DirUsageCache } from "./dir-usage.ts";
import type { NodeStatsRequest } from "./node.ts";
import type { NodeStats, VolumeStats } from "./summary.ts";

/** The CRI calls the summary makes. */
export type SummaryCri = Pick<CriClient, "listPodSandbox" | "listContainers" | "listContainerStats">;

export interface SummaryProviderOptions {
  nodeName: string;
  /** KERNEL's createNodeStatsProvider(...).nodeStats; asked for memory only on the pressure path. */
  nodeStats: (req?: NodeStatsRequest) => NodeStats;
  /** Pods admitted and not yet terminated (PODS' pod manager). */
  activePods: () => readonly PodLike[];
  /** The pod's cgroup relative to each controller's mount ("kubepods/burstable/pod<uid>"); undefined = none yet. */
  podCgroupPath: (pod: PodLike) => string | undefined;
  cri?: SummaryCri;
  /**
   * The pod's running containers as its status names them (runtime ID, name): containerMemory reads
   * those the CRI listing cache does not know yet (started since it was taken, or its refresh slow).
   */
  runningContainers?: (uid: string) => readonly { id: string; name: string }[];
  /** kubelet podLogsDir (default /var/log/pods). */
  podLogsDir?: string;
  /** kubelet --root-dir: emptyDir volumes live in <rootDir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>. */
  rootDir: string;
  /** Where cgroup controllers are mounted (default /sys/fs/cgroup; v1 per-controller dirs or a v2 unified mount). */
  cgroupMountRoot?: string;
  /** Where /proc is (tests): a pod's network is read from /proc/<one of its pids>/net/dev. */
  procRoot?: string;
  /** The "kubelet" system container: bunlet's own cgroup (from /proc/self/cgroup, default) or none (false). */
  kubeletContainer?: boolean;
  /** Start time of the "kubelet" system container (default: this process's start). */
  kubeletStartTime?: string;
  /** kubepods cgroup (relative, e.g. "kubepods"): adds the "pods" system container when nodeStats has none, and its cpu. */
  podsCgroup?: string;
  clock?: Pick<Clock, "now">;
  /** A volume directory is re-walked at most this often (default 10 s). */
  volumeTtlMs?: number;
  /** The CRI listing is reused for this long (default 2 s) and refreshed in the background. */
  criTtlMs?: number;
  /** The first summary waits this long for CRI at most (default 2 s). */
  criTimeoutMs?: number;
  /** How long a summary waits for the first walk of a volume directory (default 250 ms); later walks never block. */
  volumeWaitMs?: number;
  /** Minimum window for usageNanoCores (default 1 s). */
  minCpuWindowMs?: number;
  /** A pod's field could not be read (called once per pod, field and message); default: log.warn. */
  onError?: (message: string) => void;
  dirUsage?: DirUsageCache;
  /** The pod's persistent and CSI volumes (volume-stat-calculator.ts), after its emptyDirs. */
  volumeStats?: (pod: PodLike, uid: string) => Promise<VolumeStats[]>;
}
