// The kubelet's serving-certificate manager with serverTLSBootstrap (upstream
// pkg/kubelet/certificate/kubelet.go NewKubeletServerCertificateManager over client-go's
// util/certificate manager, with the "kubelet-server" file store under certDirectory):
//   load <certDir>/kubelet-server-current.pem → the deadline is now when there is no certificate or
//   it does not match the node's addresses, else notBefore + 70–90 % of its life (jittered) → at the
//   deadline: new ECDSA P-256 key, CSR (generateName csr-, signer kubernetes.io/kubelet-serving),
//   wait up to 15 min for approval + issuance → kubelet-server-<time>.pem + the -current symlink →
//   subscribers (the TLS listener) switch without a restart. Failures back off 2 s ×2 up to 32 s,
//   then every 32 s, as upstream's ExponentialBackoff + PollInfinite. No addresses yet ⇒ no request
//   (checked every second), as upstream's nil template.
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Clock, TimerHandle } from "../../clock.ts";
import { kv, log } from "../../log.ts";
import type { KubeClient } from "../client.ts";
import { csrSchema } from "../types.ts";
import { storeCertPair, waitForCertificate } from "./bootstrap.ts";
import { createCsrPem, generateKeyPem, keyFromPem } from "./csr.ts";
import { rotationDeadlineMs } from "./rotation.ts";
import {
  certSatisfiesTemplate,
  KUBELET_SERVING_SIGNER,
  SERVING_USAGES,
  servingTemplate,
  type NodeAddressLike,
  type ServingTemplate,
} from "./serving-template.ts";

export const SERVER_CERT_PREFIX = "kubelet-server";
export const CURRENT_SERVER_CERT = `${SERVER_CERT_PREFIX}-current.pem`;
const CSR_PATH = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
/** upstream certificateWaitTimeout. */
const WAIT_TIMEOUT_MS = 15 * 60_000;
const BACKOFF_MS = [2000, 4000, 8000, 16_000, 32_000];

export interface ServingPair {
  certPem: string;
  keyPem: string;
  notBeforeMs: number;
  notAfterMs: number;
}

export interface ServerCertManagerDeps {
  certDir: string;
  nodeName: string;
  clock: Clock;
  /** The node's status addresses (upstream: the last observed ones). */
  addresses: () => readonly NodeAddressLike[];
  /** AllowDNSOnlyNodeCSR feature gate. */
  allowDnsOnly?: boolean;
  rand?: () => number;
  waitTimeoutMs?: number;
  /** A renewal attempt failed (kubelet_server_expiration_renew_errors). */
  onRenewError?(error: Error): void;
  /** A certificate replaced an older one that lived this long (kubelet_certificate_manager_server_rotation_seconds). */
  onRotated?(previousAgeSeconds: number): void;
}

export interface ServerCertManager {
  /** Reads the stored pair, if any (before the listener starts, so it serves it at once). */
  load(): Promise<void>;
  /** Starts the rotation loop with the client that sends the CSRs. */
  start(client: KubeClient): void;
  stop(): void;
  current(): ServingPair | undefined;
  /** Called after every new certificate; returns the unsubscribe function. */
  subscribe(fn: (pair: ServingPair) => void): () => void;
  /** The pending rotation time (epoch ms), once scheduled. */
  deadline(): number | undefined;
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;
const PEM_KEY = /-----BEGIN (?:EC |RSA )?PRIVATE KEY-----[\s\S]+?-----END (?:EC |RSA )?PRIVATE KEY-----\n?/;

/** A cert + key PEM file as the file store writes it; throws naming the file when it is not one. */
export function parsePair(pem: string, file: string): ServingPair {
  const certs = pem.match(PEM_CERT);
  const key = PEM_KEY.exec(pem)?.[0];
  if (!certs?.length || !key) throw new Error(`${file}: expected a PEM certificate and private key`);
  const leaf = new X509Certificate(certs[0]!);
  if (!leaf.checkPrivateKey(keyFromPem(key))) throw new Error(`${file}: the private key does not match the certificate`);
  return { certPem: certs.join(""), keyPem: key, notBeforeMs: leaf.validFromDate.getTime(), notAfterMs: leaf.validToDate.getTime() };
}

/** Sends the serving CSR for the template; resolves with the issued certificate (PEM). */
export async function requestServingCertificate(client: KubeClient, keyPem: string, t: ServingTemplate, signal: AbortSignal): Promise<string> {
  const request = Buffer.from(
    createCsrPem(keyFromPem(keyPem), { commonName: t.commonName, organizations: t.organizations }, { dnsNames: t.dnsNames, ipAddresses: t.ipAddresses }),
  ).toString("base64");
  const body = {
    apiVersion: "certificates.k8s.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { generateName: "csr-" },
    spec: { request, signerName: KUBELET_SERVING_SIGNER, usages: [...SERVING_USAGES] },
  };
  const created = await client.request({ method: "POST", path: CSR_PATH, body, schema: csrSchema, signal });
  log.info(
    `Waiting for the serving certificate to be approved and issued ${kv({ csr: created.metadata.name, signer: KUBELET_SERVING_SIGNER, dnsNames: t.dnsNames.join(","), ips: t.ipAddresses.join(",") })}`,
  );
  return waitForCertificate(client, created.metadata.name, signal);
}

export function createServerCertManager(d: ServerCertManagerDeps): ServerCertManager {
  const rand = d.rand ?? Math.random;
  const subscribers = new Set<(p: ServingPair) => void>();
  const abort = new AbortController();
  let pair: ServingPair | undefined;
  let client: KubeClient | undefined;
  let timer: TimerHandle | undefined;
  let deadlineMs: number | undefined;
  let failures = 0;
  let stopped = false;
  let waitingForAddresses = false;

  const after = (ms: number) => {
    if (!stopped) timer = d.clock.setTimeout(() => void tick(), Math.max(0, ms));
  };

  /** upstream nextRotationDeadline: now when missing or not matching the template. */
  function nextDeadline(t: ServingTemplate): number {
    if (!pair || !certSatisfiesTemplate(new X509Certificate(pair.certPem), t)) return d.clock.now();
    return rotationDeadlineMs(pair.notBeforeMs, pair.notAfterMs, rand());
  }

  async function tick(): Promise<void> {
    if (stopped || !client) return;
    const t = servingTemplate(d.nodeName, d.addresses(), d.allowDnsOnly);
    if (!t) {
      if (!waitingForAddresses) log.info(`No node addresses to request a serving certificate for yet ${kv({ node: d.nodeName })}`);
      waitingForAddresses = true;
      return after(1000);
    }
    waitingForAddresses = false;
    deadlineMs = nextDeadline(t);
    const waitMs = deadlineMs - d.clock.now();
    if (waitMs > 0) {
      log.info(
        `Waiting for next certificate rotation ${kv({ certificate: "kubelet-serving", notAfter: new Date(pair!.notAfterMs).toISOString(), deadline: new Date(deadlineMs).toISOString(), waitS: Math.round(waitMs / 1000) })}`,
      );
      return after(waitMs);
    }
    try {
      await rotate(client, t);
      failures = 0;
      return after(0);
    } catch (e) {
      if (stopped) return;
      d.onRenewError?.(e as Error);
      const retryMs = BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)]!;
      failures++;
      log.error(`Failed to rotate the serving certificate, retrying ${kv({ error: (e as Error).message, retryS: retryMs / 1000 })}`);
      return after(retryMs);
    }
  }

  async function rotate(c: KubeClient, t: ServingTemplate): Promise<void> {
    log.info(`Rotating certificates ${kv({ certificate: "kubelet-serving", node: d.nodeName })}`);
    const keyPem = generateKeyPem();
    const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(d.waitTimeoutMs ?? WAIT_TIMEOUT_MS)]);
    const certPem = await requestServingCertificate(c, keyPem, t, signal);
    const file = await storeCertPair(d.certDir, SERVER_CERT_PREFIX, certPem, keyPem, d.clock.now());
    const next = parsePair(`${certPem.trimEnd()}\n${keyPem}`, file);
    const previous = pair;
    pair = next;
    if (previous) d.onRotated?.((d.clock.now() - previous.notBeforeMs) / 1000);
    log.info(`Serving certificate rotated ${kv({ file, notAfter: new Date(next.notAfterMs).toISOString() })}`);
    for (const fn of subscribers) fn(next);
  }

  return {
    async load() {
      const file = join(d.certDir, CURRENT_SERVER_CERT);
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch {
        log.info(`No serving certificate stored yet, one will be requested ${kv({ file })}`);
        return;
      }
      try {
        pair = parsePair(text, file);
        log.info(`Loaded the serving certificate ${kv({ file, notAfter: new Date(pair.notAfterMs).toISOString() })}`);
      } catch (e) {
        log.warn(`Ignoring an unusable stored serving certificate, a new one will be requested ${kv({ file, error: (e as Error).message })}`);
      }
    },
    start(c) {
      client = c;
      void tick();
    },
    stop() {
      stopped = true;
      abort.abort();
      if (timer) d.clock.clearTimeout(timer);
    },
    current: () => pair,
    subscribe(fn) {
      subscribers.add(fn);
      return () => subscribers.delete(fn);
    },
    deadline: () => deadlineMs,
  };
}
