// scripts/bench/summary.ts: cost of one /stats/summary for 110 pods on a fake v1
// cgroup tree (memory, cpuacct, pids per pod), two container log dirs and one 50-file emptyDir per
// pod. Prints first-call and steady-state figures and the ratio to the 50 ms budget.
//   bun scripts/bench/summary.ts [pods=110]
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createNodeStatsProvider } from "../../src/stats/node.ts";
import { createSummaryProvider } from "../../src/stats/summary-provider.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";

const N = Number(process.argv[2] ?? 110);
const BUDGET_MS = 50;
const root = mkdtempSync(join(tmpdir(), `bunlet-bench-summary-${process.pid}-`));
const put = (p: string, c: string) => {
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, c);
};
const realStat = readFileSync("/sys/fs/cgroup/memory/memory.stat", "utf8");
const pods: PodLike[] = [];
try {
  for (let i = 0; i < N; i++) {
    const uid = `uid-${i}`;
    const rel = `kubepods/besteffort/pod${uid}`;
    put(join(root, "cg/memory", rel, "memory.usage_in_bytes"), "1000000\n");
    put(join(root, "cg/memory", rel, "memory.stat"), realStat);
    put(join(root, "cg/memory", rel, "memory.limit_in_bytes"), "9223372036854771712\n");
    put(join(root, "cg/cpuacct", rel, "cpuacct.usage"), "1000\n");
    put(join(root, "cg/pids", rel, "pids.current"), "3\n");
    for (const c of ["app", "side"]) put(join(root, "logs", `ns_p${i}_${uid}`, c, "0.log"), "x".repeat(1000));
    for (let f = 0; f < 50; f++) put(join(root, "kubelet/pods", uid, "volumes/kubernetes.io~empty-dir/cache", `f${f}`), "y");
    pods.push({
      metadata: { name: `p${i}`, namespace: "ns", uid },
      spec: { containers: [{ name: "app" }, { name: "side" }], volumes: [{ name: "cache", emptyDir: {} }] },
    });
  }
  const node = createNodeStatsProvider({ rootDir: root });
  const p = createSummaryProvider({
    nodeName: "bench",
    nodeStats: node.nodeStats,
    activePods: () => pods,
    podCgroupPath: (x) => `kubepods/besteffort/pod${x.metadata.uid}`,
    rootDir: join(root, "kubelet"),
    podLogsDir: join(root, "logs"),
    cgroupMountRoot: join(root, "cg"),
  });
  const t0 = performance.now();
  await p.summary();
  const first = performance.now() - t0;
  const times: number[] = [];
  for (let i = 0; i < 100; i++) {
    const t = performance.now();
    await p.summary();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const q = (f: number) => times[Math.min(times.length - 1, Math.floor(f * times.length))]!;
  console.log(
    `summary of ${N} pods: first ${first.toFixed(1)} ms (volume walks, capped at 250 ms), p50 ${q(0.5).toFixed(1)} ms, p90 ${q(0.9).toFixed(1)} ms, max ${q(1).toFixed(1)} ms`,
  );
  console.log(
    `p50 / ${BUDGET_MS} ms budget = ${(q(0.5) / BUDGET_MS).toFixed(2)}; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
