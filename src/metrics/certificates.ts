// The kubelet's certificate manager series (upstream cmd/kubelet/app/server.go and
// pkg/kubelet/certificate/kubelet.go), registered as upstream registers them — only when the
// certificate is managed (rotateCertificates; serving: API-server mode):
//   kubelet_certificate_manager_client_ttl_seconds           gauge, seconds until the client cert's
//                                                             notAfter, truncated; +Inf when none
//   kubelet_certificate_manager_client_expiration_renew_errors counter, failed rotation attempts
//   kubelet_server_expiration_renew_errors                    counter, failed serving-cert renewals
//   kubelet_certificate_manager_server_rotation_seconds       histogram, age of the serving cert replaced
//   kubelet_certificate_manager_server_ttl_seconds            gauge, seconds until the serving cert's
//                                                             notAfter, truncated; +Inf when none
import type { Registry } from "../server/metrics.ts";

export interface ClientCertificateMetrics {
  /** A rotation attempt failed (client-go's certificateRenewFailure.Inc()). */
  renewError(): void;
}

export function clientCertificateMetrics(registry: Registry, cert: { notAfterMs(): number | undefined; nowMs(): number }): ClientCertificateMetrics {
  const errors = registry.counter({ name: "kubelet_certificate_manager_client_expiration_renew_errors", help: "Counter of certificate renewal errors." });
  registry.collect(() => {
    const notAfter = cert.notAfterMs();
    const value = notAfter === undefined ? Infinity : Math.trunc((notAfter - cert.nowMs()) / 1000);
    return [
      {
        name: "kubelet_certificate_manager_client_ttl_seconds",
        help: "Gauge of the TTL (time-to-live) of the Kubelet's client certificate. The value is in seconds until certificate expiry (negative if already expired). If client certificate is invalid or unused, the value will be +INF.",
        type: "gauge",
        samples: [{ value }],
      },
    ];
  });
  return { renewError: () => errors.inc() };
}

export interface ServerCertificateMetrics {
  renewError(): void;
  /** A new serving certificate replaced one that lived this many seconds. */
  rotated(previousAgeSeconds: number): void;
}

/** upstream's buckets: 1 minute, 1 hour, 4 hours, 1 day, 1 week, 1 month, 3 months, 6 months, 1 year, 4 years. */
export const SERVER_ROTATION_BUCKETS = [60, 3600, 14400, 86400, 604800, 2592000, 7776000, 15552000, 31104000, 124416000] as const;

export function serverCertificateMetrics(
  registry: Registry,
  cert: { notAfterMs(): number | undefined; nowMs(): number } = { notAfterMs: () => undefined, nowMs: Date.now },
): ServerCertificateMetrics {
  const errors = registry.counter({ name: "kubelet_server_expiration_renew_errors", help: "Counter of certificate renewal errors." });
  const rotation = registry.histogram({
    name: "kubelet_certificate_manager_server_rotation_seconds",
    help: "Histogram of the number of seconds the previous certificate lived before being rotated.",
    buckets: SERVER_ROTATION_BUCKETS,
  });
  registry.collect(() => {
    const notAfter = cert.notAfterMs();
    return [
      {
        name: "kubelet_certificate_manager_server_ttl_seconds",
        help: "Gauge of the shortest TTL (time-to-live) of the Kubelet's serving certificate. The value is in seconds until certificate expiry (negative if already expired). If serving certificate is invalid or unused, the value will be +INF.",
        type: "gauge",
        samples: [{ value: notAfter === undefined ? Infinity : Math.trunc((notAfter - cert.nowMs()) / 1000) }],
      },
    ];
  });
  return { renewError: () => errors.inc(), rotated: (s) => rotation.observe(s) };
}
