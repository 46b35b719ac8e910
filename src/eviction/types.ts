// The eviction manager's injected dependencies and configuration.
import type { PodLike } from "../pod/pod-like.ts";
import type { ContainerStats, PodStats, Summary, SummaryRequest } from "../stats/summary.ts";
import type { Clock } from "../clock.ts";
import type { NotifierTarget } from "./notifier-thresholds.ts";
import type { FsLayout } from "./rank.ts";
import type { CycleReport } from "./state.ts";
import type { Threshold } from "./threshold.ts";

export interface EvictionConfig {
  thresholds: Threshold[];
  /** evictionPressureTransitionPeriod (default 5m); 0 means no condition is ever reported. */
  pressureTransitionPeriodMs: number;
  /** evictionMaxPodGracePeriod (default 0); a negative value is passed through, as upstream. */
  maxPodGracePeriodSeconds: number;
  /** localStorageCapacityIsolation (default true): ephemeral-storage limit evictions. */
  localStorageCapacityIsolation: boolean;
  /** bunlet extension (default false): rank and evict static pods like other pods. */
  evictStaticPods: boolean;
  /** Feature gate KubeletSeparateDiskGC (beta, on by default since v1.31). */
  separateDiskGC?: boolean;
}

export const DEFAULT_PRESSURE_TRANSITION_PERIOD_MS = 5 * 60_000;

export function evictionConfig(partial: Partial<EvictionConfig> & { thresholds: Threshold[] }): EvictionConfig {
  return {
    pressureTransitionPeriodMs: DEFAULT_PRESSURE_TRANSITION_PERIOD_MS,
    maxPodGracePeriodSeconds: 0,
    localStorageCapacityIsolation: true,
    evictStaticPods: false,
    ...partial,
  };
}

export interface KillStatus {
  /** Always "Evicted". */
  reason: string;
  message: string;
  annotations: Record<string, string>;
  /** Pod condition to add with the Failed status; upstream sets it for threshold evictions only. */
  condition?: { type: "DisruptionTarget"; status: "True"; reason: "TerminationByKubelet"; message: string };
}

/** Kills a pod with the given grace override; resolves when its containers are stopped. */
export type KillPodFunc = (pod: PodLike, gracePeriodOverrideSeconds: number, status: KillStatus) => Promise<void>;

export interface EvictionEvent {
  object: { kind: "Node" | "Pod"; name: string; namespace?: string; uid?: string };
  type: "Normal" | "Warning";
  reason: string;
  message: string;
  annotations?: Record<string, string>;
}

export type EventRecorder = (e: EvictionEvent) => void;

export interface ReclaimFuncs {
  /** Container GC: delete all dead containers. */
  deleteUnusedContainers?: () => Promise<void>;
  /** Image GC: delete images no container uses. */
  deleteUnusedImages?: () => Promise<void>;
}

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
  debug(msg: string): void;
}

export interface EvictionDeps {
  config: EvictionConfig;
  clock: Clock;
  /**
   * A fresh stats summary (upstream asks for an update on every sync). `memoryOnly`: a kernel
   * memcg event's cycle, which only needs memory fresh; the rest may come from the last full
   * summary with its old timestamps (see stats/summary-provider.ts).
   */
  summary: (req?: SummaryRequest) => Promise<Summary>;
  activePods: () => PodLike[];
  /** The pod's containers with their memory read now (stats/summary-provider.ts containerMemory), for a memory eviction's message. */
  containerMemory?: (pod: PodLike) => ContainerStats[] | undefined;
  killPod: KillPodFunc;
  reclaim?: ReclaimFuncs;
  recorder?: EventRecorder;
  /** Layout detection; default: detectFsLayout on the first summary. */
  fsLayout?: (summary: Summary) => FsLayout | Promise<FsLayout>;
  /** True when an evicted pod's resources are released; default: it left activePods. */
  podCleanedUp?: (pod: PodLike) => boolean;
  /** Called at most every 10 s with where to arm the memcg notifiers (KERNEL owns the fds). */
  onNotifierTargets?: (targets: NotifierTarget[]) => void;
  logger?: Logger;
  nodeName?: string;
  /**
   * Asked right before a cycle evicts: false when the kernel notifier thread is evicting or has
   * evicted on its own plan (kernel/fast-evict.ts) — its eviction is recorded next, and this cycle
   * evicts nobody. True also cancels that plan, so the thread cannot evict beside this cycle.
   */
  mayEvict?: () => boolean;
  /**
   * A pod as the summary provider's last full summary saw it, no I/O (its containers name their usage
   * in the eviction message). The notifier thread's eviction is recorded synchronously from it
   * (fast-adopt.ts): the manager's own last summary can predate a pod that started since its cycle.
   */
  lastPodStats?: (uid: string) => PodStats | undefined;
  /** Called after every cycle (e.g. the --eviction-trace JSON-lines writer; see trace.ts). */
  onCycle?: (report: CycleReport) => void;
}
