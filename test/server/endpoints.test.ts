import { describe, expect, test } from "bun:test";
import { healthz, healthzRoutes, kubeletRoutes, onlyCpuAndMemory, type ServerProviders } from "../../src/server/endpoints.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { createRouter } from "../../src/server/router.ts";
import type { Summary } from "../../src/stats/summary.ts";

const summary: Summary = {
  node: {
    nodeName: "n1",
    startTime: "2024-01-01T00:00:00Z",
    cpu: { time: "t", usageNanoCores: 1 },
    memory: { time: "t", workingSetBytes: 10 },
    fs: { time: "t", availableBytes: 5 },
    systemContainers: [{ name: "kubelet", startTime: "s", memory: { time: "t", rssBytes: 3 }, logs: { time: "t" } }],
  },
  pods: [{ podRef: { name: "p", namespace: "default", uid: "u" }, memory: { time: "t" }, "ephemeral-storage": { time: "t" } }],
} as Summary;

function providers(over: Partial<ServerProviders> = {}): ServerProviders {
  const metrics = createRegistry();
  metrics.counter({ name: "kubelet_evictions", help: "evictions", labelNames: ["eviction_signal"] }).inc({ eviction_signal: "memory.available" });
  return { getPods: () => [{ metadata: { name: "p" } }], metrics, configz: () => ({ port: 10250 }), ...over };
}

const req = (path: string, method = "GET") => new Request(`http://127.0.0.1${path}`, { method });

describe("main server routes", () => {
  const handle = createRouter(kubeletRoutes(providers({ getSummary: () => summary }), { debuggingHandlers: true }));

  test.each([
    ["/healthz", 200, "text/plain; charset=utf-8"],
    ["/pods", 200, "application/json"],
    ["/configz", 200, "application/json"],
    ["/metrics", 200, "text/plain; version=0.0.4; charset=utf-8"],
    ["/stats/summary", 200, "application/json"],
    ["/nope", 404, "text/plain; charset=utf-8"],
    ["/healthz/extra", 404, "text/plain; charset=utf-8"],
  ])("GET %s → %i %s", async (path, status, type) => {
    const res = await handle(req(path));
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe(type);
  });

  test("/healthz says ok", async () => {
    expect(await (await handle(req("/healthz"))).text()).toBe("ok");
  });

  test("/healthz/<check> runs that check alone, as upstream's healthz handler", async () => {
    const h = healthz([{ name: "runtime", check: () => "container runtime is down" }]);
    const get = async (path: string) => {
      const r = await h(new Request(`http://x${path}`), new URL(`http://x${path}`));
      return [r.status, await r.text()];
    };
    expect(await get("/healthz/ping")).toEqual([200, "ok"]);
    expect(await get("/healthz/runtime")).toEqual([500, "internal server error: container runtime is down\n"]);
    expect((await get("/healthz"))[0]).toBe(500);
    expect((await get("/healthz/nope"))[0]).toBe(404);
  });

  test("/pods is a v1 PodList of the provider's pods", async () => {
    expect(await (await handle(req("/pods"))).json()).toEqual({
      kind: "PodList",
      apiVersion: "v1",
      metadata: {},
      items: [{ metadata: { name: "p" } }],
    });
  });

  test("/configz wraps the configuration under kubeletconfig", async () => {
    expect(await (await handle(req("/configz"))).json()).toEqual({ kubeletconfig: { port: 10250 } });
  });

  test("/metrics renders the shared registry", async () => {
    expect(await (await handle(req("/metrics"))).text()).toContain('kubelet_evictions{eviction_signal="memory.available"} 1');
  });

  test("/stats/summary?only_cpu_and_memory=true keeps cpu and memory only", async () => {
    const body = (await (await handle(req("/stats/summary?only_cpu_and_memory=true"))).json()) as Summary;
    expect(body).toEqual(JSON.parse(JSON.stringify(onlyCpuAndMemory(summary))));
    expect(body.node.fs).toBeUndefined();
    expect(body.node.systemContainers?.[0]).toEqual({ name: "kubelet", startTime: "s", memory: { time: "t", rssBytes: 3 } });
    expect(body.pods[0]!["ephemeral-storage"]).toBeUndefined();
    expect(body.pods[0]!.podRef.name).toBe("p");
  });

  test.each([
    ["/healthz", "POST", "GET, HEAD"],
    ["/pods", "DELETE", "GET, HEAD"],
    ["/stats/summary", "PUT", "GET, POST, HEAD"],
  ])("%s %s → 405 with Allow: %s", async (path, method, allow) => {
    const res = await handle(req(path, method));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe(allow);
  });

  test("HEAD answers with headers and no body", async () => {
    const res = await handle(req("/healthz", "HEAD"));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });
});

describe("optional endpoints", () => {
  test("no summary provider → /stats/summary is 404", async () => {
    const handle = createRouter(kubeletRoutes(providers(), { debuggingHandlers: true }));
    expect((await handle(req("/stats/summary"))).status).toBe(404);
  });

  test("read-only port (no debugging handlers) has no /configz", async () => {
    const handle = createRouter(kubeletRoutes(providers(), { debuggingHandlers: false }));
    expect((await handle(req("/configz"))).status).toBe(404);
    expect((await handle(req("/pods"))).status).toBe(200);
  });

  test("debug endpoints are served as JSON on the main port only", async () => {
    const p = providers({ debugEndpoints: { "/debug/eviction": async () => ({ mode: "live", thresholds: [] }) } });
    const main = createRouter(kubeletRoutes(p, { debuggingHandlers: true }));
    const res = await main(req("/debug/eviction"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ mode: "live", thresholds: [] });
    expect((await main(req("/debug/eviction", "POST"))).status).toBe(405);
    const readOnly = createRouter(kubeletRoutes(p, { debuggingHandlers: false }));
    expect((await readOnly(req("/debug/eviction"))).status).toBe(404);
  });

  test("healthz port serves /healthz only", async () => {
    const handle = createRouter(healthzRoutes({}));
    expect((await handle(req("/healthz"))).status).toBe(200);
    expect((await handle(req("/pods"))).status).toBe(404);
  });
});

describe("failures never escape the handler", () => {
  test("a throwing provider → 500 naming the error", async () => {
    const handle = createRouter(
      kubeletRoutes(
        providers({
          getPods: () => {
            throw new Error("pod manager unavailable");
          },
        }),
        { debuggingHandlers: true },
      ),
    );
    const res = await handle(req("/pods"));
    expect(res.status).toBe(500);
    expect(await res.text()).toContain("pod manager unavailable");
  });

  test("a failing health check → 500 listing it; ?verbose lists all checks", async () => {
    let broken: string | undefined = "PLEG is not healthy";
    const handle = createRouter(healthzRoutes({ healthChecks: [{ name: "syncloop", check: () => broken }] }));
    const bad = await handle(req("/healthz"));
    expect(bad.status).toBe(500);
    expect(await bad.text()).toBe("[+]ping ok\n[-]syncloop failed: PLEG is not healthy\nhealthz check failed\n");
    broken = undefined;
    expect(await (await handle(req("/healthz"))).text()).toBe("ok");
    expect(await (await handle(req("/healthz?verbose"))).text()).toBe("[+]ping ok\n[+]syncloop ok\nhealthz check passed\n");
  });
});
