// client-go's request metrics as the kubelet exposes them (k8s.io/component-base/metrics/prometheus/
// restclient): rest_client_requests_total{code,method,host} and rest_client_request_duration_seconds
// {verb,host}, fed by the kube client's injected RequestObserver (one per attempt, retries included).
// Upstream labelled the histogram by a templated `url` until v1.27 and by `host` since (cardinality);
// bunlet follows the newest.
import type { RequestObserver } from "../kube/client.ts";
import type { Registry } from "../server/metrics.ts";

/** restclient's requestLatency buckets (seconds). */
export const REST_CLIENT_LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60] as const;

export function restClientMetrics(registry: Registry): RequestObserver {
  const requests = registry.counter({
    name: "rest_client_requests_total",
    help: "Number of HTTP requests, partitioned by status code, method, and host.",
    labelNames: ["code", "method", "host"],
  });
  const latency = registry.histogram({
    name: "rest_client_request_duration_seconds",
    help: "Request latency in seconds. Broken down by verb, and host.",
    labelNames: ["verb", "host"],
    buckets: REST_CLIENT_LATENCY_BUCKETS,
  });
  return {
    observe(a) {
      requests.inc({ code: a.code, method: a.method, host: a.host });
      latency.observe(a.durationSeconds, { verb: a.method, host: a.host });
    },
  };
}
