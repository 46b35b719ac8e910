// One eviction cycle's context record: what upstream's managerImpl.synchronize reads from the manager
// (config, clock, recorder, state) and the report it fills, handed to each step of synchronize.ts, reclaim.ts
// and evict.ts instead of a captured scope; plus the small helpers every step shares.
import { log as defaultLog } from "../log.ts";
import type { Summary } from "../stats/summary.ts";
import { formatAmount } from "./message.ts";
import { podStatsByUid } from "./observations.ts";
import type { StatsFunc } from "./rank.ts";
import { signalIsCount, type Signal } from "./signals.ts";
import type { CycleReport, EvictionState } from "./state.ts";
import type { EvictionConfig, EvictionDeps, Logger } from "./types.ts";

export interface Cycle {
  deps: EvictionDeps;
  state: EvictionState;
  config: EvictionConfig;
  logger: Logger;
  /** Clock ms at the cycle's start: every grace and age of the cycle is measured from it. */
  now: number;
  /** A kernel memcg event's cycle (memory-only summary). */
  memoryOnly: boolean;
  report: CycleReport;
}

export function newCycle(deps: EvictionDeps, state: EvictionState, memoryOnly: boolean): Cycle {
  const now = deps.clock.now();
  const report: CycleReport = {
    timeMs: now,
    observations: {},
    thresholds: state.thresholds,
    met: [],
    actionable: [],
    actionableFresh: [],
    conditions: state.nodeConditions,
    reclaim: null,
    nodeReclaim: null,
    ranked: [],
    evicted: [],
  };
  return { deps, state, config: deps.config, logger: deps.logger ?? defaultLog, now, memoryOnly, report };
}

/** The cycle's report, kept as the state's last one. */
export function finish({ state, report }: Cycle): CycleReport {
  report.thresholds = state.thresholds;
  state.lastReport = report;
  return report;
}

/** A failed step: the report says why, one error line, and the cycle ends (not kept as the last report). */
export function failed({ report, logger }: Cycle, error: string): CycleReport {
  report.error = error;
  logger.error(`eviction manager: ${report.error}`);
  return report;
}

/** The notifier thread's plan gives way (deps.mayEvict); when it already evicted, this cycle does not. */
export function mayEvictNow({ deps, report }: Cycle): boolean {
  if (!deps.mayEvict || deps.mayEvict()) return true;
  report.note = "the kernel notifier thread is evicting on its plan; its eviction is recorded next";
  return false;
}

/** A pod's stats in the summary, by UID (upstream makeSignalObservations' statsFunc). */
export function podStatsFunc(summary: Summary): StatsFunc {
  const statsByUid = podStatsByUid(summary);
  return (p) => (p.metadata.uid ? statsByUid.get(p.metadata.uid) : undefined);
}

/** An observed amount as the log lines print it (bytes, or a count for pids and inodes). */
export const fmtObs = (signal: Signal, n: number | undefined) => (n === undefined ? undefined : formatAmount(n, signalIsCount(signal)));
