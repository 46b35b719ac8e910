// serverTLSBootstrap against a real control plane (test/support/upstream): the node's kubelet-serving
// CSR waits for an admin (kube-controller-manager approves only client CSRs) while the main port refuses
// TLS handshakes; `kubectl certificate approve` → the controller-manager signs it with the cluster CA →
// the port serves it for the node's addresses (its Hostname and InternalIP) — curl and openssl verify
// it with the cluster CA — and /metrics shows its TTL. A short-lived certificate renewed and served on
// the same port: serving-rotation.test.ts (the double, whose certificates live 30 s; the real signer's
// shortest lifetime is 10 minutes). Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { detectNodeIP } from "../../../src/node/addresses.ts";
import { issueCert } from "../../support/apiserver/pki.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { curl, servedSerial } from "../../support/pki.ts";
import { startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the serving certificate tests: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("serverTLSBootstrap", () => {
  let c: UpstreamCluster;
  let client: string[] = [];
  const servingCsrs = async (): Promise<any[]> => (await c.json("get", "csr")).items.filter((x: any) => x.spec.signerName === "kubernetes.io/kubelet-serving");
  /** The serving certificate's serial, verified against the cluster CA for the node's name. */
  const served = () => servedSerial(c.n.port, c.cp.caFile, c.n.node);
  /** curl to the main port as the node's name, the cluster CA verifying it, with the API server's client certificate. */
  const get = (path: string, withClient = true) =>
    curl(["--resolve", `${c.n.node}:${c.n.port}:127.0.0.1`, "--cacert", c.cp.caFile, ...(withClient ? client : []), `https://${c.n.node}:${c.n.port}${path}`]);

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "servingtls", binDir: bin.dir!, config: ["serverTLSBootstrap: true"] });
    const pair = await issueCert(c.cp.ca, c.cp.dir, "/O=system:masters/CN=kube-apiserver-kubelet-client");
    const [cert, key] = [join(c.cp.dir, "client.pem"), join(c.cp.dir, "client.key")];
    await writeFile(cert, pair.certPem);
    await writeFile(key, pair.keyPem);
    client = ["--cert", cert, "--key", key];
  }, 300_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("before approval: a pending kubelet-serving CSR of the node, and the main port refuses handshakes", async () => {
    const [csr] = await until("the serving CSR", async () => ((await servingCsrs()).length > 0 ? servingCsrs() : undefined), 30_000, { intervalMs: 500 });
    expect(csr.spec).toMatchObject({
      signerName: "kubernetes.io/kubelet-serving",
      username: `system:node:${c.n.node}`,
      usages: ["digital signature", "server auth"],
    });
    expect(csr.status?.conditions ?? []).toEqual([]);
    expect(csr.status?.certificate).toBeUndefined();
    expect((await get("/healthz")).status).toBe(0);
    expect(await served()).toBeUndefined();
  });

  test("kubectl certificate approve → the cluster-CA-signed certificate is served for the node's addresses; curl verifies it", async () => {
    const [csr] = await servingCsrs();
    expect(await c.cp.kubectl("certificate", "approve", csr.metadata.name)).toContain(
      `certificatesigningrequest.certificates.k8s.io/${csr.metadata.name} approved`,
    );
    const serial = await until("served", served, 30_000, { intervalMs: 300 });
    const current = join(c.n.base, "pki", "kubelet-server-current.pem");
    const cert = new X509Certificate(await Bun.file(current).text());
    expect(cert.serialNumber.toUpperCase()).toBe(serial);
    expect(cert.issuer).toBe("CN=kubernetes");
    expect(cert.subjectAltName).toBe(`DNS:${c.n.node}, IP Address:${detectNodeIP()}`);
    expect(await readlink(current)).toMatch(/kubelet-server-[\d-]+\.pem$/);
    expect(await get("/healthz")).toMatchObject({ status: 200, body: "ok" });
    expect((await get("/healthz", false)).status).toBe(401);
    const ttl = Number(/^kubelet_certificate_manager_server_ttl_seconds (\S+)$/m.exec((await get("/metrics")).body)?.[1]);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual((new Date(cert.validTo).getTime() - Date.now()) / 1000 + 5);
  });
});
