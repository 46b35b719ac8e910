// KubeletConfiguration eviction fields → EvictionConfig. The composition root (agent.ts) and the
// `bunlet eviction` commands both build the manager's configuration through this one function.
import { parseDuration } from "../config/duration.ts";
import { parseThresholdConfig, ThresholdParseError } from "./thresholds-parse.ts";
import { DEFAULT_PRESSURE_TRANSITION_PERIOD_MS, type EvictionConfig } from "./types.ts";

/** The KubeletConfiguration fields eviction reads (v1beta1 names; durations as Go strings). */
export interface EvictionKubeletFields {
  evictionHard?: Record<string, string>;
  evictionSoft?: Record<string, string>;
  evictionSoftGracePeriod?: Record<string, string>;
  evictionMinimumReclaim?: Record<string, string>;
  evictionPressureTransitionPeriod?: string;
  evictionMaxPodGracePeriod?: number;
  mergeDefaultEvictionSettings?: boolean;
  enforceNodeAllocatable?: string[];
  localStorageCapacityIsolation?: boolean;
  evictStaticPods?: boolean;
  featureGates?: Record<string, boolean>;
}

export interface EvictionSources {
  hardSource?: string;
  softSource?: string;
  gracePeriodSource?: string;
  minReclaimSource?: string;
  transitionSource?: string;
}

/** Throws ThresholdParseError naming the field (or flag, via `sources`) and value. */
export function evictionConfigFromKubelet(c: EvictionKubeletFields, sources: EvictionSources = {}): EvictionConfig {
  const thresholds = parseThresholdConfig({
    evictionHard: c.evictionHard,
    evictionSoft: c.evictionSoft,
    evictionSoftGracePeriod: c.evictionSoftGracePeriod,
    evictionMinimumReclaim: c.evictionMinimumReclaim,
    enforceNodeAllocatable: c.enforceNodeAllocatable ?? ["pods"],
    mergeDefaultEvictionSettings: c.mergeDefaultEvictionSettings,
    ...sources,
  });
  let pressureTransitionPeriodMs = DEFAULT_PRESSURE_TRANSITION_PERIOD_MS;
  if (c.evictionPressureTransitionPeriod !== undefined) {
    try {
      pressureTransitionPeriodMs = parseDuration(c.evictionPressureTransitionPeriod) / 1e6;
    } catch (e) {
      const src = sources.transitionSource ?? "evictionPressureTransitionPeriod";
      throw new ThresholdParseError(src, "evictionPressureTransitionPeriod", c.evictionPressureTransitionPeriod, (e as Error).message);
    }
  }
  return {
    thresholds,
    pressureTransitionPeriodMs,
    maxPodGracePeriodSeconds: c.evictionMaxPodGracePeriod ?? 0,
    localStorageCapacityIsolation: c.localStorageCapacityIsolation ?? true,
    evictStaticPods: c.evictStaticPods ?? false,
    separateDiskGC: c.featureGates?.KubeletSeparateDiskGC ?? true,
  };
}
