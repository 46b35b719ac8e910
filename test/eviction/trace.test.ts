import { expect, test } from "bun:test";
import { createManualClock } from "../../src/manual-clock.ts";
import { createEvictionManager } from "../../src/eviction/manager.ts";
import type { CycleReport } from "../../src/eviction/synchronize.ts";
import { cycleRecord } from "../../src/eviction/trace.ts";
import { evictionConfig } from "../../src/eviction/types.ts";
import { silent } from "./harness.ts";
import { atMs, Gi, Mi, pod, podStats, summary, thresholds } from "./helpers.ts";

test("onCycle receives every report; cycleRecord is a JSON decision record with grace state", async () => {
  const hog = pod("hog");
  const reports: CycleReport[] = [];
  const clock = createManualClock(atMs(0));
  const ts = thresholds({
    evictionHard: { "memory.available": "100Mi" },
    evictionSoft: { "memory.available": "1Gi" },
    evictionSoftGracePeriod: { "memory.available": "1m" },
    enforceNodeAllocatable: [],
  });
  const m = createEvictionManager({
    config: evictionConfig({ thresholds: ts }),
    clock,
    logger: silent,
    summary: async () =>
      summary({ time: new Date(clock.now()).toISOString(), memAvailable: 50 * Mi, memWorkingSet: 3 * Gi, pods: [podStats(hog, { memory: Gi })] }),
    activePods: () => [hog],
    killPod: async () => {},
    onCycle: (r) => reports.push(r),
  });
  await m.synchronize();
  expect(reports).toHaveLength(1);
  const rec = JSON.parse(JSON.stringify(cycleRecord(reports[0]!, m.state())));
  expect(rec.time).toBe("2024-01-01T00:00:00.000Z");
  expect(rec.met).toEqual([
    { signal: "memory.available", kind: "hard", threshold: "100Mi", graceRemainingSeconds: 0, actionable: true },
    { signal: "memory.available", kind: "soft", threshold: "1Gi", graceRemainingSeconds: 60, actionable: false },
  ]);
  expect(rec.nodeConditions).toEqual(["MemoryPressure"]);
  expect(rec.reclaim).toEqual({ signal: "memory.available", resource: "memory" });
  expect(rec.ranked).toEqual([{ pod: "default/hog", priority: 0, usage: Gi, request: 0, exceedsRequest: true, statsFound: true }]);
  expect(rec.evicted).toEqual([
    { pod: "default/hog", signal: "memory.available", gracePeriodSeconds: 1, message: expect.stringContaining("Threshold quantity: 100Mi, available: 50Mi.") },
  ]);
});
