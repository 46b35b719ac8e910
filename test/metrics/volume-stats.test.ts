import { describe, expect, test } from "bun:test";
import { volumeStatsMetrics } from "../../src/metrics/volume-stats.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import type { VolumeStats } from "../../src/stats/summary.ts";

describe("kubelet_volume_stats_*", () => {
  test("one sample per claim (however many pods mount it), labelled by namespace and claim; a figure the plugin lacks left out", () => {
    const registry = createRegistry();
    const claim = (name: string, f: Partial<VolumeStats>): VolumeStats => ({ name: "v", time: "t", pvcRef: { name, namespace: "team" }, ...f });
    let stats: VolumeStats[] = [];
    volumeStatsMetrics(registry, () => stats);
    stats = [
      claim("data", { capacityBytes: 1000, availableBytes: 600, usedBytes: 400, inodes: 10, inodesFree: 7, inodesUsed: 3 }),
      claim("data", { capacityBytes: 1000, availableBytes: 600, usedBytes: 400, inodes: 10, inodesFree: 7, inodesUsed: 3 }),
      claim("bytes-only", { capacityBytes: 50 }),
    ];
    const text = registry.render();
    expect(text).toContain('kubelet_volume_stats_capacity_bytes{namespace="team",persistentvolumeclaim="data"} 1000');
    expect(text).toContain('kubelet_volume_stats_used_bytes{namespace="team",persistentvolumeclaim="data"} 400');
    expect(text).toContain('kubelet_volume_stats_inodes_free{namespace="team",persistentvolumeclaim="data"} 7');
    expect(text).toContain('kubelet_volume_stats_capacity_bytes{namespace="team",persistentvolumeclaim="bytes-only"} 50');
    expect(text).not.toContain('kubelet_volume_stats_inodes{namespace="team",persistentvolumeclaim="bytes-only"}');
    expect(text.match(/kubelet_volume_stats_available_bytes\{/g)).toHaveLength(1);
  });
});
