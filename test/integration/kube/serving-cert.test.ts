// serverTLSBootstrap against the API-server double: the serving CSR (kubelet-serving signer, the
// node's addresses as SANs) stays pending until someone approves it — meanwhile the TLS listener
// refuses handshakes — then the certificate signed by the cluster CA is stored under certDir and
// served; openssl and curl verify it with the cluster CA. A short-lived certificate is rotated at
// 70–90 % of its life and the same listener serves the new one.
import { afterAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { mkdtemp, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../../src/clock.ts";
import { createServerCertManager, type ServerCertManager } from "../../../src/kube/bootstrap/index.ts";
import { createKubeClient, loadKubeconfig } from "../../../src/kube/index.ts";
import { startSecureServer, type SecureServer } from "../../../src/server/tls/secure-server.ts";
import { createRegistry } from "../../../src/server/metrics.ts";
import { serverCertificateMetrics } from "../../../src/metrics/index.ts";
import { startApiServer, type ApiServerDouble } from "../../support/apiserver/index.ts";
import { until } from "../../support/wait.ts";

const dir = await mkdtemp(join(tmpdir(), "serving-cert-"));
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await rm(dir, { recursive: true, force: true });
});

const CSRS = "certificatesigningrequests.certificates.k8s.io/";
const ADDRESSES = [
  { type: "InternalIP", address: "127.0.0.1" },
  { type: "Hostname", address: "srv-node" },
];

async function nodeClient(api: ApiServerDouble, node: string) {
  const { certPem, keyPem } = await api.issueClientCert(`system:node:${node}`, ["system:nodes"]);
  const path = join(dir, `${node}.kubeconfig`);
  await api.writeKubeconfig(path, { certPem, keyPem });
  return createKubeClient(await loadKubeconfig(path), { clock: realClock });
}

/** A TLS listener fed by the manager, as listen.ts wires it. */
async function listener(m: ServerCertManager): Promise<SecureServer> {
  const initial = m.current();
  const server = await startSecureServer({
    hostname: "127.0.0.1",
    port: 0,
    tls: true,
    cert: initial?.certPem,
    key: initial?.keyPem,
    handler: async () => new Response("ok\n"),
  });
  const off = m.subscribe((p) => server.setCertificate(p.certPem, p.keyPem));
  cleanups.push(() => (off(), server.stop()));
  return server;
}

async function run(cmd: string[]): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: out + err };
}

/** The serial of the certificate the listener presents, verified against the cluster CA by openssl. */
async function servedSerial(port: number, caFile: string): Promise<string> {
  const r = await run([
    "sh",
    "-c",
    `openssl s_client -connect 127.0.0.1:${port} -CAfile ${caFile} -verify_return_error -verify_ip 127.0.0.1 </dev/null 2>&1 | openssl x509 -noout -serial`,
  ]);
  if (r.code !== 0) throw new Error(`openssl s_client: ${r.out}`);
  return r.out
    .trim()
    .replace(/^serial=/, "")
    .toUpperCase();
}

describe("serving certificate awaiting approval", async () => {
  const api = await startApiServer({ storage: "memory" });
  cleanups.push(() => api.close());
  const caFile = join(dir, "ca.crt");
  await writeFile(caFile, api.caPem);
  const certDir = join(dir, "pki-a");
  const registry = createRegistry();
  let manager: ServerCertManager;
  const metrics = serverCertificateMetrics(registry, { notAfterMs: () => manager?.current()?.notAfterMs, nowMs: () => Date.now() });
  manager = createServerCertManager({
    certDir,
    nodeName: "srv-node",
    clock: realClock,
    addresses: () => ADDRESSES,
    onRenewError: () => metrics.renewError(),
    onRotated: (s) => metrics.rotated(s),
  });
  cleanups.push(() => manager.stop());
  await manager.load();
  const server = await listener(manager);
  manager.start(await nodeClient(api, "srv-node"));

  test("the CSR asks the kubelet-serving signer for the node's addresses; nothing is served before approval", async () => {
    const csr = await until("the serving CSR", async () => (await api.store.list(CSRS)).items[0]);
    expect(csr.metadata.name).toMatch(/^csr-/);
    expect(csr.spec.signerName).toBe("kubernetes.io/kubelet-serving");
    expect(csr.spec.usages).toEqual(["digital signature", "server auth"]);
    expect(csr.spec.username).toBe("system:node:srv-node");
    expect(csr.status?.certificate).toBeUndefined();
    expect(manager.current()).toBeUndefined();
    const r = await run(["sh", "-c", `openssl s_client -connect 127.0.0.1:${server.port} -CAfile ${caFile} </dev/null`]);
    expect(r.code).not.toBe(0);
    expect(registry.render()).toContain("kubelet_certificate_manager_server_ttl_seconds +Inf");
  });

  test("approved: the certificate, signed by the cluster CA, is stored and served; openssl and curl verify it", async () => {
    const csr = (await api.store.list(CSRS)).items[0]!;
    await api.approveCsr(csr.metadata.name);
    const pair = await until("the serving certificate", () => manager.current(), 30_000);
    const cert = new X509Certificate(pair.certPem);
    expect(cert.verify(new X509Certificate(api.caPem).publicKey)).toBe(true);
    expect(cert.subject).toBe("O=system:nodes\nCN=system:node:srv-node");
    expect(cert.subjectAltName).toBe("DNS:srv-node, IP Address:127.0.0.1");
    expect(await readlink(join(certDir, "kubelet-server-current.pem"))).toMatch(/kubelet-server-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$/);
    expect(await until("served", () => servedSerial(server.port, caFile).catch(() => undefined), 10_000)).toBe(cert.serialNumber.toUpperCase());
    const curl = await run(["curl", "-sS", "--cacert", caFile, `https://127.0.0.1:${server.port}/`]);
    expect(curl).toEqual({ code: 0, out: "ok\n" });
    const ttl = Number(/^kubelet_certificate_manager_server_ttl_seconds (\S+)$/m.exec(registry.render())![1]);
    expect(ttl).toBeGreaterThan(80_000);
    expect(ttl).toBeLessThanOrEqual(86_400);
  });

  test("a restarted manager loads the stored pair and serves it before asking again", async () => {
    const again = createServerCertManager({ certDir, nodeName: "srv-node", clock: realClock, addresses: () => ADDRESSES });
    await again.load();
    expect(again.current()?.certPem).toBe(manager.current()!.certPem);
  });
});

describe("kubelet-serving signer validation", async () => {
  test("no node address: no request; a CSR without system:nodes is failed by the signer", async () => {
    const api = await startApiServer({ storage: "memory", autoApproveServingCsrs: true });
    cleanups.push(() => api.close());
    // No address at all: no request goes out (upstream's nil template).
    const m = createServerCertManager({ certDir: join(dir, "pki-v"), nodeName: "v", clock: realClock, addresses: () => [] });
    cleanups.push(() => m.stop());
    m.start(await nodeClient(api, "v"));
    // A hand-made CSR from the double's point of view: a bad organization.
    const { createCsrPem, generateKeyPem, keyFromPem } = await import("../../../src/kube/bootstrap/index.ts");
    const request = Buffer.from(
      createCsrPem(keyFromPem(generateKeyPem()), { commonName: "system:node:v", organizations: ["evil"] }, { ipAddresses: ["127.0.0.1"] }),
    ).toString("base64");
    await api.store.put(`${CSRS}/bad`, {
      apiVersion: "certificates.k8s.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { name: "bad" },
      spec: { request, signerName: "kubernetes.io/kubelet-serving", usages: ["digital signature", "server auth"] },
    });
    const failed = await until(
      "the signer's verdict",
      async () => (await api.store.get(`${CSRS}/bad`))?.status?.conditions?.find((c: { type: string }) => c.type === "Failed"),
      30_000,
    );
    expect(failed).toMatchObject({ reason: "SignerValidationFailure", message: "subject organization is not system:nodes" });
    expect((await api.store.list(CSRS)).items.map((c) => c.metadata.name)).toEqual(["bad"]);
  });
});

describe("rotation of a short-lived serving certificate", async () => {
  test("at 70–90 % of its life a new certificate is requested and the same listener serves it", async () => {
    const api = await startApiServer({ storage: "memory", autoApproveServingCsrs: true, servingCertLifetimeSeconds: 20 });
    cleanups.push(() => api.close());
    const caFile = join(dir, "ca-rot.crt");
    await writeFile(caFile, api.caPem);
    const registry = createRegistry();
    let m: ServerCertManager;
    const metrics = serverCertificateMetrics(registry, { notAfterMs: () => m?.current()?.notAfterMs, nowMs: () => Date.now() });
    m = createServerCertManager({
      certDir: join(dir, "pki-r"),
      nodeName: "rot-node",
      clock: realClock,
      addresses: () => [{ type: "InternalIP", address: "127.0.0.1" }],
      rand: () => 0,
      onRotated: (s) => metrics.rotated(s),
    });
    cleanups.push(() => m.stop());
    const server = await listener(m);
    m.start(await nodeClient(api, "rot-node"));
    const first = await until("the first certificate", () => m.current(), 30_000);
    const firstSerial = new X509Certificate(first.certPem).serialNumber.toUpperCase();
    expect(await until("first served", () => servedSerial(server.port, caFile).catch(() => undefined), 10_000)).toBe(firstSerial);
    expect(m.deadline()).toBe(first.notBeforeMs + 0.7 * (first.notAfterMs - first.notBeforeMs));
    const second = await until("the rotated certificate", () => (m.current() !== first ? m.current() : undefined), 60_000);
    const secondSerial = new X509Certificate(second.certPem).serialNumber.toUpperCase();
    expect(secondSerial).not.toBe(firstSerial);
    expect(await until("rotated served", () => servedSerial(server.port, caFile).catch(() => undefined), 10_000)).toBe(secondSerial);
    expect(registry.render()).toMatch(/kubelet_certificate_manager_server_rotation_seconds_count 1\b/);
    expect((await api.store.list(CSRS)).items.length).toBe(2);
  });
});
