// The kubelet server's request metrics (upstream pkg/kubelet/server/metrics): a counter and a
// latency histogram per method, path and server type. `path` is the route's first segment
// ("pods", "stats", "metrics"), "other" for unknown paths, as upstream buckets them, so a scanner
// hitting random URLs cannot blow up the label cardinality.
import type { Registry } from "./metrics.ts";
import type { RequestObservation } from "./router.ts";

/**
 * Upstream's longRunningRequestPathMap keys: "exec", "attach", "portforward", "debug" (its lowercase
 * "portforward" never matches the "/portForward" route, so port-forward counts as not long-running).
 */
const LONG_RUNNING = new Set(["exec", "attach", "portforward", "debug"]);

export type ServerType = "readwrite" | "readonly" | "healthz";

/** First path segment of a known route; "other" for anything else. */
export function pathBucket(route: string | undefined): string {
  if (!route) return "other";
  return route.split("/").filter(Boolean)[0] ?? "other";
}

export function createHttpMetrics(registry: Registry): (serverType: ServerType) => (o: RequestObservation) => void {
  const labelNames = ["method", "path", "server_type", "long_running"] as const;
  const requests = registry.counter({
    name: "kubelet_http_requests_total",
    help: "Number of the http requests received since the server started",
    labelNames,
  });
  const duration = registry.histogram({
    name: "kubelet_http_requests_duration_seconds",
    help: "Duration in seconds to serve http requests",
    labelNames,
  });
  return (serverType) => (o) => {
    const path = pathBucket(o.route);
    const labels = { method: o.method, path, server_type: serverType, long_running: String(LONG_RUNNING.has(path)) };
    requests.inc(labels);
    duration.observe(o.seconds, labels);
  };
}
