import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kubeletRoutes, type ServerProviders } from "../../src/server/endpoints.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { renderResourceMetrics } from "../../src/server/resource-metrics.ts";
import { createRouter } from "../../src/server/router.ts";
import type { Summary } from "../../src/stats/summary.ts";
import { parsePromText } from "../support/prom-text.ts";

const T = "2026-12-01T08:00:00Z";
const summary: Summary = {
  node: { nodeName: "n1", cpu: { time: T, usageCoreNanoSeconds: 12_500_000_000 }, memory: { time: T, workingSetBytes: 1_048_576 } },
  pods: [
    {
      podRef: { name: "web", namespace: "default", uid: "u1" },
      cpu: { time: T, usageCoreNanoSeconds: 2_000_000_000 },
      memory: { time: T, workingSetBytes: 4096 },
      containers: [
        { name: "app", startTime: "2026-12-01T07:00:00Z", cpu: { time: T, usageCoreNanoSeconds: 1_500_000_000 }, memory: { time: T, workingSetBytes: 2048 } },
      ],
    },
  ],
};

describe("/metrics/resource (metrics-server's format)", () => {
  test("every family parses and carries upstream's names, labels and timestamps", () => {
    const f = parsePromText(renderResourceMetrics(summary));
    expect([...f.keys()].sort()).toEqual([
      "container_cpu_usage_seconds_total",
      "container_memory_working_set_bytes",
      "container_start_time_seconds",
      "node_cpu_usage_seconds_total",
      "node_memory_working_set_bytes",
      "pod_cpu_usage_seconds_total",
      "pod_memory_working_set_bytes",
      "resource_scrape_error",
    ]);
    const ms = Date.parse(T);
    expect(f.get("node_cpu_usage_seconds_total")).toMatchObject({ type: "counter", samples: [{ labels: {}, value: 12.5, timestampMs: ms }] });
    expect(f.get("node_memory_working_set_bytes")!.samples).toEqual([{ name: "node_memory_working_set_bytes", labels: {}, value: 1048576, timestampMs: ms }]);
    expect(f.get("container_cpu_usage_seconds_total")!.samples[0]).toMatchObject({
      labels: { container: "app", namespace: "default", pod: "web" },
      value: 1.5,
    });
    expect(f.get("pod_memory_working_set_bytes")!.samples[0]).toMatchObject({ labels: { namespace: "default", pod: "web" }, value: 4096 });
    expect(f.get("container_start_time_seconds")!.samples[0]!.value).toBe(Date.parse("2026-12-01T07:00:00Z") / 1000);
    expect(f.get("resource_scrape_error")!.samples[0]!.value).toBe(0);
    expect(f.get("pod_cpu_usage_seconds_total")!.help).toBe("[STABLE] Cumulative cpu time consumed by the pod in core-seconds");
  });

  test("swap: node, pod and container usage, the container's limit = available + used (upstream collect*SwapMetrics)", () => {
    const swap = (used: number, available?: number) => ({
      time: T,
      swapUsageBytes: used,
      ...(available === undefined ? {} : { swapAvailableBytes: available }),
    });
    const pod = summary.pods[0]!;
    const withSwap: Summary = {
      node: { ...summary.node, swap: swap(8192, 1_000_000) },
      pods: [
        {
          ...pod,
          swap: swap(4096),
          containers: [
            { ...pod.containers![0]!, swap: swap(4096, 12288) },
            { name: "unlimited", swap: swap(0) },
          ],
        },
      ],
    };
    const f = parsePromText(renderResourceMetrics(withSwap));
    const ms = Date.parse(T);
    expect(f.get("node_swap_usage_bytes")!.samples).toEqual([{ name: "node_swap_usage_bytes", labels: {}, value: 8192, timestampMs: ms }]);
    expect(f.get("pod_swap_usage_bytes")!.samples).toMatchObject([{ labels: { namespace: "default", pod: "web" }, value: 4096 }]);
    expect(f.get("container_swap_usage_bytes")!.samples.map((s) => [s.labels.container, s.value])).toEqual([
      ["app", 4096],
      ["unlimited", 0],
    ]);
    // A container whose swap is unlimited (no available bytes) has no limit sample.
    expect(f.get("container_swap_limit_bytes")!.samples).toMatchObject([{ labels: { container: "app", namespace: "default", pod: "web" }, value: 16384 }]);
    expect(f.get("node_swap_usage_bytes")!.help).toBe("[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems");
  });

  test("stats that cannot be read: resource_scrape_error 1, nothing else", () => {
    const f = parsePromText(renderResourceMetrics(undefined));
    expect([...f.keys()]).toEqual(["resource_scrape_error"]);
    expect(f.get("resource_scrape_error")!.samples[0]!.value).toBe(1);
  });
});

describe("/logs/ and enableDebuggingHandlers", () => {
  let dir: string;
  let logDir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "bunlet-logs-"));
    logDir = join(dir, "log");
    mkdirSync(join(logDir, "pods"), { recursive: true });
    writeFileSync(join(logDir, "syslog"), "line 1\n");
    writeFileSync(join(dir, "secret"), "top secret\n");
    symlinkSync(join(dir, "secret"), join(logDir, "escape"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const providers = (): ServerProviders => ({ getPods: () => [], getSummary: () => summary, metrics: createRegistry(), nodeLogDir: logDir });
  const get = async (debuggingHandlers: boolean, path: string, method = "GET") => {
    const res = await createRouter(kubeletRoutes(providers(), { debuggingHandlers }))(new Request(`http://x${path}`, { method }));
    return { status: res.status, body: await res.text(), location: res.headers.get("location") };
  };

  test.each([
    ["/logs/syslog", 200, "line 1\n"],
    ["/logs/", 200, '<pre>\n<a href="escape">escape</a>\n<a href="pods/">pods/</a>\n<a href="syslog">syslog</a>\n</pre>\n'],
    ["/logs/../secret", 404, undefined],
    ["/logs/%2e%2e/secret", 404, undefined],
    ["/logs/pods/../../secret", 404, undefined],
    ["/logs/escape", 404, undefined],
    ["/logs/missing", 404, undefined],
    ["/logs/%00", 400, undefined],
    ["/logs/%zz", 400, undefined],
  ])("%s → %d", async (path, status, body) => {
    const r = await get(true, path);
    expect(r.status).toBe(status);
    if (body !== undefined) expect(r.body).toBe(body);
    expect(r.body).not.toContain("top secret");
  });

  test("a directory without its slash redirects, as Go's FileServer", async () => {
    expect(await get(true, "/logs/pods")).toMatchObject({ status: 301, location: "/logs/pods/" });
  });

  test.each([
    "/logs/syslog",
    "/containerLogs/default/web/app",
    "/exec/default/web/app",
    "/run/default/web/app",
    "/attach/a/b/c",
    "/portForward/a/b",
    "/runningpods/",
  ])("enableDebuggingHandlers=false: %s → 405 Debug endpoints are disabled.", async (path) => {
    expect(await get(false, path, path.startsWith("/exec") ? "POST" : "GET")).toMatchObject({ status: 405, body: "Debug endpoints are disabled.\n" });
  });

  test("/metrics/resource is served next to /stats/summary", async () => {
    const r = await get(false, "/metrics/resource");
    expect(r.status).toBe(200);
    expect(parsePromText(r.body).has("pod_cpu_usage_seconds_total")).toBe(true);
  });
});

describe("/runningpods/", () => {
  test("the runtime's running pods as a v1 PodList (name, namespace, uid, container names)", async () => {
    const p: ServerProviders = {
      getPods: () => [],
      metrics: createRegistry(),
      getRunningPods: async () => [{ uid: "u1", name: "web", namespace: "default", containers: [{ name: "app" }] }],
    };
    const res = await createRouter(kubeletRoutes(p, { debuggingHandlers: true }))(new Request("http://x/runningpods/"));
    expect(await res.json()).toEqual({
      kind: "PodList",
      apiVersion: "v1",
      metadata: {},
      items: [
        {
          metadata: { name: "web", namespace: "default", uid: "u1", creationTimestamp: null },
          spec: { containers: [{ name: "app", resources: {} }] },
          status: {},
        },
      ],
    });
  });
});
