// Benchmark: one eviction synchronize (observe → met → rank → evict one) with 110 and 1,000 pods
// under hard memory pressure, median of N runs. Goal: ≤ 5 ms at 110 pods, ≤ 50 ms at 1,000, and
// roughly linear growth (ratio ≈ 9; ranking is n·log n).
//   bun scripts/bench/synchronize.ts [runs]
import { createManualClock } from "../../src/manual-clock.ts";
import { newEvictionState, synchronize } from "../../src/eviction/synchronize.ts";
import { parseThresholdConfig } from "../../src/eviction/thresholds-parse.ts";
import { evictionConfig, type EvictionDeps } from "../../src/eviction/types.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";
import type { PodStats, Summary } from "../../src/stats/summary.ts";

const Mi = 1024 * 1024;
const runs = Number(process.argv[2] ?? 200);

function node(n: number): { pods: PodLike[]; summary: (t: number) => Summary } {
  const pods: PodLike[] = [];
  for (let i = 0; i < n; i++) {
    pods.push({
      metadata: { name: `pod-${i}`, namespace: `ns-${i % 7}`, uid: `uid-${i}` },
      spec: {
        containers: [
          {
            name: "app",
            resources:
              i % 3 === 0
                ? {}
                : { requests: { memory: `${64 + (i % 5) * 32}Mi`, cpu: "100m" }, limits: i % 3 === 1 ? { memory: `${64 + (i % 5) * 32}Mi`, cpu: "100m" } : {} },
          },
          { name: "sidecar", resources: { requests: { memory: "16Mi" } } },
        ],
        priority: (i % 4) * 100,
        volumes: [{ name: "scratch", emptyDir: {} }],
      },
    });
  }
  const summary = (t: number): Summary => {
    const time = new Date(t).toISOString();
    const podStats: PodStats[] = pods.map((p, i) => ({
      podRef: { name: p.metadata.name, namespace: p.metadata.namespace!, uid: p.metadata.uid! },
      memory: { time, workingSetBytes: ((i * 7919) % 300) * Mi },
      containers: [
        {
          name: "app",
          memory: { time, workingSetBytes: ((i * 7919) % 280) * Mi },
          rootfs: { time, usedBytes: Mi, inodesUsed: 10 },
          logs: { time, usedBytes: Mi, inodesUsed: 1 },
        },
        { name: "sidecar", memory: { time, workingSetBytes: 20 * Mi } },
      ],
      volume: [{ name: "scratch", time, usedBytes: 5 * Mi, inodesUsed: 3 }],
      "ephemeral-storage": { time, usedBytes: 7 * Mi },
      process_stats: { process_count: i % 50 },
    }));
    return {
      node: {
        nodeName: "bench",
        memory: { time, availableBytes: 50 * Mi, workingSetBytes: 60_000 * Mi, usageBytes: 61_000 * Mi },
        systemContainers: [{ name: "pods", memory: { time, availableBytes: 5000 * Mi, workingSetBytes: 50_000 * Mi, usageBytes: 51_000 * Mi } }],
        fs: { time, availableBytes: 500_000 * Mi, capacityBytes: 1_000_000 * Mi, inodesFree: 9_000_000, inodes: 10_000_000 },
        runtime: { imageFs: { time, availableBytes: 500_000 * Mi, capacityBytes: 1_000_000 * Mi, inodesFree: 9_000_000, inodes: 10_000_000 } },
        rlimit: { time, maxpid: 4_194_304, curproc: 2000 },
      },
      pods: podStats,
    };
  };
  return { pods, summary };
}

async function bench(n: number): Promise<number> {
  const { pods, summary } = node(n);
  const thresholds = parseThresholdConfig({});
  const silent = { info() {}, warn() {}, error() {}, debug() {} };
  const samples: number[] = [];
  // One summary reused by every run (each run has fresh manager state), so building 1,000 pods'
  // stats objects — and collecting them — is not charged to synchronize.
  const s = summary(Date.UTC(2024, 0, 1));
  for (let r = 0; r < runs + 20; r++) {
    const clock = createManualClock(Date.UTC(2024, 0, 1));
    const deps: EvictionDeps = {
      config: evictionConfig({ thresholds }),
      clock,
      summary: async () => s,
      activePods: () => pods,
      killPod: async () => {},
      logger: silent,
    };
    const state = newEvictionState(thresholds);
    const t0 = performance.now();
    const report = await synchronize(deps, state);
    const dt = performance.now() - t0;
    if (report.evicted.length !== 1) throw new Error(`expected one eviction, got ${report.evicted.length}`);
    if (r >= 20) samples.push(dt); // warm-up discarded
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

const m110 = await bench(110);
const m1000 = await bench(1000);
console.log(`synchronize median over ${runs} runs (hard memory pressure, rank + evict one):`);
console.log(`  110 pods:   ${m110.toFixed(3)} ms  (goal ≤ 5 ms)${m110 <= 5 ? "" : "  ABOVE GOAL"}`);
console.log(`  1000 pods:  ${m1000.toFixed(3)} ms  (goal ≤ 50 ms)${m1000 <= 50 ? "" : "  ABOVE GOAL"}`);
console.log(`  growth 1000/110: ${(m1000 / m110).toFixed(2)}× for ${(1000 / 110).toFixed(2)}× pods (linear ≈ ${(1000 / 110).toFixed(1)})`);
