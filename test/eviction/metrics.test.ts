import { expect, test } from "bun:test";
import { evictionMetrics } from "../../src/eviction/metrics.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { harness } from "./harness.ts";
import { at, Gi, Mi, pod, podStats, summary, thresholds } from "./helpers.ts";

test("kubelet_evictions by signal (local-storage labels included) and stats age", async () => {
  const registry = createRegistry();
  const onCycle = evictionMetrics(registry);
  const hog = pod("hog");
  const ed = pod("ed", { volumes: [{ name: "v", emptyDir: { sizeLimit: "1Mi" } }] });
  const h = harness({ thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] }), pods: [hog, ed] });
  const s = summary({ time: at(0), memAvailable: 10 * Mi, pods: [podStats(ed, { volumes: [{ name: "v", used: 5 * Mi }] }, at(0))] });
  h.clock.set(Date.UTC(2024, 0, 1) + 3000);
  onCycle(await h.step(3, s)); // stats 3 s old; the emptyDir pod goes first, thresholds skipped
  onCycle(await h.step(13, summary({ time: at(12), memAvailable: 10 * Mi, pods: [podStats(hog, { memory: Gi }, at(12))] })));
  const text = registry.render();
  expect(text).toContain('kubelet_evictions{eviction_signal="emptydirfs.limit"} 1');
  expect(text).toContain('kubelet_evictions{eviction_signal="memory.available"} 1');
  expect(text).toContain('kubelet_eviction_stats_age_seconds_count{eviction_signal="memory.available"} 2');
  expect(text).toContain('kubelet_eviction_stats_age_seconds_sum{eviction_signal="memory.available"} 4');
});
