// Client certificate rotation (upstream client-go util/certificate Manager, as the kubelet runs it
// with rotateCertificates): the rotation deadline is a jittered 70–90 % of the certificate's
// lifetime after notBefore; at the deadline a new key and CSR go out authenticated with the current
// certificate, and once approved the new pair is stored (kubelet-client-current.pem moves) and the
// live clients switch to it. A failed attempt is retried with back-off (1 s → 5 min).
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Clock, TimerHandle } from "../../clock.ts";
import { kv, log } from "../../log.ts";
import type { KubeClient } from "../client.ts";
import { requestCertificate, storeClientCert } from "./bootstrap.ts";
import { generateKeyPem } from "./csr.ts";

/** upstream nextRotationDeadline: notBefore + total × (0.7 + 0.2 × rand). */
export function rotationDeadlineMs(notBeforeMs: number, notAfterMs: number, rand: number): number {
  const total = notAfterMs - notBeforeMs;
  return notBeforeMs + total * (0.7 + 0.2 * rand);
}

export interface CertRotationDeps {
  /** The client authenticated with the current certificate (requests the new one). */
  client: KubeClient;
  certDir: string;
  nodeName: string;
  clock: Clock;
  rand?: () => number;
  /** Called with the new pair once stored; the agent points every client at it. */
  onRotated(certPem: string, keyPem: string): void;
  /** A rotation attempt failed (kubelet_certificate_manager_client_expiration_renew_errors). */
  onRenewError?(error: Error): void;
}

export interface CertRotation {
  start(): Promise<void>;
  stop(): void;
  /** Deadline of the current certificate (epoch ms), once known. */
  deadline(): number | undefined;
  /** notAfter of the current certificate (epoch ms), once known. */
  notAfter(): number | undefined;
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

export function createCertRotation(d: CertRotationDeps): CertRotation {
  const rand = d.rand ?? Math.random;
  let timer: TimerHandle | undefined;
  let stopped = false;
  let deadlineMs: number | undefined;
  let notAfterMs: number | undefined;
  let retryMs = 1000;
  const abort = new AbortController();

  function schedule(certPem: string): void {
    const c = new X509Certificate(certPem);
    notAfterMs = c.validToDate.getTime();
    deadlineMs = rotationDeadlineMs(c.validFromDate.getTime(), c.validToDate.getTime(), rand());
    const waitMs = Math.max(0, deadlineMs - d.clock.now());
    log.info(
      `Certificate rotation deadline ${kv({ notAfter: c.validToDate.toISOString(), deadline: new Date(deadlineMs).toISOString(), waitS: Math.round(waitMs / 1000) })}`,
    );
    if (!stopped) timer = d.clock.setTimeout(() => void rotate(), waitMs);
  }

  async function rotate(): Promise<void> {
    if (stopped) return;
    try {
      log.info(`Rotating client certificate ${kv({ node: d.nodeName })}`);
      const keyPem = generateKeyPem();
      const certPem = await requestCertificate(d.client, keyPem, d.nodeName, abort.signal);
      await storeClientCert(d.certDir, certPem, keyPem, d.clock.now());
      d.onRotated(certPem, keyPem);
      retryMs = 1000;
      schedule(certPem);
    } catch (e) {
      if (stopped) return;
      d.onRenewError?.(e as Error);
      log.error(`Failed to rotate the client certificate, retrying ${kv({ error: (e as Error).message, retryS: retryMs / 1000 })}`);
      timer = d.clock.setTimeout(() => void rotate(), retryMs);
      retryMs = Math.min(retryMs * 2, 300_000);
    }
  }

  return {
    async start() {
      const pem = await readFile(`${d.certDir}/kubelet-client-current.pem`, "utf8");
      const cert = PEM_CERT.exec(pem)?.[0];
      if (!cert) throw new Error(`no certificate in ${d.certDir}/kubelet-client-current.pem`);
      schedule(cert);
    },
    stop() {
      stopped = true;
      abort.abort();
      if (timer) d.clock.clearTimeout(timer);
    },
    deadline: () => deadlineMs,
    notAfter: () => notAfterMs,
  };
}
