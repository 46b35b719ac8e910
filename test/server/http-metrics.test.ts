import { describe, expect, test } from "bun:test";
import { createHttpMetrics, pathBucket } from "../../src/server/http-metrics.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { createRouter, text } from "../../src/server/router.ts";

describe("pathBucket", () => {
  test.each([
    ["/pods", "pods"],
    ["/stats/summary", "stats"],
    ["/healthz", "healthz"],
    [undefined, "other"],
    ["/", "other"],
  ])("%p → %s", (route, want) => {
    expect(pathBucket(route)).toBe(want);
  });
});

describe("request metrics through the router", () => {
  test("every request is counted and timed by method, path bucket and server type", async () => {
    const registry = createRegistry();
    let now = 0;
    const handle = createRouter(
      [
        { path: "/pods", methods: ["GET"], handler: () => ((now += 250), text("[]")) },
        { path: "/stats/summary", methods: ["GET"], handler: () => text("{}") },
      ],
      { name: "main", observe: createHttpMetrics(registry)("readwrite"), nowMs: () => now },
    );
    await handle(new Request("http://x/pods"));
    await handle(new Request("http://x/stats/summary"));
    await handle(new Request("http://x/random/scanner/path"));
    await handle(new Request("http://x/pods", { method: "POST" }));
    const out = registry.render();
    const l = (method: string, path: string) => `{method="${method}",path="${path}",server_type="readwrite",long_running="false"}`;
    expect(out).toContain(`kubelet_http_requests_total${l("GET", "pods")} 1`);
    expect(out).toContain(`kubelet_http_requests_total${l("GET", "stats")} 1`);
    expect(out).toContain(`kubelet_http_requests_total${l("GET", "other")} 1`);
    expect(out).toContain(`kubelet_http_requests_total${l("POST", "pods")} 1`);
    expect(out).toContain(`kubelet_http_requests_duration_seconds_sum${l("GET", "pods")} 0.25`);
    expect(out).toContain("# TYPE kubelet_http_requests_duration_seconds histogram");
  });
});
