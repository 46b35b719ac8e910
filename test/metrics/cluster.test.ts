// Cluster-mode series: client-go's rest_client_* fed by the kube client's observer (a real HTTP server
// answering 200, 404 and nothing), the certificate manager series and kubelet_node_startup_*.
import { afterAll, describe, expect, test } from "bun:test";
import { createKubeClient, type RequestAttempt } from "../../src/kube/index.ts";
import {
  clientCertificateMetrics,
  nodeStartupMetrics,
  parseBootTimeMs,
  REST_CLIENT_LATENCY_BUCKETS,
  restClientMetrics,
  serverCertificateMetrics,
} from "../../src/metrics/index.ts";
import { createManualClock } from "../../src/manual-clock.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { parsePromText } from "../support/prom-text.ts";

const sample = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  const v = line?.slice(series.length + 1);
  return v === undefined ? undefined : v === "+Inf" ? Infinity : Number(v);
};

describe("rest_client_* from the kube client's observer", () => {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) =>
      new URL(req.url).pathname === "/api/v1/nodes/n1"
        ? Response.json({ kind: "Node" })
        : Response.json({ kind: "Status", reason: "NotFound" }, { status: 404 }),
  });
  afterAll(() => server.stop(true));
  const host = `127.0.0.1:${server.port}`;

  test("one sample per attempt: code, method, host; latency by verb and host with upstream's buckets", async () => {
    const attempts: RequestAttempt[] = [];
    const registry = createRegistry();
    const metrics = restClientMetrics(registry);
    const client = createKubeClient(
      { server: `http://${host}`, source: "test" },
      { clock: createManualClock(0), observer: { observe: (a) => (attempts.push(a), metrics.observe(a)) } },
    );
    await client.request({ path: "/api/v1/nodes/n1" });
    await client.request({ path: "/api/v1/nodes/n1" });
    await expect(client.request({ method: "PATCH", path: "/api/v1/nodes/gone/status", body: {} })).rejects.toThrow();
    expect(attempts.map((a) => [a.code, a.method, a.host])).toEqual([
      ["200", "GET", host],
      ["200", "GET", host],
      ["404", "PATCH", host],
    ]);
    const text = registry.render();
    expect(sample(text, `rest_client_requests_total{code="200",method="GET",host="${host}"}`)).toBe(2);
    expect(sample(text, `rest_client_requests_total{code="404",method="PATCH",host="${host}"}`)).toBe(1);
    expect(sample(text, `rest_client_request_duration_seconds_count{verb="GET",host="${host}"}`)).toBe(2);
    const fam = parsePromText(text).get("rest_client_request_duration_seconds")!;
    expect(fam.type).toBe("histogram");
    const les = fam.samples.filter((s) => s.name.endsWith("_bucket") && s.labels.verb === "GET").map((s) => s.labels.le);
    expect(les).toEqual([...REST_CLIENT_LATENCY_BUCKETS.map(String), "+Inf"]);
    // No per-object path in any label: the node name never shows.
    expect(text).not.toContain("gone");
  });

  test('no response at all is code="<error>", as client-go', async () => {
    const registry = createRegistry();
    const dead = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = dead.port;
    dead.stop(true);
    const client = createKubeClient(
      { server: `http://127.0.0.1:${port}`, source: "test" },
      { clock: createManualClock(0), observer: restClientMetrics(registry) },
    );
    await expect(client.request({ path: "/api/v1/nodes" })).rejects.toThrow();
    expect(sample(registry.render(), `rest_client_requests_total{code="<error>",method="GET",host="127.0.0.1:${port}"}`)).toBe(1);
  });
});

describe("certificate manager series", () => {
  test("client TTL: seconds to notAfter (truncated), +Inf before a certificate is known; renew errors count", () => {
    const registry = createRegistry();
    let notAfter: number | undefined;
    const clock = createManualClock(1_000_000);
    const m = clientCertificateMetrics(registry, { notAfterMs: () => notAfter, nowMs: () => clock.now() });
    expect(sample(registry.render(), "kubelet_certificate_manager_client_ttl_seconds")).toBe(Infinity);
    expect(sample(registry.render(), "kubelet_certificate_manager_client_expiration_renew_errors")).toBe(0);
    notAfter = 1_000_000 + 3_600_500;
    expect(sample(registry.render(), "kubelet_certificate_manager_client_ttl_seconds")).toBe(3600);
    clock.advance(3_700_000);
    expect(sample(registry.render(), "kubelet_certificate_manager_client_ttl_seconds")).toBe(-99);
    m.renewError();
    m.renewError();
    expect(sample(registry.render(), "kubelet_certificate_manager_client_expiration_renew_errors")).toBe(2);
  });

  test("serving certificate renew errors start at 0", () => {
    const registry = createRegistry();
    serverCertificateMetrics(registry).renewError();
    expect(sample(registry.render(), "kubelet_server_expiration_renew_errors")).toBe(1);
    expect(parsePromText(registry.render()).get("kubelet_server_expiration_renew_errors")!.type).toBe("counter");
  });

  test("serving TTL: +Inf until a certificate exists, then seconds to notAfter; rotation age in upstream's buckets", () => {
    const registry = createRegistry();
    let notAfter: number | undefined;
    const m = serverCertificateMetrics(registry, { notAfterMs: () => notAfter, nowMs: () => 1_000_000 });
    expect(sample(registry.render(), "kubelet_certificate_manager_server_ttl_seconds")).toBe(Infinity);
    notAfter = 1_000_000 + 90_500;
    expect(sample(registry.render(), "kubelet_certificate_manager_server_ttl_seconds")).toBe(90);
    m.rotated(5000);
    const families = parsePromText(registry.render());
    const h = families.get("kubelet_certificate_manager_server_rotation_seconds")!;
    expect(h.type).toBe("histogram");
    const bucket = (le: string) => h.samples.find((s) => s.name.endsWith("_bucket") && s.labels.le === le)?.value;
    expect([bucket("3600"), bucket("14400"), bucket("124416000"), bucket("+Inf")]).toEqual([0, 1, 1, 1]);
  });
});

describe("kubelet_node_startup_*", () => {
  test("boot → kubelet start → first attempt → registered → Ready, each set once as upstream's tracker", () => {
    const clock = createManualClock(100_000);
    const registry = createRegistry();
    const t = nodeStartupMetrics(registry, { nowMs: () => clock.now(), kubeletStartMs: 100_000, bootTimeMs: 40_000 });
    const v = (n: string) => sample(registry.render(), `kubelet_node_startup_${n}`);
    expect(v("duration_seconds")).toBe(0); // registered at 0 from the start, as client_golang
    t.nodeReady(); // not registered yet: ignored
    clock.advance(2000);
    t.attemptRegisterNode();
    clock.advance(500);
    t.attemptRegisterNode(); // a retry does not move the first attempt
    clock.advance(1000);
    t.registeredNode();
    clock.advance(4000);
    t.nodeReady();
    clock.advance(9000);
    t.nodeReady();
    t.registeredNode();
    expect([
      v("pre_kubelet_duration_seconds"),
      v("pre_registration_duration_seconds"),
      v("registration_duration_seconds"),
      v("post_registration_duration_seconds"),
      v("duration_seconds"),
    ]).toEqual([60, 2, 1.5, 4, 67.5]);
  });

  test.each([
    ["cpu  1 2 3\nbtime 1700000000\nprocesses 5\n", 1_700_000_000_000],
    ["cpu  1 2 3\n", undefined],
  ])("boot time from /proc/stat %#", (text, want) => {
    expect(parseBootTimeMs(text)).toBe(want);
  });
});
