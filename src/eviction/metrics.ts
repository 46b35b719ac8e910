// Prometheus metrics of the eviction manager, with the kubelet's names: kubelet_evictions
// {eviction_signal} (threshold signals, or emptydirfs.limit / ephemeralpodfs.limit /
// ephemeralcontainerfs.limit for local-storage evictions) and kubelet_eviction_stats_age_seconds
// {eviction_signal}, observed for every actionable threshold on fresh stats, as upstream. Returns an onCycle hook; the composition root owns the registry.
import type { MemoryNotifiers } from "../kernel/index.ts";
import { DEFAULT_BUCKETS, type Registry } from "../server/metrics.ts";
import type { CycleReport } from "./synchronize.ts";

/**
 * `signals`: the configured threshold signals, whose series start at 0 (a counter born at its first
 * eviction would hide that eviction from rate() and increase()).
 */
export function evictionMetrics(
  registry: Registry,
  signals: readonly string[] = [],
  initialCounts: Readonly<Record<string, number>> = {},
): (report: CycleReport) => void {
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
  for (const eviction_signal of signals) {
    evictions.inc({ eviction_signal }, 0);
    statsAge.seed({ eviction_signal });
  }
  // Counts kept across restarts (eviction/record-file.ts): the counter continues, it does not reset.
  for (const [eviction_signal, n] of Object.entries(initialCounts)) if (n > 0) evictions.inc({ eviction_signal }, n);
  return (report) => {
    for (const e of report.evicted ?? []) if (!e.escalated) evictions.inc({ eviction_signal: e.signal });
    for (const [signal, age] of Object.entries(report.statsAgeSeconds ?? {})) statsAge.observe(age!, { eviction_signal: signal });
  };
}

/**
 * bunlet_node_pressure_condition{condition}: 1 while the eviction manager reports the node condition
 * (MemoryPressure, DiskPressure, PIDPressure), 0 otherwise. Upstream kubelets leave node conditions to
 * kube-state-metrics (kube_node_status_condition); a standalone node has no API object to read them from.
 */
export function nodeConditionMetrics(registry: Registry, conditions: () => readonly string[]): void {
  registry.collect(() => {
    const now = new Set(conditions());
    return [
      {
        name: "bunlet_node_pressure_condition",
        help: "1 while the node reports the pressure condition (MemoryPressure, DiskPressure, PIDPressure), else 0",
        type: "gauge",
        samples: ["MemoryPressure", "DiskPressure", "PIDPressure"].map((condition) => ({ labels: { condition }, value: now.has(condition) ? 1 : 0 })),
      },
    ];
  });
}

/**
 * bunlet's own kernel-notifier series, for the "notifier stalled" alert of examples/monitoring:
 * bunlet_kernel_notifier_sources (kernel sources armed on the epoll worker; 0 while kernel notification is
 * on means the node is watched only by the 10 s loop) and bunlet_kernel_notifier_events_total{notifier}.
 */
export function notifierMetrics(metrics: Registry, notifiers: () => MemoryNotifiers | undefined) {
  metrics.collect(() => {
    const hub = notifiers()?.hub;
    return [
      {
        name: "bunlet_kernel_notifier_sources",
        help: "Kernel notification sources (memcg thresholds, PSI triggers, memory.events) armed on the notifier thread",
        type: "gauge",
        samples: [{ value: hub && !hub.closed ? hub.size : 0 }],
      },
    ];
  });
  const events = metrics.counter({
    name: "bunlet_kernel_notifier_events_total",
    help: "Kernel notifications that triggered an eviction cycle, by notifier (memcg_threshold, psi)",
    labelNames: ["notifier"],
  });
  for (const notifier of ["memcg_threshold", "psi"]) events.inc({ notifier }, 0);
  return events;
}
