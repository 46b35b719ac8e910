// Operators' view: a real Prometheus (Debian's) scrapes the compiled bunlet every second while it runs
// pods with volumes and probes and evicts a memory hog through the kernel-notified fast path. Every
// panel query of the kubernetes-mixin kubelet dashboard, the kubelet parts of its alerts and every panel
// of examples/monitoring's bunlet dashboard must return data (standalone: all but rest_client_* and
// go_goroutines); the rules load into that Prometheus; /metrics/cadvisor has the probed container's series;
// promtool finds /metrics, /metrics/probes, /metrics/resource and /metrics/cadvisor clean.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isEvicted, MIB, printResult, runScenario, type Harness, type Scenario } from "../../scripts/chaos/lib.ts";
import { ROOT } from "../support/binary.ts";
import { useChaosContainerd } from "../support/chaos.ts";
import { canRunContainerd } from "../support/containerd.ts";
import { hasPrometheus, promtoolCheckMetrics, startPrometheus, type TestPrometheus } from "../support/prometheus.ts";
import { KUBELET_ALERT_INPUTS, KUBELET_DASHBOARD, type PanelQuery } from "../fixtures/monitoring/kubelet-mixin.ts";

const EXAMPLES = join(ROOT, "examples", "monitoring");
const CLUSTER = "bunlet-test";

/** The dashboard's variables as Grafana fills them for "all instances" over a short range. */
const render = (expr: string) => expr.replaceAll("$cluster", CLUSTER).replaceAll("$instance", ".*").replaceAll("$__rate_interval", "1m");

/** The panel queries of examples/monitoring/bunlet-eviction-dashboard.json. */
function bunletDashboard(): PanelQuery[] {
  const d = JSON.parse(readFileSync(join(EXAMPLES, "bunlet-eviction-dashboard.json"), "utf8")) as { panels: { title: string; targets: { expr: string }[] }[] };
  return d.panels.flatMap((p) => p.targets.map((t) => ({ panel: `bunlet / ${p.title}`, expr: t.expr })));
}

/** A query "returns data" when at least one sample is a finite number (NaN quantiles of empty rates are no data). */
async function hasData(prom: TestPrometheus, expr: string): Promise<string | undefined> {
  const r = await prom.query(render(expr));
  const finite = r.filter((s) => Number.isFinite(Number(s.value[1])));
  return finite.length > 0 ? `${finite.length} series, e.g. ${finite[0]!.value[1]}` : undefined;
}

const monitoring: Scenario = {
  name: "monitoring",
  description: "a real Prometheus scrapes bunlet running probed pods with volumes and evicting a hog",
  async run(h: Harness) {
    await h.useSharedContainerd();
    h.addPod("steady", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "50m", memory: "64Mi" } });
    await h.start({ allocatableBytes: 1024 * MIB, config: { evictionHard: { "memory.available": "400Mi" } } });
    const target = h.baseUrl().replace("http://", "");
    const labels = { cluster: CLUSTER };
    const prom = await startPrometheus({
      jobs: [
        { jobName: "kubelet", metricsPath: "/metrics", target, labels },
        { jobName: "kubelet-probes", metricsPath: "/metrics/probes", target, labels, job: "kubelet" },
        { jobName: "kubelet-cadvisor", metricsPath: "/metrics/cadvisor", target, labels, job: "kubelet" },
      ],
      ruleFiles: [join(EXAMPLES, "kubelet-rules.yaml")],
    });
    h.defer(() => prom.stop());
    try {
      await h.waitFor("Prometheus to scrape bunlet", async () => (await prom.query('up{job="kubelet"} == 1')).length === 3, 20_000, 200);
    } catch (e) {
      h.say(`prometheus targets: ${await (await fetch(`${prom.url}/api/v1/targets`)).text()}\n${prom.logs()}`);
      throw e;
    }

    // Pods started while Prometheus watches, so the start and volume series move inside its windows.
    h.addPod("probed", {
      command: ["sh", "-c", "touch /tmp/ready; exec sleep 2147483647"],
      container: {
        readinessProbe: { exec: { command: ["cat", "/tmp/ready"] }, periodSeconds: 1 },
        livenessProbe: { exec: { command: ["true"] }, periodSeconds: 1 },
      },
      volumes: [
        { volume: { name: "cache", emptyDir: {} }, mountPath: "/cache" },
        { volume: { name: "host-etc", hostPath: { path: "/etc" } }, mountPath: "/host-etc" },
      ],
    });
    await h.waitRunning(["probed"]);
    await h.waitNotifierArmed("hard");
    h.addPod("ramp", { image: h.images.memhog, args: ["1536", "600"], terminationGracePeriodSeconds: 0 });
    await h.waitFor("the ramp pod to be evicted", async () => isEvicted(await h.pod("ramp")), 60_000, 50);
    h.say("ramp evicted; waiting for Prometheus to see it");
    await h.waitFor("the eviction in Prometheus", async () => (await prom.query('increase(kubelet_evictions{job="kubelet"}[1m]) > 0')).length > 0, 20_000, 250);
    // A few more scrapes, so every 1m-window rate has two samples after the eviction.
    await h.waitFor(
      "probe results in Prometheus",
      async () => (await prom.query('prober_probe_total{job="kubelet",result="successful"}')).length > 0,
      10_000,
      250,
    );

    for (const q of [...KUBELET_DASHBOARD, ...KUBELET_ALERT_INPUTS, ...bunletDashboard()]) {
      if (q.skipStandalone) continue;
      // Some panels need a second scrape after their event; give each a few seconds before failing it.
      let got: string | undefined;
      const deadline = Date.now() + 8_000;
      while (!(got = await hasData(prom, q.expr)) && Date.now() < deadline) await Bun.sleep(500);
      h.check(`panel has data: ${q.panel}`, got !== undefined, got ?? `no data for ${render(q.expr)}`);
    }
    const rules = (await (await fetch(`${prom.url}/api/v1/rules`)).json()) as {
      data: { groups: { name: string; rules: { health: string; name: string; lastError?: string }[] }[] };
    };
    const unhealthy = rules.data.groups.flatMap((g) => g.rules.filter((r) => r.health !== "ok").map((r) => `${r.name}: ${r.lastError}`));
    h.check(
      "examples/monitoring rules load and evaluate in Prometheus",
      rules.data.groups.length === 3 && unhealthy.length === 0,
      unhealthy.join("; ") || `${rules.data.groups.length} groups`,
    );
    // cAdvisor's series of the probed pod's container, as the mixin's resource dashboards read them.
    const cadvisor = 'job="kubelet", metrics_path="/metrics/cadvisor", container="main"';
    for (const expr of [
      `container_memory_working_set_bytes{${cadvisor}, image!=""}`,
      `rate(container_cpu_usage_seconds_total{${cadvisor}}[1m])`,
      `container_fs_usage_bytes{${cadvisor}}`,
    ]) {
      const got = await hasData(prom, expr);
      h.check(`cadvisor has data: ${expr}`, got !== undefined, got ?? "no data");
    }
    for (const path of ["/metrics", "/metrics/probes", "/metrics/resource", "/metrics/cadvisor"]) {
      const text = await (await fetch(`${h.baseUrl()}${path}`)).text();
      const problems = promtoolCheckMetrics(text);
      h.check(
        `promtool check metrics is clean on ${path}`,
        problems === "",
        problems || `${text.split("\n").filter((l) => l.startsWith("# TYPE")).length} families`,
      );
    }
  },
};

describe.skipIf(!canRunContainerd() || !hasPrometheus())("monitoring: a real Prometheus scraping bunlet", () => {
  useChaosContainerd();

  test("every kubelet dashboard panel, kubelet alert input and bunlet dashboard panel has data", async () => {
    const r = await runScenario(monitoring, { timeoutMs: 240_000 });
    if (!r.pass) printResult(r);
    expect({ error: r.error, failed: r.checks.filter((c) => !c.ok), cleanupProblems: r.cleanupProblems }).toEqual({
      error: undefined,
      failed: [],
      cleanupProblems: [],
    });
    expect(r.checks.filter((c) => c.name.startsWith("panel has data")).length).toBeGreaterThanOrEqual(30);
  }, 300_000);
});
