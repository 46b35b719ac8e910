// TLS bootstrap (src/kube/bootstrap, in process) against a real control plane (test/support/upstream):
// bootstrap token → CSR (a PKCS#10 request openssl verifies) → approval — the controller-manager's
// csrapproving controller for kubeadm's token; an administrator's `kubectl certificate approve` or
// `deny` for a token outside kubeadm's auto-approved group → the certificate the controller-manager
// signs with the cluster CA (openssl verifies it against that CA), stored as upstream lays it out → a
// kubeconfig the API server authenticates as the node (a SelfSubjectReview). Needs the upstream
// binaries (not root or containerd).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { lstat, mkdtemp, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../../src/clock.ts";
import { createCsrPem, generateKeyPem, keyFromPem, loadClientCert } from "../../../src/kube/bootstrap/index.ts";
import { createKubeClient, loadKubeconfig } from "../../../src/kube/index.ts";
import {
  BOOTSTRAP_GROUP,
  kubeconfigYaml,
  MANUAL_APPROVAL_GROUP,
  manualApprovalTokenObjects,
  randomToken,
  startControlPlane,
  upstreamBinDir,
  type ControlPlane,
} from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

async function openssl(args: string[], stdin = ""): Promise<string> {
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

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the TLS bootstrap tests: ${bin.why}`);

describe.skipIf(!bin.dir)("loadClientCert against a real control plane", () => {
  let cp: ControlPlane;
  let dir: string;
  /** The bootstrap kubeconfig of a token whose CSRs wait for an administrator. */
  let manual: string;
  let manualUser: string;
  const csrs = async () => JSON.parse(await cp.kubectl("get", "csr", "-o", "json")).items as any[];
  const paths = (name: string) => ({ kubeconfigPath: join(dir, name, "kubelet.conf"), certDir: join(dir, name, "pki") });
  const pendingCsrOf = (username: string, seen: Set<string>) =>
    until("CSR created", async () => (await csrs()).find((c) => c.spec.username === username && !seen.has(c.metadata.name)), 30_000, { intervalMs: 200 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "bootstrap-"));
    cp = await startControlPlane({ dir: join(dir, "control-plane"), binDir: bin.dir! });
    const token = randomToken();
    await cp.kubectlIn(manualApprovalTokenObjects(token), "apply", "-f", "-");
    manual = join(dir, "manual-bootstrap.kubeconfig");
    await Bun.write(manual, kubeconfigYaml(cp.server, cp.ca.certPem, { token: `${token.id}.${token.secret}` }));
    manualUser = `system:bootstrap:${token.id}`;
  }, 180_000);

  afterAll(async () => {
    await cp?.stop();
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  test("kubeadm's token → CSR auto-approved → cert + current symlink + kubeconfig that authenticates as the node", async () => {
    const { kubeconfigPath, certDir } = paths("auto");
    const before = new Set((await csrs()).map((c) => c.metadata.name));
    await loadClientCert({ kubeconfigPath, bootstrapKubeconfigPath: cp.bootstrap, certDir, nodeName: "worker-7", clock: realClock });
    const current = join(certDir, "kubelet-client-current.pem");
    expect((await lstat(current)).isSymbolicLink()).toBe(true);
    expect(await readlink(current)).toMatch(/\/kubelet-client-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$/);
    const cert = new X509Certificate(await Bun.file(current).text());
    expect(cert.subject).toBe("O=system:nodes\nCN=system:node:worker-7");
    expect(await openssl(["verify", "-CAfile", cp.caFile, "-purpose", "sslclient", current])).toBe(`${current}: OK\n`);
    const created = (await csrs()).filter((c) => !before.has(c.metadata.name));
    expect(created).toHaveLength(1);
    expect(created[0].metadata.name).toMatch(/^node-csr-/);
    expect(created[0].spec).toMatchObject({
      signerName: "kubernetes.io/kube-apiserver-client-kubelet",
      usages: ["digital signature", "client auth"],
      username: expect.stringMatching(/^system:bootstrap:/),
      groups: expect.arrayContaining(["system:bootstrappers", BOOTSTRAP_GROUP]),
    });
    expect(created[0].status.conditions.find((c: any) => c.type === "Approved")?.reason).toBe("AutoApproved");
    const cfg = await loadKubeconfig(kubeconfigPath);
    expect(cfg).toMatchObject({ server: cp.server, certFile: current, keyFile: current, caPem: cp.ca.certPem });
    const review: any = await createKubeClient(cfg, { clock: realClock }).request({
      method: "POST",
      path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    });
    expect(review.status.userInfo).toMatchObject({ username: "system:node:worker-7", groups: expect.arrayContaining(["system:nodes"]) });
    // A second start finds a valid kubeconfig and asks for nothing.
    await loadClientCert({ kubeconfigPath, bootstrapKubeconfigPath: cp.bootstrap, certDir, nodeName: "worker-7", clock: realClock });
    expect((await csrs()).length).toBe(before.size + 1);
  }, 120_000);

  test("a token outside kubeadm's group waits for an administrator: `kubectl certificate approve` releases it", async () => {
    const { kubeconfigPath, certDir } = paths("manual");
    const seen = new Set((await csrs()).map((c) => c.metadata.name));
    let done = false;
    const pending = loadClientCert({ kubeconfigPath, bootstrapKubeconfigPath: manual, certDir, nodeName: "worker-8", clock: realClock }).then(
      () => (done = true),
    );
    const csr = await pendingCsrOf(manualUser, seen);
    expect(csr.spec.groups).toContain(MANUAL_APPROVAL_GROUP);
    expect(csr.status.conditions ?? []).toEqual([]);
    expect(done).toBe(false);
    expect(await cp.kubectl("certificate", "approve", csr.metadata.name)).toContain(
      `certificatesigningrequest.certificates.k8s.io/${csr.metadata.name} approved`,
    );
    await pending;
    expect(new X509Certificate(await Bun.file(join(certDir, "kubelet-client-current.pem")).text()).subject).toContain("CN=system:node:worker-8");
    const approved = (await csrs()).find((c) => c.metadata.name === csr.metadata.name);
    expect(approved.status.conditions.map((c: any) => [c.type, c.reason])).toEqual([["Approved", "KubectlApprove"]]);
  }, 120_000);

  test("`kubectl certificate deny`: bootstrap fails with upstream's message; no bootstrap kubeconfig names the file", async () => {
    const { kubeconfigPath, certDir } = paths("denied");
    const seen = new Set((await csrs()).map((c) => c.metadata.name));
    const pending = loadClientCert({ kubeconfigPath, bootstrapKubeconfigPath: manual, certDir, nodeName: "worker-9", clock: realClock }).catch(
      (e) => e as Error,
    );
    const csr = await pendingCsrOf(manualUser, seen);
    await cp.kubectl("certificate", "deny", csr.metadata.name);
    const denied = (await csrs()).find((c) => c.metadata.name === csr.metadata.name).status.conditions.find((c: any) => c.type === "Denied");
    expect(denied.reason).toBe("KubectlDeny");
    expect(((await pending) as Error).message).toBe(`certificate signing request is denied, reason: KubectlDeny, message: ${denied.message}`);
    await expect(loadClientCert({ kubeconfigPath: join(dir, "nope.conf"), certDir, nodeName: "x", clock: realClock })).rejects.toThrow(
      /^unable to load kubeconfig .*nope\.conf and no --bootstrap-kubeconfig is set$/,
    );
  }, 120_000);
});
