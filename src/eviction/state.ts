// The eviction manager's state between cycles and the report of one cycle (docs/eviction-contract.md#one-synchronize).
import type { PodLike } from "../pod/pod-like.ts";
import type { Summary } from "../stats/summary.ts";
import type { FsLayout, RankedPod } from "./rank.ts";
import type { NodeConditionType, Signal, StarvedResource } from "./signals.ts";
import type { Observations, Threshold } from "./threshold.ts";

/** Hard and local-storage evictions use a 1 s grace override (upstream immediateEvictionGracePeriodSeconds, v1.31+). */
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1;
/** Upstream waits up to 30 s for an evicted pod's cleanup before the next sync. */
export const POD_CLEANUP_TIMEOUT_MS = 30_000;
export const NOTIFIER_REFRESH_INTERVAL_MS = 10_000;

export interface InFlightKill {
  pod: PodLike;
  uid: string;
  gracePeriodSeconds: number;
  startedAtMs: number;
  settled: boolean;
  signal: string;
}

export interface EvictionRecord {
  pod: PodLike;
  signal: string;
  gracePeriodSeconds: number;
  message: string;
  annotations: Record<string, string>;
  /** A running softer kill of the same pod was re-issued with a shorter grace period. */
  escalated?: boolean;
}

export interface CycleReport {
  timeMs: number;
  /** When the cycle had its summary (clock ms): the trace splits the decision time at it. */
  statsAtMs?: number;
  observations: Observations;
  thresholds: Threshold[];
  /** Met this sync, before grace periods, with min-reclaim hysteresis (steps 6–7). */
  met: Threshold[];
  /** Grace periods satisfied (step 12). */
  actionable: Threshold[];
  /** Actionable and on fresh stats (step 14). */
  actionableFresh: Threshold[];
  conditions: NodeConditionType[];
  reclaim: { threshold: Threshold; signal: Signal; resource: StarvedResource } | null;
  nodeReclaim: { steps: string[]; relieved: boolean } | null;
  ranked: RankedPod[];
  evicted: EvictionRecord[];
  /** Age of the stats behind each actionable (fresh) threshold, in seconds. */
  statsAgeSeconds?: Partial<Record<Signal, number>>;
  /** Why nothing was evicted although a threshold was to be reclaimed. */
  note?: string;
  error?: string;
}

export interface EvictionState {
  initialized: boolean;
  layout: FsLayout | undefined;
  thresholds: Threshold[];
  nodeConditions: NodeConditionType[];
  firstObservedAt: Map<Threshold, number>;
  conditionLastObservedAt: Map<NodeConditionType, number>;
  thresholdsMet: Threshold[];
  lastObservations: Observations;
  lastSummary: Summary | undefined;
  lastNotifierRefreshMs: number | undefined;
  inFlight: Map<string, InFlightKill>;
  lastReport: CycleReport | undefined;
}

export function newEvictionState(thresholds: readonly Threshold[]): EvictionState {
  return {
    initialized: false,
    layout: undefined,
    thresholds: [...thresholds],
    nodeConditions: [],
    firstObservedAt: new Map(),
    conditionLastObservedAt: new Map(),
    thresholdsMet: [],
    lastObservations: {},
    lastSummary: undefined,
    lastNotifierRefreshMs: undefined,
    inFlight: new Map(),
    lastReport: undefined,
  };
}
