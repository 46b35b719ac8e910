// serverTLSBootstrap in the node agent, joined to the API-server double: the main port refuses TLS
// handshakes until the serving CSR is approved (with the real `kubectl certificate approve`), then
// serves the certificate the cluster CA signed for the node's addresses — curl and openssl verify
// it with the cluster CA — and a short-lived one is rotated and served on the same port without a
// restart; /metrics shows the serving certificate's TTL and the rotation. Needs root and containerd.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { NodeAgent } from "../../../src/agent.ts";
import type { ApiServerDouble } from "../../support/apiserver/index.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { freePort } from "../../support/binary.ts";
import { clusterPaths, joinDouble } from "../../support/cluster.ts";
import { until } from "../../support/wait.ts";

const { node: NODE, base: BASE } = clusterPaths("servingtls");
const CSRS = "certificatesigningrequests.certificates.k8s.io/";

async function run(cmd: string[], env?: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", stdin: "ignore", env: { ...process.env, ...env } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

describe.skipIf(!canRunContainerd())("serverTLSBootstrap", () => {
  let api: ApiServerDouble;
  let agent: NodeAgent;
  let stopJoined: (() => Promise<void>) | undefined;
  const port = freePort();
  const admin = join(BASE, "admin.kubeconfig");
  const caFile = join(BASE, "ca.crt");
  const clientCert = join(BASE, "client.pem");
  const clientKey = join(BASE, "client.key");

  const servingCsrs = async () => (await api.store.list(CSRS)).items.filter((c) => c.spec.signerName === "kubernetes.io/kubelet-serving");
  /** The serial of the certificate on the main port, verified by openssl against the cluster CA (127.0.0.1 as IP SAN). */
  async function servedSerial(): Promise<string | undefined> {
    const r = await run([
      "sh",
      "-c",
      `openssl s_client -connect 127.0.0.1:${port} -CAfile ${caFile} -verify_return_error -verify_ip 127.0.0.1 </dev/null 2>/dev/null | openssl x509 -noout -serial`,
    ]);
    return r.code === 0
      ? r.out
          .trim()
          .replace(/^serial=/, "")
          .toUpperCase()
      : undefined;
  }

  beforeAll(async () => {
    const joined = await joinDouble({
      name: "servingtls",
      port,
      // Certificates live 30 s (kube-controller-manager's --cluster-signing-duration, shortened), so one rotation happens within the test.
      api: { servingCertLifetimeSeconds: 30 },
      prepare: async (x) => {
        await writeFile(caFile, x.api.caPem);
        const c = await x.api.issueClientCert("kube-apiserver-kubelet-client", ["system:masters"]);
        await writeFile(clientCert, c.certPem);
        await writeFile(clientKey, c.keyPem);
      },
      config: [
        "serverTLSBootstrap: true",
        "address: 127.0.0.1",
        `authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: ${caFile} } }`,
        "authorization: { mode: AlwaysAllow }",
      ],
      flags: ["--node-ip=127.0.0.1"],
    });
    stopJoined = joined.stop;
    ({ api, agent } = joined);
  }, 600_000);

  afterAll(async () => {
    await stopJoined?.();
  }, 120_000);

  test("before approval: a pending kubelet-serving CSR for the node's addresses, and the main port refuses handshakes", async () => {
    const [csr] = await until("the serving CSR", async () => ((await servingCsrs()).length > 0 ? servingCsrs() : undefined), 30_000);
    expect(csr!.spec).toMatchObject({
      signerName: "kubernetes.io/kubelet-serving",
      username: `system:node:${NODE}`,
      usages: ["digital signature", "server auth"],
    });
    expect(csr!.status?.certificate).toBeUndefined();
    const curl = await run(["curl", "-sS", "--cacert", caFile, `https://127.0.0.1:${port}/healthz`]);
    expect(curl.code).not.toBe(0);
    expect(await servedSerial()).toBeUndefined();
  });

  test("kubectl certificate approve → the cluster-CA-signed certificate is served; curl verifies it", async () => {
    const [csr] = await servingCsrs();
    const out = await run(["kubectl", "--kubeconfig", admin, "certificate", "approve", csr!.metadata.name], { HOME: BASE });
    expect(out.out).toContain(`certificatesigningrequest.certificates.k8s.io/${csr!.metadata.name} approved`);
    const serial = await until("served", servedSerial, 30_000);
    const current = await Bun.file(join(BASE, "pki", "kubelet-server-current.pem")).text();
    const cert = new X509Certificate(current);
    expect(cert.serialNumber.toUpperCase()).toBe(serial);
    expect(cert.subjectAltName).toBe(`DNS:${NODE}, IP Address:127.0.0.1`);
    expect(await readlink(join(BASE, "pki", "kubelet-server-current.pem"))).toMatch(/kubelet-server-[\d-]+\.pem$/);
    const curl = await run(["curl", "-sS", "--cacert", caFile, "--cert", clientCert, "--key", clientKey, `https://127.0.0.1:${port}/healthz`]);
    expect(curl).toMatchObject({ code: 0, out: "ok" });
    const metrics = await run(["curl", "-sS", "--cacert", caFile, "--cert", clientCert, "--key", clientKey, `https://127.0.0.1:${port}/metrics`]);
    const ttl = Number(/^kubelet_certificate_manager_server_ttl_seconds (\S+)$/m.exec(metrics.out)?.[1]);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(30);
  });

  test("the short-lived certificate is renewed at 70–90 % of its life and served on the same port without a restart", async () => {
    const before = await until("served", servedSerial, 10_000);
    // The list is in key (name) order, not creation order: the renewal is the one not approved yet.
    const pending = (c: { status?: { conditions?: { type: string }[] } }) => !(c.status?.conditions ?? []).some((x) => x.type === "Approved");
    const second = await until("the renewal CSR", async () => (await servingCsrs()).find(pending), 60_000);
    await api.approveCsr(second.metadata.name);
    const after = await until(
      "the renewed certificate served",
      async () => {
        const s = await servedSerial();
        return s && s !== before ? s : undefined;
      },
      30_000,
    );
    expect(after).not.toBe(before);
    expect(agent.servers()!.get("main")!.port).toBe(port);
    const metrics = await run(["curl", "-sS", "--cacert", caFile, "--cert", clientCert, "--key", clientKey, `https://127.0.0.1:${port}/metrics`]);
    expect(metrics.out).toMatch(/^kubelet_certificate_manager_server_rotation_seconds_count 1$/m);
    expect(metrics.out).toMatch(/^kubelet_server_expiration_renew_errors 0$/m);
  }, 120_000);
});
