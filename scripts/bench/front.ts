// scripts/bench/front.ts: what serving the streaming endpoints costs the main port. The same routes
// served by startServers without them (the plain port: Bun.serve behind the connection-capping
// pipe, connections.ts) and with them (node:http on the accepted socket, src/server/http-on-socket.ts,
// the engine of the TLS port too), over loopback:
//   - latency p50/p99 of /healthz and of a 110-pod /stats/summary on a keep-alive connection,
//   - a new connection per request (the first-request look happens every time),
//   - throughput of a large body (/containerLogs of a CRI log file, MB/s).
//   bun scripts/bench/front.ts [requests=500] [logMiB=64]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServers } from "../../src/server/listen.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import type { StreamingHost } from "../../src/server/streaming/index.ts";
import type { Summary } from "../../src/stats/summary.ts";

const REQUESTS = Number(process.argv[2] ?? 500);
const LOG_MIB = Number(process.argv[3] ?? 64);
const T = new Date().toISOString();
const summary = {
  node: { nodeName: "bench", cpu: { time: T, usageNanoCores: 1 }, memory: { time: T, workingSetBytes: 1 } },
  pods: Array.from({ length: 110 }, (_, i) => ({
    podRef: { name: `pod-${i}`, namespace: "bench", uid: `uid-${i}` },
    startTime: T,
    cpu: { time: T, usageNanoCores: i },
    memory: { time: T, workingSetBytes: i },
    containers: [{ name: "app", startTime: T }],
  })),
} as unknown as Summary;

const dir = mkdtempSync(join(tmpdir(), "bunlet-bench-front-"));
const logDir = join(dir, "bench_logger_uid", "app");
mkdirSync(logDir, { recursive: true });
const line = `${T} stdout F ${"x".repeat(200)}\n`;
writeFileSync(join(logDir, "0.log"), line.repeat(Math.ceil((LOG_MIB << 20) / line.length)));
const pods = [{ metadata: { name: "logger", namespace: "bench", uid: "uid" }, spec: { containers: [{ name: "app" }] } }];
const noStreams = {} as StreamingHost;

const pct = (xs: number[], p: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function measure(streaming: boolean) {
  const running = await startServers(
    { address: "127.0.0.1", port: 0, readOnlyPort: 0, healthzBindAddress: "127.0.0.1", healthzPort: 0, unsafeLoopbackDebugHandlers: true },
    { getPods: () => pods, getSummary: () => summary, metrics: createRegistry(), podLogsDir: join(dir), streaming: streaming ? noStreams : undefined },
  );
  const base = running.get("main")!.url;
  const out: Record<string, string> = {};
  for (const path of ["/healthz", "/stats/summary"]) {
    for (let i = 0; i < 50; i++) await (await fetch(base + path)).arrayBuffer();
    const ms: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      await (await fetch(base + path)).arrayBuffer();
      ms.push(performance.now() - t0);
    }
    out[`${path} keep-alive p50/p99 ms`] = `${pct(ms, 50).toFixed(3)} / ${pct(ms, 99).toFixed(3)}`;
  }
  const fresh: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    await (await fetch(`${base}/healthz`, { keepalive: false, headers: { connection: "close" } })).arrayBuffer();
    fresh.push(performance.now() - t0);
  }
  out["/healthz new connection p50/p99 ms"] = `${pct(fresh, 50).toFixed(3)} / ${pct(fresh, 99).toFixed(3)}`;
  const t0 = performance.now();
  const bytes = (await (await fetch(`${base}/containerLogs/bench/logger/app`)).arrayBuffer()).byteLength;
  out["/containerLogs MB/s"] = (bytes / 1e6 / ((performance.now() - t0) / 1000)).toFixed(0);
  await running.stop();
  return out;
}

try {
  const direct = await measure(false);
  const fronted = await measure(true);
  console.log(`main port: Bun.serve (plain, piped) vs node:http on the socket (${REQUESTS} requests, ${LOG_MIB} MiB log)`);
  for (const k of Object.keys(direct)) console.log(`  ${k.padEnd(38)} Bun.serve ${direct[k]!.padEnd(18)} node:http ${fronted[k]}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
