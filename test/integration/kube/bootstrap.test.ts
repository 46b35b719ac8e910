// TLS bootstrap against the API-server double: bootstrap token → CSR (verified by openssl) →
// approval (the double's auto-approver, or a human with `kubectl certificate approve`) → signed
// client certificate stored as upstream lays it out → a kubeconfig that authenticates as the node.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { lstat, mkdtemp, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../../src/clock.ts";
import { createCsrPem, generateKeyPem, keyFromPem, loadClientCert } from "../../../src/kube/bootstrap/index.ts";
import { createKubeClient, loadKubeconfig } from "../../../src/kube/index.ts";
import { startApiServer, type ApiServerDouble } from "../../support/apiserver/index.ts";
import { until } from "../../support/wait.ts";

let dir: string;
const servers: ApiServerDouble[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "bootstrap-"));
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function setup(name: string, autoApprove: boolean) {
  const api = await startApiServer({ autoApproveNodeClientCsrs: autoApprove });
  servers.push(api);
  const base = join(dir, name);
  const bootstrapPath = `${base}-bootstrap.kubeconfig`;
  await api.writeKubeconfig(bootstrapPath, { token: api.bootstrapToken, user: "tls-bootstrap-token-user" });
  return { api, bootstrapPath, kubeconfigPath: `${base}/kubelet.conf`, certDir: `${base}/pki` };
}

async function openssl(args: string[], stdin: string): Promise<string> {
  const p = Bun.spawn(["openssl", ...args], { stdin: new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return out + err;
}

test("the CSR is a valid PKCS#10 request openssl verifies, subject O=system:nodes, CN=system:node:<name>", async () => {
  const csr = createCsrPem(keyFromPem(generateKeyPem()), { commonName: "system:node:w1", organizations: ["system:nodes"] });
  const out = await openssl(["req", "-verify", "-noout", "-subject"], csr);
  expect(out).toContain("verify OK");
  expect(out).toContain("subject=O = system:nodes, CN = system:node:w1");
});

describe("loadClientCert", () => {
  test("bootstrap token → approved CSR → cert + current symlink + kubeconfig that authenticates as the node", async () => {
    const { api, bootstrapPath, kubeconfigPath, certDir } = await setup("auto", true);
    await loadClientCert({ kubeconfigPath, bootstrapKubeconfigPath: bootstrapPath, certDir, nodeName: "worker-7", clock: realClock });
    const current = join(certDir, "kubelet-client-current.pem");
    expect((await lstat(current)).isSymbolicLink()).toBe(true);
    expect(await readlink(current)).toMatch(/\/kubelet-client-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$/);
    const cert = new X509Certificate(await Bun.file(current).text());
    expect(cert.subject).toBe("O=system:nodes\nCN=system:node:worker-7");
    expect(cert.checkIssued(new X509Certificate(api.caPem))).toBe(true);
    const csrs = (await api.store.list("certificatesigningrequests.certificates.k8s.io/")).items;
    expect(csrs).toHaveLength(1);
    expect(csrs[0]!.metadata.name).toMatch(/^node-csr-/);
    expect(csrs[0]!.spec).toMatchObject({
      signerName: "kubernetes.io/kube-apiserver-client-kubelet",
      usages: ["digital signature", "client auth"],
      groups: expect.arrayContaining(["system:bootstrappers"]),
    });
    const cfg = await loadKubeconfig(kubeconfigPath);
    expect(cfg).toMatchObject({ server: api.url, certFile: current, keyFile: current, caPem: api.caPem });
    await createKubeClient(cfg, { clock: realClock }).request({ path: "/api/v1/nodes" });
    expect(api.requests.at(-1)!.user).toBe("system:node:worker-7");
    // A second start finds a valid kubeconfig and asks for nothing.
    await loadClientCert({ kubeconfigPath, bootstrapKubeconfigPath: bootstrapPath, certDir, nodeName: "worker-7", clock: realClock });
    expect((await api.store.list("certificatesigningrequests.certificates.k8s.io/")).items).toHaveLength(1);
  });

  test("waits for a human: `kubectl certificate approve` releases it", async () => {
    const { api, bootstrapPath, kubeconfigPath, certDir } = await setup("manual", false);
    let done = false;
    const pending = loadClientCert({ kubeconfigPath, bootstrapKubeconfigPath: bootstrapPath, certDir, nodeName: "worker-8", clock: realClock }).then(
      () => (done = true),
    );
    const csr = await until("CSR created", async () => (await api.store.list("certificatesigningrequests.certificates.k8s.io/")).items[0]);
    expect(done).toBe(false);
    const admin = join(dir, "admin.kubeconfig");
    await api.writeKubeconfig(admin, { token: api.adminToken });
    const p = Bun.spawn(["kubectl", "--kubeconfig", admin, "certificate", "approve", csr.metadata.name], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, HOME: dir },
    });
    const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect(err).toBe("");
    expect(out).toContain(`certificatesigningrequest.certificates.k8s.io/${csr.metadata.name} approved`);
    await pending;
    expect(new X509Certificate(await Bun.file(join(certDir, "kubelet-client-current.pem")).text()).subject).toContain("CN=system:node:worker-8");
  });

  test("a denied CSR fails with upstream's message; no bootstrap kubeconfig names the file", async () => {
    const { api, bootstrapPath, kubeconfigPath, certDir } = await setup("denied", false);
    const pending = loadClientCert({ kubeconfigPath, bootstrapKubeconfigPath: bootstrapPath, certDir, nodeName: "worker-9", clock: realClock }).catch(
      (e) => e as Error,
    );
    const csr = await until("CSR created", async () => (await api.store.list("certificatesigningrequests.certificates.k8s.io/")).items[0]);
    const key = `certificatesigningrequests.certificates.k8s.io//${csr.metadata.name}`;
    await api.store.put(key, { ...csr, status: { conditions: [{ type: "Denied", status: "True", reason: "NotMine", message: "go away" }] } });
    expect(((await pending) as Error).message).toBe("certificate signing request is denied, reason: NotMine, message: go away");
    await expect(loadClientCert({ kubeconfigPath: join(dir, "nope.conf"), certDir, nodeName: "x", clock: realClock })).rejects.toThrow(
      /^unable to load kubeconfig .*nope\.conf and no --bootstrap-kubeconfig is set$/,
    );
  });
});
