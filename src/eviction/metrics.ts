// Prometheus metrics of the eviction manager, with the kubelet's names: kubelet_evictions
// {eviction_signal} (threshold signals, or emptydirfs.limit / ephemeralpodfs.limit /
// ephemeralcontainerfs.limit for local-storage evictions) and kubelet_eviction_stats_age_seconds
// {eviction_signal}, observed for every actionable threshold on fresh stats, as upstream. Returns an onCycle hook; the composition root owns the registry.
import { DEFAULT_BUCKETS, type Registry } from "../server/metrics.ts";
import type { CycleReport } from "./synchronize.ts";

export function evictionMetrics(registry: Registry): (report: CycleReport) => void {
  const evictions = registry.counter({
    name: "kubelet_evictions",
    help: "Cumulative number of pod evictions by eviction signal",
    labelNames: ["eviction_signal"],
  });
  const statsAge = registry.histogram({
    name: "kubelet_eviction_stats_age_seconds",
    help: "Time between when stats are collected, and when pod is evicted based on those stats by eviction signal",
    labelNames: ["eviction_signal"],
    buckets: DEFAULT_BUCKETS, // upstream: metrics.DefBuckets
  });
  return (report) => {
    for (const e of report.evicted ?? []) if (!e.escalated) evictions.inc({ eviction_signal: e.signal });
    for (const [signal, age] of Object.entries(report.statsAgeSeconds ?? {})) statsAge.observe(age!, { eviction_signal: signal });
  };
}
