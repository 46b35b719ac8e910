// Operators' view in API-server mode: bunlet joins the API-server double (bootstrap token → CSR →
// client certificate, rotateCertificates on) and a real Prometheus (Debian's) scrapes its secured
// kubelet port every second — HTTPS with an x509 client certificate, as kube-prometheus scrapes
// kubelets — on /metrics, /metrics/probes and /metrics/cadvisor. Every panel query of the
// kubernetes-mixin kubelet dashboard (now with rest_client_*; only go_goroutines has no Bun meaning)
// and every kubelet alert input of the mixin (now with the certificate series) must return data, as
// must the cAdvisor series the mixin's resource dashboards read; kubelet_node_startup_* are set;
// promtool finds /metrics, /metrics/probes, /metrics/resource and /metrics/cadvisor clean; no kubelet_*
// histogram carries a per-pod label. Needs root, containerd and Prometheus (skipped otherwise).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeAgent } from "../../src/agent.ts";
import type { ApiServerDouble } from "../support/apiserver/index.ts";
import { freePort, ROOT } from "../support/binary.ts";
import { clusterPaths, joinDouble, type JoinedNode } from "../support/cluster.ts";
import { canRunContainerd, type TestContainerd } from "../support/containerd.ts";
import { parsePromText } from "../support/prom-text.ts";
import { hasPrometheus, promtoolCheckMetrics, startPrometheus, type TestPrometheus } from "../support/prometheus.ts";
import { until } from "../support/wait.ts";
import { KUBELET_ALERT_INPUTS, KUBELET_DASHBOARD } from "../fixtures/monitoring/kubelet-mixin.ts";

const { node: NODE, base: BASE } = clusterPaths("moncluster");
const CLUSTER = "bunlet-test";
const RULES = join(ROOT, "examples", "monitoring", "kubelet-rules.yaml");

const render = (expr: string) => expr.replaceAll("$cluster", CLUSTER).replaceAll("$instance", ".*").replaceAll("$__rate_interval", "1m");

/** A pod on the pod network (its eth0 feeds container_network_*), probed, with an emptyDir and a hostPath. */
const probedPod = (image: string) => `apiVersion: v1
kind: Pod
metadata: { name: probed }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${image}
      command: ["sh", "-c", "touch /tmp/ready; exec sleep 2147483647"]
      readinessProbe: { exec: { command: ["cat", "/tmp/ready"] }, periodSeconds: 1 }
      livenessProbe: { exec: { command: ["true"] }, periodSeconds: 1 }
      resources: { limits: { memory: 64Mi, cpu: 100m } }
      volumeMounts: [{ name: cache, mountPath: /cache }, { name: host-etc, mountPath: /host-etc }]
  volumes:
    - { name: cache, emptyDir: {} }
    - { name: host-etc, hostPath: { path: /etc } }
`;

/** An image no registry can give (no network here): PullImage fails, as upstream counts in pull_image errors. */
const unpullablePod = `apiVersion: v1
kind: Pod
metadata: { name: unpullable }
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 0
  containers: [{ name: main, image: "bunlet.invalid/nothing:1", imagePullPolicy: IfNotPresent }]
`;

describe.skipIf(!canRunContainerd() || !hasPrometheus())("monitoring in API-server mode: a real Prometheus scraping bunlet over TLS", () => {
  let c: JoinedNode | undefined;
  let ctd: TestContainerd;
  let api: ApiServerDouble;
  let agent: NodeAgent;
  let prom: TestPrometheus | undefined;
  let port = 0;
  let scraper: { certPem: string; keyPem: string };

  const get = (path: string, withCert = true) =>
    fetch(`https://127.0.0.1:${port}${path}`, {
      tls: { rejectUnauthorized: false, ...(withCert ? { cert: scraper.certPem, key: scraper.keyPem } : {}) },
    } as RequestInit);

  async function hasData(expr: string): Promise<string | undefined> {
    const r = await prom!.query(render(expr));
    const finite = r.filter((s) => Number.isFinite(Number(s.value[1])));
    return finite.length > 0 ? `${finite.length} series, e.g. ${finite[0]!.value[1]}` : undefined;
  }

  /** Some panels need a second scrape after their event: a few seconds each before calling it empty. */
  async function expectData(what: string, expr: string): Promise<void> {
    let got: string | undefined;
    const deadline = Date.now() + 10_000;
    while (!(got = await hasData(expr)) && Date.now() < deadline) await Bun.sleep(500);
    expect({ what, expr: render(expr), got: got ?? "no data" }).toEqual({ what, expr: render(expr), got: expect.stringContaining("series") });
  }

  beforeAll(async () => {
    const caFile = join(BASE, "cluster-ca.crt");
    port = freePort();
    // Bootstrap token → CSR → client certificate.
    c = await joinDouble({
      name: "moncluster",
      identity: "bootstrap",
      port,
      prepare: async (x) => {
        writeFileSync(caFile, x.api.caPem);
        scraper = await x.api.issueClientCert("prometheus");
        writeFileSync(join(BASE, "prometheus.crt"), scraper.certPem);
        writeFileSync(join(BASE, "prometheus.key"), scraper.keyPem, { mode: 0o600 });
      },
      config: [
        "nodeStatusUpdateFrequency: 1s",
        "rotateCertificates: true",
        "evictionHard: { memory.available: 100Mi }",
        // The secured port as a kubeadm node serves it: TLS, client certificates from the cluster CA.
        "address: 127.0.0.1",
        `authentication: { x509: { clientCAFile: ${caFile} }, anonymous: { enabled: false }, webhook: { enabled: false } }`,
        "authorization: { mode: AlwaysAllow }",
      ],
    });
    ({ ctd, api, agent } = c);
  }, 600_000);

  afterAll(async () => {
    await prom?.stop();
    await c?.stop();
    rmSync(BASE, { recursive: true, force: true });
  }, 120_000);

  test("the mixin's kubelet panels and alerts (rest client and certificates included) and the cAdvisor series have data", async () => {
    await until(
      "Node Ready",
      async () => (await api.store.get(`nodes//${NODE}`))?.status?.conditions?.find((c: { type: string }) => c.type === "Ready")?.status === "True",
      60_000,
    );
    const target = `127.0.0.1:${port}`;
    const labels = { cluster: CLUSTER };
    const tls = { certFile: join(BASE, "prometheus.crt"), keyFile: join(BASE, "prometheus.key") };
    prom = await startPrometheus({
      jobs: [
        { jobName: "kubelet", metricsPath: "/metrics", target, labels, tls },
        { jobName: "kubelet-probes", metricsPath: "/metrics/probes", target, labels, job: "kubelet", tls },
        { jobName: "kubelet-cadvisor", metricsPath: "/metrics/cadvisor", target, labels, job: "kubelet", tls },
      ],
      ruleFiles: [RULES],
    });
    await until("Prometheus to scrape the three endpoints", async () => (await prom!.query('up{job="kubelet"} == 1')).length === 3, 30_000, {
      intervalMs: 250,
    }).catch(async (e) => {
      throw new Error(`${(e as Error).message}: ${await (await fetch(`${prom!.url}/api/v1/targets`)).text()}`);
    });
    // Pods start while Prometheus watches, so the start, volume and error series move inside its windows.
    writeFileSync(join(BASE, "manifests", "probed.yaml"), probedPod(ctd.images.busybox));
    writeFileSync(join(BASE, "manifests", "unpullable.yaml"), unpullablePod);
    await until(
      "the probed pod Running",
      () => agent.pods.lifecycle.listPodsForApi().some((p) => p.metadata.name === `probed-${NODE}` && p.status?.phase === "Running"),
      120_000,
    );
    await until("probe results in Prometheus", async () => (await prom!.query('prober_probe_total{job="kubelet",result="successful"}')).length > 0, 20_000, {
      intervalMs: 250,
    });
    await until(
      "a failed pull in Prometheus",
      async () => (await prom!.query('kubelet_runtime_operations_errors_total{job="kubelet",operation_type="pull_image"}')).length > 0,
      60_000,
      { intervalMs: 250 },
    );

    for (const q of [...KUBELET_DASHBOARD, ...KUBELET_ALERT_INPUTS]) if (!q.skipCluster) await expectData(`mixin: ${q.panel}`, q.expr);
    const cadvisor = 'job="kubelet", metrics_path="/metrics/cadvisor"';
    for (const [what, expr] of [
      ["container working set", `container_memory_working_set_bytes{${cadvisor}, pod="probed-${NODE}", container="main", image!=""}`],
      [
        "container rss, cache, usage",
        `container_memory_rss{${cadvisor}, container="main"} + container_memory_cache{${cadvisor}, container="main"} * 0 + container_memory_usage_bytes{${cadvisor}, container="main"} * 0`,
      ],
      ["container memory limit", `container_spec_memory_limit_bytes{${cadvisor}, pod="probed-${NODE}", container="main"} == 67108864`],
      ["container CPU rate", `rate(container_cpu_usage_seconds_total{${cadvisor}, container="main", cpu="total"}[1m])`],
      ["container writable layer", `container_fs_usage_bytes{${cadvisor}, container="main"} <= container_fs_limit_bytes{${cadvisor}, container="main"}`],
      [
        "pod network",
        `rate(container_network_receive_bytes_total{${cadvisor}, pod="probed-${NODE}", interface="eth0"}[1m]) + rate(container_network_transmit_bytes_total{${cadvisor}, pod="probed-${NODE}", interface="eth0"}[1m])`,
      ],
      ["start and last seen", `container_last_seen{${cadvisor}, container="main"} - container_start_time_seconds{${cadvisor}, container="main"} > 0`],
      ["node (id=/)", `container_memory_working_set_bytes{${cadvisor}, id="/"}`],
      ["machine", `machine_memory_bytes{${cadvisor}} * 0 + machine_cpu_cores{${cadvisor}} > 0`],
    ] as const)
      await expectData(`cadvisor: ${what}`, expr);
    for (const name of ["registration", "post_registration"])
      await expectData(`node startup: ${name}`, `kubelet_node_startup_${name}_duration_seconds{job="kubelet"} > 0`);
    await expectData(
      "node startup: total",
      'kubelet_node_startup_duration_seconds{job="kubelet"} >= kubelet_node_startup_post_registration_duration_seconds{job="kubelet"}',
    );
    await expectData(
      "client certificate TTL (≤ 1 day from the double's signer)",
      'kubelet_certificate_manager_client_ttl_seconds{job="kubelet"} > 0 and kubelet_certificate_manager_client_ttl_seconds{job="kubelet"} <= 86400',
    );

    const rules = (await (await fetch(`${prom.url}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { health: string; name: string; lastError?: string }[] }[] };
    };
    expect(rules.data.groups.flatMap((g) => g.rules.filter((r) => r.health !== "ok").map((r) => `${r.name}: ${r.lastError}`))).toEqual([]);
  }, 360_000);

  test("promtool check metrics is clean on /metrics, /metrics/probes, /metrics/resource and /metrics/cadvisor", async () => {
    for (const path of ["/metrics", "/metrics/probes", "/metrics/resource", "/metrics/cadvisor"]) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect({ path, problems: promtoolCheckMetrics(await res.text()) }).toEqual({ path, problems: "" });
    }
  });

  test("the scrape endpoints want a client certificate (nodes/metrics): 401 without one", async () => {
    for (const path of ["/metrics", "/metrics/cadvisor"]) expect({ path, status: (await get(path, false)).status }).toEqual({ path, status: 401 });
  });

  test("cardinality: no kubelet_* histogram carries a per-pod label; rest_client_* are by host, not by object", async () => {
    const fams = parsePromText(await (await get("/metrics")).text());
    const perPod = new Set(["pod", "namespace", "uid", "pod_uid", "container", "pod_name"]);
    const offenders = [...fams.values()]
      .filter((f) => f.name.startsWith("kubelet_") && f.type === "histogram")
      .flatMap((f) =>
        f.samples.flatMap((s) =>
          Object.keys(s.labels)
            .filter((l) => perPod.has(l))
            .map((l) => `${f.name}{${l}}`),
        ),
      );
    expect([...new Set(offenders)]).toEqual([]);
    const rest = fams.get("rest_client_request_duration_seconds")!;
    expect(new Set(rest.samples.map((s) => s.labels.host))).toEqual(new Set([api.url.replace("https://", "")]));
    expect(new Set(rest.samples.map((s) => s.labels.verb))).toContain("PATCH");
  });
});
