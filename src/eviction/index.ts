// Public surface of the eviction manager for the composition root (src/agent.ts) and tools.
export { createEvictionManager, EVICTION_MONITORING_PERIOD_MS, type EvictionManager } from "./manager.ts";
export { evictionConfigFromKubelet, type EvictionKubeletFields, type EvictionSources } from "./settings.ts";
export { parseThresholdConfig, ThresholdParseError, DEFAULT_EVICTION_HARD, type ThresholdConfigInput } from "./thresholds-parse.ts";
export { admitPod, type AdmitResult } from "./admission.ts";
export { notifierTargets, type NotifierTarget } from "./notifier-thresholds.ts";
export { cycleRecord, type CycleRecord } from "./trace.ts";
export type { CycleReport, EvictionRecord, EvictionState } from "./synchronize.ts";
export type { EvictionConfig, EvictionDeps, EventRecorder, EvictionEvent, KillPodFunc, KillStatus, ReclaimFuncs, Logger } from "./types.ts";
export type { Threshold, ThresholdValue, Observation, Observations } from "./threshold.ts";
export { NODE_CONDITION_TEXT, SIGNALS, type Signal, type NodeConditionType, type StarvedResource } from "./signals.ts";
export { evictionMetrics, nodeConditionMetrics } from "./metrics.ts";
export { explain, explainLive, renderExplain, type ExplainReport } from "./explain.ts";
