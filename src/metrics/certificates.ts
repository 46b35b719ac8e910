// The kubelet's certificate manager series (upstream cmd/kubelet/app/server.go and
// pkg/kubelet/certificate/kubelet.go), registered as upstream registers them — only when the
// certificate is managed (rotateCertificates; serving: API-server mode):
//   kubelet_certificate_manager_client_ttl_seconds           gauge, seconds until the client cert's
//                                                             notAfter, truncated; +Inf when none
//   kubelet_certificate_manager_client_expiration_renew_errors counter, failed rotation attempts
//   kubelet_server_expiration_renew_errors                    counter, failed serving-cert renewals
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
}

export function serverCertificateMetrics(registry: Registry): ServerCertificateMetrics {
  const errors = registry.counter({ name: "kubelet_server_expiration_renew_errors", help: "Counter of certificate renewal errors." });
  return { renewError: () => errors.inc() };
}
