// scripts/bench/metrics.ts: scrape latency and size of /metrics and /metrics/cadvisor for a node of
// N pods (default 110, the kubelet's maxPods), over HTTP through the kubelet's own route handlers,
// plus the cardinality of /metrics at 10 and N pods (upstream's rule: no per-pod labels on kubelet_*
// histograms, so /metrics does not grow with pods).
// The pods are a FAKE runtime: the metrics are fed through the hooks the agent wires (pod workers,
// PLEG, prober, CRI and cgroup decorators) and /metrics/cadvisor reads a fake cgroup v1 tree, /proc
// and CRI listing on disk (test/support/metrics-node.ts) — 110 real containers would measure
// containerd, not the scrape. Prints p50/p90/max per endpoint and the ratio to a 100 ms budget
// (Prometheus' kubelet scrape interval is 30 s with a 10 s timeout in kube-prometheus).
//   bun scripts/bench/metrics.ts [pods=110]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kubeletRoutes } from "../../src/server/endpoints.ts";
import { fakeCadvisorNode, fakePods, populateKubeletMetrics } from "../../test/support/metrics-node.ts";
import { parsePromText } from "../../test/support/prom-text.ts";

const N = Number(process.argv[2] ?? 110);
const BUDGET_MS = 100;
const ROUNDS = 200;
const root = mkdtempSync(join(tmpdir(), `bunlet-bench-metrics-${process.pid}-`));

function quantiles(times: number[]) {
  const s = [...times].sort((a, b) => a - b);
  const q = (f: number) => s[Math.min(s.length - 1, Math.floor(f * s.length))]!;
  return { p50: q(0.5), p90: q(0.9), max: q(1) };
}

try {
  const pods = fakePods(N);
  const { metrics, probes } = await populateKubeletMetrics(pods);
  const routes = kubeletRoutes({ getPods: () => pods, metrics, probeMetrics: probes, getCadvisor: fakeCadvisorNode(root, pods) }, { debuggingHandlers: false });
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const url = new URL(req.url);
      const route = routes.find((r) => r.path === url.pathname);
      return route ? route.handler(req, url) : new Response("not found", { status: 404 });
    },
  });
  try {
    console.log(
      `node of ${N} pods (fake runtime, 2 containers each), ${ROUNDS} scrapes per endpoint over HTTP; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
    );
    for (const path of ["/metrics", "/metrics/probes", "/metrics/cadvisor"]) {
      const url = `http://127.0.0.1:${server.port}${path}`;
      let body = await (await fetch(url)).text(); // warm-up
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const t = performance.now();
        body = await (await fetch(url)).text();
        times.push(performance.now() - t);
      }
      const fams = parsePromText(body);
      const series = [...fams.values()].reduce((n, f) => n + f.samples.length, 0);
      const { p50, p90, max } = quantiles(times);
      console.log(
        `${path.padEnd(18)} ${(body.length / 1024).toFixed(1).padStart(7)} KiB  ${String(fams.size).padStart(3)} families ${String(series).padStart(5)} samples  p50 ${p50.toFixed(2)} ms  p90 ${p90.toFixed(2)} ms  max ${max.toFixed(2)} ms  p50/${BUDGET_MS} ms = ${(p50 / BUDGET_MS).toFixed(3)}`,
      );
    }
  } finally {
    server.stop(true);
  }

  // Cardinality: /metrics at 10 and N pods.
  const count = async (n: number) => {
    const fams = parsePromText((await populateKubeletMetrics(fakePods(n))).metrics.render());
    return new Map(
      [...fams.values()].map((f) => [f.name, { type: f.type, series: f.samples.length, labels: new Set(f.samples.flatMap((s) => Object.keys(s.labels))) }]),
    );
  };
  const [small, big] = [await count(10), await count(N)];
  const perPod = ["pod", "namespace", "uid", "pod_uid", "container"];
  const histograms = [...big].filter(([name, f]) => name.startsWith("kubelet_") && f.type === "histogram");
  const offenders = histograms.flatMap(([name, f]) => perPod.filter((l) => f.labels.has(l)).map((l) => `${name}{${l}}`));
  const grown = [...big]
    .filter(([name, f]) => !name.startsWith("process_") && f.series !== small.get(name)?.series)
    .map(([name, f]) => `${name} ${small.get(name)?.series} → ${f.series}`);
  console.log(
    `cardinality: ${histograms.length} kubelet_* histograms, per-pod labels on them: ${offenders.length ? offenders.join(", ") : "none"}; /metrics samples at 10 pods ${[...small.values()].reduce((n, f) => n + f.series, 0)}, at ${N} pods ${[...big.values()].reduce((n, f) => n + f.series, 0)}; families that grew: ${grown.length ? grown.join(", ") : "none"}`,
  );
  if (offenders.length) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
