// Operators' view in API-server mode: bunlet joins a real control plane as kubeadm makes a node join
// (test/support/upstream: bootstrap token → CSR approved by the controller-manager → client
// certificate, rotateCertificates on, kubeadm's webhook authentication and authorization), and a real
// Prometheus (Debian's) scrapes its secured kubelet port every second — HTTPS with an x509 client
// certificate of the cluster CA, allowed nodes/metrics by RBAC as kube-prometheus' ClusterRole allows
// it, each scrape authorized by a SubjectAccessReview to the real API server — on /metrics,
// /metrics/probes and /metrics/cadvisor, while the real scheduler places the pods. Every panel query
// of the kubernetes-mixin kubelet dashboard (now with rest_client_*; only go_goroutines has no Bun
// meaning) and every kubelet alert input of the mixin (now with the certificate series) must return
// data, as must the cAdvisor series the mixin's resource dashboards read; kubelet_node_startup_* are
// set; promtool finds /metrics, /metrics/probes, /metrics/resource and /metrics/cadvisor clean; no
// kubelet_* histogram carries a per-pod label. Needs root, containerd, Prometheus and the upstream
// binaries (skipped otherwise).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { issueCert } from "../support/apiserver/pki.ts";
import { ROOT } from "../support/binary.ts";
import { canRunContainerd } from "../support/containerd.ts";
import { parsePromText } from "../support/prom-text.ts";
import { hasPrometheus, promtoolCheckMetrics, startPrometheus, type TestPrometheus } from "../support/prometheus.ts";
import { joinUpstream, startControlPlane, upstreamBinDir, waitNodeReady, type ControlPlane, type UpstreamNode } from "../support/upstream/index.ts";
import { until } from "../support/wait.ts";
import { KUBELET_ALERT_INPUTS, KUBELET_DASHBOARD } from "../fixtures/monitoring/kubelet-mixin.ts";

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

/** What kube-prometheus grants its Prometheus on kubelets: get nodes/metrics (every /metrics/* endpoint), bound to the scraper's certificate. */
const scraperRbac = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: prometheus-kubelet }
rules: [{ apiGroups: [""], resources: [nodes/metrics], verbs: [get] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: prometheus-kubelet }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: prometheus-kubelet }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: prometheus }]
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

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the cluster monitoring test: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !hasPrometheus() || !bin.dir)("monitoring in API-server mode: a real Prometheus scraping bunlet over TLS", () => {
  let cp: ControlPlane;
  let n: UpstreamNode;
  let prom: TestPrometheus | undefined;
  let scraper: { certPem: string; keyPem: string };

  /** A GET on the node's port with the scraper's certificate, another one, or none (null). */
  const get = (path: string, who: { certPem: string; keyPem: string } | null = scraper) =>
    fetch(`https://127.0.0.1:${n.port}${path}`, {
      tls: { rejectUnauthorized: false, ...(who ? { cert: who.certPem, key: who.keyPem } : {}) },
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
    cp = await startControlPlane({ dir: `/tmp/bunlet-upstream-monitoring-${process.pid}`, binDir: bin.dir! });
    // Bootstrap token → CSR → client certificate, as kubeadm joins a node.
    n = await joinUpstream({
      name: "moncluster",
      cp,
      config: ["nodeStatusUpdateFrequency: 1s", "evictionHard: { memory.available: 100Mi }", "address: 127.0.0.1"],
    });
    await waitNodeReady(cp, n);
    scraper = await issueCert(cp.ca, n.base, "/CN=prometheus");
    writeFileSync(join(n.base, "prometheus.crt"), scraper.certPem);
    writeFileSync(join(n.base, "prometheus.key"), scraper.keyPem, { mode: 0o600 });
    await cp.kubectlIn(scraperRbac, "apply", "-f", "-");
  }, 600_000);

  afterAll(async () => {
    await prom?.stop();
    await n?.stop();
    await cp?.stop();
  }, 120_000);

  test("the mixin's kubelet panels and alerts (rest client and certificates included) and the cAdvisor series have data", async () => {
    const target = `127.0.0.1:${n.port}`;
    const labels = { cluster: CLUSTER };
    const tls = { certFile: join(n.base, "prometheus.crt"), keyFile: join(n.base, "prometheus.key") };
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
    await cp.kubectlIn(`${probedPod(n.ctd.images.busybox)}---\n${unpullablePod}`, "apply", "-f", "-");
    await cp.kubectl("wait", "pod/probed", "--for=condition=Ready", "--timeout=120s");
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
      ["container working set", `container_memory_working_set_bytes{${cadvisor}, pod="probed", container="main", image!=""}`],
      [
        "container rss, cache, usage",
        `container_memory_rss{${cadvisor}, container="main"} + container_memory_cache{${cadvisor}, container="main"} * 0 + container_memory_usage_bytes{${cadvisor}, container="main"} * 0`,
      ],
      ["container memory limit", `container_spec_memory_limit_bytes{${cadvisor}, pod="probed", container="main"} == 67108864`],
      ["container CPU rate", `rate(container_cpu_usage_seconds_total{${cadvisor}, container="main", cpu="total"}[1m])`],
      ["container writable layer", `container_fs_usage_bytes{${cadvisor}, container="main"} <= container_fs_limit_bytes{${cadvisor}, container="main"}`],
      [
        "pod network",
        `rate(container_network_receive_bytes_total{${cadvisor}, pod="probed", interface="eth0"}[1m]) + rate(container_network_transmit_bytes_total{${cadvisor}, pod="probed", interface="eth0"}[1m])`,
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
    // The controller-manager's signer caps a certificate at its CA's expiry (control-plane.ts: a CA of 2 days).
    const caLeftS = Math.ceil((new X509Certificate(cp.ca.certPem).validToDate.getTime() - Date.now()) / 1000);
    await expectData(
      "client certificate TTL (within the cluster CA's life)",
      `kubelet_certificate_manager_client_ttl_seconds{job="kubelet"} > 0 and kubelet_certificate_manager_client_ttl_seconds{job="kubelet"} <= ${caLeftS}`,
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

  test("the scrape endpoints want an identity allowed nodes/metrics: 401 without a client certificate, 403 for one RBAC does not allow", async () => {
    const stranger = await issueCert(cp.ca, n.base, "/CN=stranger");
    for (const path of ["/metrics", "/metrics/cadvisor"]) {
      expect({ path, status: (await get(path, null)).status }).toEqual({ path, status: 401 });
      const denied = await get(path, stranger);
      expect({ path, status: denied.status, body: await denied.text() }).toEqual({
        path,
        status: 403,
        body: "Forbidden (user=stranger, verb=get, resource=nodes, subresource(s)=[metrics])",
      });
    }
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
    expect(new Set(rest.samples.map((s) => s.labels.host))).toEqual(new Set([cp.server.replace("https://", "")]));
    expect(new Set(rest.samples.map((s) => s.labels.verb))).toContain("PATCH");
  });
});
