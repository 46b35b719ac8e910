// scripts/bench/api.ts: the kubelet API under load over real HTTP (plain, loopback), with a
// synthetic Summary of N pods × 2 containers:
//   - latency p50/p99 of /stats/summary and /metrics/resource (serialisation + transport; the
//     cost of collecting the stats themselves is scripts/bench/summary.ts's figure),
//   - RSS before/after,
//   - /containerLogs throughput on a CRI log file vs reading the file directly.
//   bun scripts/bench/api.ts [pods=110] [requests=300] [logMiB=64]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kubeletRoutes } from "../../src/server/endpoints.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { createRouter } from "../../src/server/router.ts";
import type { Summary } from "../../src/stats/summary.ts";

const N = Number(process.argv[2] ?? 110);
const REQUESTS = Number(process.argv[3] ?? 300);
const LOG_MIB = Number(process.argv[4] ?? 64);
const T = new Date().toISOString();
const cpu = (n: number) => ({ time: T, usageCoreNanoSeconds: n * 1e9, usageNanoCores: n * 1e6 });
const mem = (n: number) => ({ time: T, workingSetBytes: n * 1e6, usageBytes: n * 2e6, rssBytes: n * 1e6, availableBytes: 1e9 });
const summary: Summary = {
  node: { nodeName: "bench", cpu: cpu(1000), memory: mem(4000) },
  pods: Array.from({ length: N }, (_, i) => ({
    podRef: { name: `pod-${i}`, namespace: "bench", uid: `uid-${i}` },
    startTime: T,
    cpu: cpu(i),
    memory: mem(i),
    containers: ["app", "sidecar"].map((name) => ({ name, startTime: T, cpu: cpu(i / 2), memory: mem(i / 2) })),
  })),
};

const dir = mkdtempSync(join(tmpdir(), "bunlet-bench-api-"));
const pods = [{ metadata: { namespace: "bench", name: "logger", uid: "u" }, spec: { containers: [{ name: "c" }] } }];
const logDir = join(dir, "bench_logger_u", "c");
mkdirSync(logDir, { recursive: true });
const line = `${T} stdout F ${"x".repeat(200)}\n`;
writeFileSync(join(logDir, "0.log"), line.repeat(Math.ceil((LOG_MIB * 1048576) / line.length)));

const fetchFn = createRouter(
  kubeletRoutes({ getPods: () => pods, getSummary: () => summary, metrics: createRegistry(), podLogsDir: dir }, { debuggingHandlers: true }),
);
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: fetchFn });
const base = `http://127.0.0.1:${server.port}`;
const pct = (xs: number[], p: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const mib = (b: number) => (b / 1048576).toFixed(1);

try {
  const rss0 = process.memoryUsage().rss;
  for (const path of ["/stats/summary", "/metrics/resource"]) {
    const ms: number[] = [];
    let bytes = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      bytes = (await (await fetch(base + path)).arrayBuffer()).byteLength;
      ms.push(performance.now() - t0);
    }
    console.log(`${path.padEnd(18)} pods=${N} body=${(bytes / 1024).toFixed(0)}KiB p50=${pct(ms, 50).toFixed(2)}ms p99=${pct(ms, 99).toFixed(2)}ms`);
  }
  console.log(`rss before=${mib(rss0)}MiB after=${mib(process.memoryUsage().rss)}MiB`);

  let t0 = performance.now();
  const direct = (await Bun.file(join(logDir, "0.log")).arrayBuffer()).byteLength;
  const directS = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const served = (await (await fetch(`${base}/containerLogs/bench/logger/c`)).arrayBuffer()).byteLength;
  const servedS = (performance.now() - t0) / 1000;
  const rate = (b: number, s: number) => b / 1048576 / s;
  console.log(
    `/containerLogs file=${mib(direct)}MiB decoded=${mib(served)}MiB: ${rate(direct, servedS).toFixed(0)} MB/s of log file vs direct read ${rate(direct, directS).toFixed(0)} MB/s (ratio ${(directS / servedS).toFixed(2)}x)`,
  );
} finally {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
}
