// The kubelet's TLS bootstrap (upstream pkg/kubelet/certificate/bootstrap.LoadClientCert):
//   --kubeconfig exists with a client certificate still valid → nothing to do;
//   else, with --bootstrap-kubeconfig: key (reused from <certDir>/kubelet-client.key.tmp across
//   restarts) → CSR "node-csr-<digest>" for CN=system:node:<node>, O=system:nodes, signer
//   kubernetes.io/kube-apiserver-client-kubelet → wait (watch) for Approved + certificate, up to
//   an hour → <certDir>/kubelet-client-<time>.pem (cert + key) with the kubelet-client-current.pem
//   symlink → --kubeconfig written pointing at it, server and CA from the bootstrap kubeconfig.
import { createHash, createPublicKey, generateKeyPair, X509Certificate } from "node:crypto";
import { mkdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../../atomic-file.ts";
import type { Clock } from "../../clock.ts";
import { kv, log } from "../../log.ts";
import { createKubeClient, type KubeClient, type RequestObserver } from "../client.ts";
import { isAlreadyExists } from "../errors.ts";
import { loadKubeconfig, renderKubeconfig, type RestConfig } from "../kubeconfig.ts";
import { csrSchema, type CertificateSigningRequest } from "../types.ts";
import { watchEvents } from "../watch.ts";
import { createCsrPem, keyFromPem } from "./csr.ts";

export const KUBELET_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client-kubelet";
export const CURRENT_CLIENT_CERT = "kubelet-client-current.pem";
const CSR_PATH = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
const USAGES = ["digital signature", "client auth"];

export interface BootstrapOpts {
  kubeconfigPath: string;
  bootstrapKubeconfigPath?: string;
  certDir: string;
  nodeName: string;
  clock: Clock;
  signal?: AbortSignal;
  /** How long to wait for approval (upstream: 1 hour). */
  waitTimeoutMs?: number;
  /** rest_client_* for the bootstrap client's requests too (client-go counts every client). */
  observer?: RequestObserver;
}

export class BootstrapError extends Error {}

/** True when the kubeconfig exists and its client certificate (if any) is valid now. */
export async function isClientConfigStillValid(path: string, nowMs: number): Promise<boolean> {
  let cfg: RestConfig;
  try {
    cfg = await loadKubeconfig(path);
  } catch {
    return false;
  }
  if (!cfg.certPem) return true;
  try {
    const c = new X509Certificate(cfg.certPem);
    const ok = c.validToDate.getTime() > nowMs && c.validFromDate.getTime() <= nowMs;
    if (!ok) log.info(`Part of the existing bootstrap client certificate in the kubeconfig is expired ${kv({ path, notAfter: c.validToDate.toISOString() })}`);
    return ok;
  } catch (e) {
    log.warn(`Unable to read the client certificate of the existing kubeconfig ${kv({ path, error: (e as Error).message })}`);
    return false;
  }
}

/** upstream digestedName: the CSR's name is a digest of the public key, subject and usages, so a restart finds its own CSR. */
function csrName(keyPem: string, nodeName: string): string {
  const spki = createPublicKey(keyPem).export({ type: "spki", format: "der" });
  const h = createHash("sha512").update(spki).update(`|O=system:nodes|CN=system:node:${nodeName}|`).update(USAGES.join("|"));
  return `node-csr-${h.digest("base64url")}`;
}

/** A new ECDSA P-256 key (as generateKeyPem), generated off the event loop: the first one costs ~10 ms cold. */
const generateKeyPemAsync = () =>
  new Promise<string>((resolve, reject) =>
    generateKeyPair(
      "ec",
      { namedCurve: "prime256v1", privateKeyEncoding: { type: "sec1", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } },
      (e, _pub, key) => (e ? reject(e) : resolve(key)),
    ),
  );

async function loadOrGenerateKey(path: string): Promise<string> {
  try {
    const pem = await readFile(path, "utf8");
    keyFromPem(pem);
    return pem;
  } catch {}
  const pem = await generateKeyPemAsync();
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  await writeFile(path, pem, { mode: 0o600 });
  return pem;
}

function issued(csr: CertificateSigningRequest): string | undefined {
  for (const c of csr.status?.conditions ?? []) {
    if (c.type === "Denied") throw new BootstrapError(`certificate signing request is denied, reason: ${c.reason ?? ""}, message: ${c.message ?? ""}`);
    if (c.type === "Failed") throw new BootstrapError(`certificate signing request failed, reason: ${c.reason ?? ""}, message: ${c.message ?? ""}`);
  }
  const approved = (csr.status?.conditions ?? []).some((c) => c.type === "Approved");
  return approved && csr.status?.certificate ? Buffer.from(csr.status.certificate, "base64").toString("utf8") : undefined;
}

/**
 * Watches the CSR until it is issued (its PEM), denied or failed (BootstrapError), or the signal ends.
 * `created` is the CSR as the create returned it: the watch starts from its resourceVersion without
 * reading it again (upstream's UntilWithSync lists first; the create's answer is that list here).
 */
export async function waitForCertificate(client: KubeClient, name: string, signal: AbortSignal, created?: CertificateSigningRequest): Promise<string> {
  let first = created;
  while (!signal.aborted) {
    const csr = first ?? (await client.request({ path: `${CSR_PATH}/${name}`, schema: csrSchema, signal }));
    first = undefined;
    const pem = issued(csr);
    if (pem) return pem;
    try {
      for await (const ev of watchEvents(
        client,
        CSR_PATH,
        { fieldSelector: `metadata.name=${name}`, resourceVersion: csr.metadata.resourceVersion, timeoutSeconds: "60" },
        signal,
      )) {
        if (ev.type === "ADDED" || ev.type === "MODIFIED") {
          const got = issued(csrSchema.parse(ev.object));
          if (got) return got;
        }
        if (ev.type === "DELETED") throw new BootstrapError(`certificate signing request ${name} was deleted`);
      }
    } catch (e) {
      if (e instanceof BootstrapError || signal.aborted) throw e;
      // A dropped or expired watch: read the CSR again and watch from there.
    }
  }
  throw new BootstrapError(`timed out waiting for the certificate of ${name}`);
}

export async function requestCertificate(client: KubeClient, keyPem: string, nodeName: string, signal: AbortSignal): Promise<string> {
  const name = csrName(keyPem, nodeName);
  const request = Buffer.from(createCsrPem(keyFromPem(keyPem), { commonName: `system:node:${nodeName}`, organizations: ["system:nodes"] })).toString("base64");
  const body = {
    apiVersion: "certificates.k8s.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { name },
    spec: { request, signerName: KUBELET_CLIENT_SIGNER, usages: USAGES },
  };
  let created: CertificateSigningRequest | undefined;
  try {
    created = await client.request({ method: "POST", path: CSR_PATH, body, schema: csrSchema, signal });
    log.info(`Waiting for client certificate ${kv({ csr: name, signer: KUBELET_CLIENT_SIGNER })}`);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    log.info(`Certificate signing request already exists, waiting for it ${kv({ csr: name })}`);
  }
  return waitForCertificate(client, name, signal, created);
}

const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace(/[T:]/g, "-");

/** Writes <certDir>/kubelet-client-<time>.pem and points kubelet-client-current.pem at it. */
export function storeClientCert(certDir: string, certPem: string, keyPem: string, nowMs: number): Promise<string> {
  return storeCertPair(certDir, "kubelet-client", certPem, keyPem, nowMs);
}

export class CertKeyMismatchError extends Error {
  override name = "CertKeyMismatchError";
}

/**
 * upstream tls.X509KeyPair, which fileStore.Update runs before writing: the issued PEM must be a
 * certificate whose public key is the one of `keyPem` — a signer that answered with another node's
 * (or any other) certificate must not become ours, nor replace a working pair.
 */
export function checkCertMatchesKey(certPem: string, keyPem: string): void {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (e) {
    throw new CertKeyMismatchError(`issued certificate is not a PEM certificate: ${(e as Error).message}`);
  }
  if (!cert.checkPrivateKey(keyFromPem(keyPem)))
    throw new CertKeyMismatchError(`tls: private key does not match public key (certificate subject ${JSON.stringify(cert.subject)})`);
}

/** upstream certificate.NewFileStore's Update: <certDir>/<prefix>-<time>.pem (cert + key), <prefix>-current.pem → it. */
export async function storeCertPair(certDir: string, prefix: string, certPem: string, keyPem: string, nowMs: number): Promise<string> {
  checkCertMatchesKey(certPem, keyPem);
  await mkdir(certDir, { recursive: true, mode: 0o755 });
  const file = join(certDir, `${prefix}-${stamp(nowMs)}.pem`);
  await writeFile(file, `${certPem.trimEnd()}\n${keyPem.trimEnd()}\n`, { mode: 0o600 });
  const current = join(certDir, `${prefix}-current.pem`);
  const tmp = `${current}.tmp-${process.pid}`;
  await rm(tmp, { force: true });
  await symlink(file, tmp);
  await rename(tmp, current);
  return current;
}

/** Ensures --kubeconfig holds a usable client identity, bootstrapping one if needed. */
export async function loadClientCert(o: BootstrapOpts): Promise<void> {
  if (await isClientConfigStillValid(o.kubeconfigPath, o.clock.now())) {
    if (o.bootstrapKubeconfigPath) log.info(`Kubeconfig exists and is valid, skipping bootstrap ${kv({ path: o.kubeconfigPath })}`);
    return;
  }
  if (!o.bootstrapKubeconfigPath) throw new BootstrapError(`unable to load kubeconfig ${o.kubeconfigPath} and no --bootstrap-kubeconfig is set`);
  await bootstrapClientCert({ ...o, bootstrapKubeconfigPath: o.bootstrapKubeconfigPath });
}

/** The bootstrap itself, for a caller that already found --kubeconfig unusable (loadClientCert's second half). */
export async function bootstrapClientCert(o: BootstrapOpts & { bootstrapKubeconfigPath: string }): Promise<void> {
  log.info(
    `Using bootstrap kubeconfig to generate TLS client cert, key and kubeconfig file ${kv({ bootstrap: o.bootstrapKubeconfigPath, kubeconfig: o.kubeconfigPath, certDir: o.certDir })}`,
  );
  const keyPath = join(o.certDir, "kubelet-client.key.tmp");
  // The key is made (or read back) while the bootstrap kubeconfig is read: both before the first request.
  const [bootstrap, keyPem] = await Promise.all([loadKubeconfig(o.bootstrapKubeconfigPath), loadOrGenerateKey(keyPath)]);
  const client = createKubeClient(bootstrap, { clock: o.clock, timeoutMs: 30_000, observer: o.observer });
  const timeout = AbortSignal.timeout(o.waitTimeoutMs ?? 3_600_000);
  const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
  const certPem = await requestCertificate(client, keyPem, o.nodeName, signal);
  const current = await storeClientCert(o.certDir, certPem, keyPem, o.clock.now());
  const kubeconfig = renderKubeconfig({
    server: bootstrap.server,
    caPem: bootstrap.caPem,
    insecureSkipTLSVerify: bootstrap.insecureSkipTLSVerify,
    certFile: current,
    keyFile: current,
  });
  await mkdir(dirname(o.kubeconfigPath), { recursive: true });
  await writeFileAtomic(o.kubeconfigPath, kubeconfig, { mode: 0o600 });
  await rm(keyPath, { force: true });
  log.info(`Client certificate obtained and kubeconfig written ${kv({ kubeconfig: o.kubeconfigPath, cert: current })}`);
}
