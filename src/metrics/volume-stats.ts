// The kubelet's volume stats series (upstream pkg/kubelet/metrics/collectors/volume_stats.go):
// kubelet_volume_stats_{capacity_bytes,available_bytes,used_bytes,inodes,inodes_free,inodes_used}
// {namespace,persistentvolumeclaim} for each claim's volume with figures, one sample per claim however
// many pods mount it, read at scrape time from the volume stat calculator's latest figures.
import type { Registry } from "../server/metrics.ts";
import type { VolumeStats } from "../stats/summary.ts";

const SERIES: [name: string, help: string, field: keyof VolumeStats][] = [
  ["kubelet_volume_stats_capacity_bytes", "Capacity in bytes of the volume", "capacityBytes"],
  ["kubelet_volume_stats_available_bytes", "Number of available bytes in the volume", "availableBytes"],
  ["kubelet_volume_stats_used_bytes", "Number of used bytes in the volume", "usedBytes"],
  ["kubelet_volume_stats_inodes", "Maximum number of inodes in the volume", "inodes"],
  ["kubelet_volume_stats_inodes_free", "Number of free inodes in the volume", "inodesFree"],
  ["kubelet_volume_stats_inodes_used", "Number of used inodes in the volume", "inodesUsed"],
];

export function volumeStatsMetrics(registry: Registry, claimStats: () => VolumeStats[]): void {
  registry.collect(() => {
    const byClaim = new Map<string, VolumeStats>();
    for (const s of claimStats()) if (s.pvcRef) byClaim.set(`${s.pvcRef.namespace}/${s.pvcRef.name}`, s);
    return SERIES.map(([name, help, field]) => ({
      name,
      help,
      type: "gauge" as const,
      samples: [...byClaim.values()].flatMap((s) =>
        typeof s[field] === "number" ? [{ labels: { namespace: s.pvcRef!.namespace, persistentvolumeclaim: s.pvcRef!.name }, value: s[field] as number }] : [],
      ),
    }));
  });
}
