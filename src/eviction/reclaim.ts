// Reclaiming a starved resource, the steps of upstream eviction_manager.go synchronize between the
// thresholds and the ranking: which threshold is reclaimed (getReclaimableThreshold), the event that says so,
// and node-level reclaim — container and image GC — re-checked against every threshold (reclaimNodeLevelResources).
import { kv } from "../log.ts";
import type { Summary } from "../stats/summary.ts";
import { fmtObs, type Cycle } from "./cycle.ts";
import { reclaimStepsFor, type ReclaimStep } from "./fs-layout.ts";
import { formatThresholdAmount } from "./message.ts";
import { makeSignalObservations } from "./observations.ts";
import { sortThresholdsForReclaim } from "./policy.ts";
import type { FsLayout } from "./rank.ts";
import { SIGNAL_RESOURCE, type StarvedResource } from "./signals.ts";
import { isHardThreshold, thresholdsMet, type Observations, type Threshold } from "./threshold.ts";

/** The threshold a cycle reclaims, and what its later steps print and judge with. */
export interface ReclaimChoice {
  threshold: Threshold;
  /** Every fresh actionable threshold in reclaim order (the eviction message names them all). */
  sorted: Threshold[];
  resource: StarvedResource;
  observations: Observations;
  observedText: string | undefined;
  thresholdText: string;
  /**
   * Disk pressure ranks by volume usage, which the summary serves from a cache of directory walks (up to
   * 10 s old; upstream's is volumeStatsAggPeriod, 1 min): a pod that filled its emptyDir since could rank
   * as empty, and a quiet pod be evicted in its place. So the ranking's summary walks afresh.
   */
  freshDisk: boolean;
}

/** Step 17 (upstream byEvictionPriority + getReclaimableThreshold): the first fresh threshold in reclaim order. */
export function chooseThresholdToReclaim({ report }: Cycle, fresh: readonly Threshold[], observations: Observations): ReclaimChoice {
  const sorted = sortThresholdsForReclaim(fresh);
  const threshold = sorted[0]!;
  const resource = SIGNAL_RESOURCE[threshold.signal];
  report.reclaim = { threshold, signal: threshold.signal, resource };
  const obs = observations[threshold.signal]!;
  return {
    threshold,
    sorted,
    resource,
    observations,
    thresholdText: formatThresholdAmount(threshold, obs.capacity),
    observedText: fmtObs(threshold.signal, obs.available),
    freshDisk: resource === "ephemeral-storage" || resource === "inodes",
  };
}

/** Step 18: the EvictionThresholdMet event on the node, and the line that says what is reclaimed. */
export function announceReclaim({ deps, logger }: Cycle, { threshold, resource, observedText, thresholdText }: ReclaimChoice): void {
  deps.recorder?.({
    object: { kind: "Node", name: deps.nodeName ?? "" },
    type: "Warning",
    reason: "EvictionThresholdMet",
    message: `Attempting to reclaim ${resource}`,
  });
  logger.info(
    `attempting to reclaim ${kv({ resource, signal: threshold.signal, observed: observedText, threshold: thresholdText, kind: isHardThreshold(threshold) ? "hard" : "soft" })}`,
  );
}

export interface NodeReclaimOutcome {
  /** The reclaim functions the signal calls for (none: nothing was done or re-checked). */
  steps: ReclaimStep[];
  /** No threshold is met any more, min-reclaim included: nobody is evicted. */
  relieved: boolean;
  /** The summary taken after reclaim (volumes walked afresh under disk pressure); undefined when it failed. */
  summary?: Summary;
}

/** Step 19 (upstream reclaimNodeLevelResources): the signal's reclaim functions, then every threshold re-checked with min-reclaim. */
export async function reclaimNodeLevelResources(cycle: Cycle, choice: ReclaimChoice, layout: FsLayout): Promise<NodeReclaimOutcome> {
  const { deps, state, logger, report } = cycle;
  const steps = reclaimStepsFor(choice.threshold.signal, layout);
  if (steps.length === 0) return { steps, relieved: false };
  for (const step of steps) {
    const fn = deps.reclaim?.[step];
    if (!fn) continue;
    try {
      await fn();
    } catch (e) {
      logger.warn(`node-level reclaim failed ${kv({ step, error: (e as Error).message })}`);
    }
  }
  let relieved = false;
  let summary: Summary | undefined;
  try {
    summary = await deps.summary(choice.freshDisk ? { freshVolumes: true } : undefined);
    const after = makeSignalObservations(summary).observations;
    const still = thresholdsMet(state.thresholds, after, true);
    relieved = still.length === 0;
    logger.info(`node-level reclaim done ${kv({ steps: steps.join(","), relieved, stillMet: still.map((t) => t.signal).join(",") || undefined })}`);
  } catch (e) {
    logger.warn(`summary after node-level reclaim failed ${kv({ error: (e as Error).message })}`);
  }
  report.nodeReclaim = { steps, relieved };
  return { steps, relieved, summary };
}
