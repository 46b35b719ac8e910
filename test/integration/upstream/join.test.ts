// bunlet as the node of a real control plane (kube-apiserver, kube-controller-manager and
// kube-scheduler built from the upstream release by scripts/upstream/build.sh): it joins as kubeadm
// makes a node join (bootstrap token → CSR approved by the real controller → client certificate →
// Node Ready), the real scheduler places a Deployment on it, and kubectl reaches its pods through the
// real API server. Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
import { connect } from "node:tls";
import { issueCert } from "../../support/apiserver/pki.ts";
import { freePort } from "../../support/binary.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import {
  joinUpstream,
  webDeployment,
  startControlPlane,
  upstreamBinDir,
  waitNodeReady,
  type ControlPlane,
  type UpstreamNode,
} from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

/** The certificate the node's port presents (issuer and subject as openssl prints them, one per line). */
function peerCertificate(port: number): Promise<{ issuer: string; subject: string; subjectAltName: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => {
      const c = new X509Certificate(sock.getPeerX509Certificate()!.raw);
      sock.destroy();
      resolve({ issuer: c.issuer, subject: c.subject, subjectAltName: c.subjectAltName ?? "" });
    });
    sock.on("error", reject);
  });
}

/** A pod whose container reads its stdin, once (as kubectl run -i makes one). */
function attachablePod(image: string): string {
  return `
apiVersion: v1
kind: Pod
metadata: { name: attachable }
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    - { name: main, image: ${image}, command: [cat], stdin: true, stdinOnce: true }
`;
}

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the real-cluster tests: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("bunlet joins a real control plane", () => {
  let cp: ControlPlane;
  let n: UpstreamNode;
  const json = async (...args: string[]) => JSON.parse(await cp.kubectl(...args, "-o", "json"));

  beforeAll(async () => {
    cp = await startControlPlane({ dir: `/tmp/bunlet-upstream-join-${process.pid}`, binDir: bin.dir! });
    n = await joinUpstream({
      name: "real-join",
      cp,
      // kubeadm's choice for a serving certificate the cluster CA signs: a kubelet-serving CSR an admin approves.
      config: ["nodeStatusUpdateFrequency: 2s", "serverTLSBootstrap: true"],
      prepare: async ({ ctd, manifests }) =>
        void (await Bun.write(
          join(manifests, "static-web.yaml"),
          staticPodYaml("static-web", { image: ctd.images.busybox, command: ["sh", "-c", "exec sleep 3600"], terminationGracePeriodSeconds: 1 }),
        )),
    });
  }, 300_000);

  afterAll(async () => {
    await n?.stop();
    await cp?.stop();
  }, 120_000);

  test("bootstrap token → CSR approved by the controller-manager → Node Ready", async () => {
    await waitNodeReady(cp, n);
    const csrs = (await json("get", "csr")).items;
    const client = csrs.find((c: any) => c.spec.signerName === "kubernetes.io/kube-apiserver-client-kubelet");
    expect(client.spec.username).toMatch(/^system:bootstrap:/);
    expect(client.status.conditions.find((c: any) => c.type === "Approved")?.reason).toBe("AutoApproved");
    expect(await cp.kubectl("get", "nodes", "-o", "wide")).toMatch(new RegExp(`${n.node}\\s+Ready\\s+<none>\\s+\\S+\\s+v\\S+\\s+\\d+\\.\\d+\\.\\d+\\.\\d+\\s`));
  }, 150_000);

  test("serverTLSBootstrap: a kubelet-serving CSR, approved with kubectl certificate approve, becomes the node's serving certificate", async () => {
    const csr = await until(
      "kubelet-serving CSR",
      async () => (await json("get", "csr")).items.find((c: any) => c.spec.signerName === "kubernetes.io/kubelet-serving"),
      60_000,
      { intervalMs: 500 },
    );
    expect(csr.spec.username).toBe(`system:node:${n.node}`);
    expect(csr.spec.usages).toEqual(["digital signature", "server auth"]);
    expect(csr.status.conditions ?? []).toEqual([]); // kubelet-serving CSRs are never auto-approved
    await cp.kubectl("certificate", "approve", csr.metadata.name);
    const served = await until(
      "the approved certificate served",
      async () => {
        const c = await peerCertificate(n.port).catch(() => undefined);
        return c?.issuer === "CN=kubernetes" ? c : undefined; // the cluster CA (control-plane.ts)
      },
      60_000,
      { intervalMs: 300 },
    );
    expect(served.subject).toContain(`CN=system:node:${n.node}`);
    expect(served.subjectAltName).toContain(`DNS:${n.node}`);
  }, 120_000);

  test("a static pod gets a mirror pod that the real API server accepts under NodeRestriction", async () => {
    const name = `static-web-${n.node}`;
    const mirror = await until(
      "mirror pod Running",
      async () => {
        const p = await json("get", "pod", name).catch(() => undefined);
        return p?.status?.phase === "Running" ? p : undefined;
      },
      60_000,
      { intervalMs: 500 },
    );
    expect(mirror.metadata.annotations["kubernetes.io/config.mirror"]).toBeString();
    expect(mirror.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: "Node", name: n.node, controller: true })]);
    // A mirror pod deleted by someone is recreated by the node.
    const uid = mirror.metadata.uid;
    await cp.kubectl("delete", "pod", name, "--wait=false");
    await until("mirror recreated", async () => ((await json("get", "pod", name).catch(() => undefined))?.metadata?.uid ?? uid) !== uid, 60_000, {
      intervalMs: 500,
    });
  }, 150_000);

  test("kubectl apply a Deployment: the real scheduler places 3 replicas on bunlet, Running and Ready, volumes and env from a configMap and a secret, a projected service-account token", async () => {
    await cp.kubectlIn(webDeployment(n.ctd.images.busybox), "apply", "-f", "-");
    await cp.kubectl("rollout", "status", "deployment/web", "--timeout=180s").catch(async (e) => {
      throw new Error(
        `${e.message}\n${await cp.kubectl("get", "pods", "-o", "wide")}\n${await cp.kubectl("describe", "pods")}\n--- bunlet ---\n${n.proc.stderr().slice(-4000)}`,
      );
    });
    const pods = (await json("get", "pods", "-l", "app=web")).items;
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      expect(p.spec.nodeName).toBe(n.node);
      expect(p.spec.preemptionPolicy).toBe("PreemptLowerPriority");
      expect(p.status.phase).toBe("Running");
      expect(p.status.conditions.find((c: any) => c.type === "Ready").status).toBe("True");
    }
    const pod = pods[0].metadata.name;
    expect(await cp.kubectl("exec", pod, "--", "sh", "-c", "echo $GREETING $PASSWORD; cat /etc/config/greeting /etc/secret/password")).toBe(
      "hello s3cret\nhellos3cret",
    );
    const token = await cp.kubectl("exec", pod, "--", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/token");
    expect(token.split(".")).toHaveLength(3);
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    expect(claims["kubernetes.io"].pod.name).toBe(pod);
    expect(claims["kubernetes.io"].node.name).toBe(n.node);
    expect(await cp.kubectl("exec", pod, "--", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/namespace")).toBe("default");
  }, 240_000);

  test("kubectl logs, exec with stdin, cp and port-forward reach the pod through the real API server", async () => {
    const pod = (await json("get", "pods", "-l", "app=web")).items[0].metadata.name;
    expect(await cp.kubectl("logs", pod)).toContain("serving");
    expect(await cp.kubectlIn("from stdin\n", "exec", "-i", pod, "--", "cat")).toBe("from stdin\n");
    const local = join(cp.dir, "copied.txt");
    await cp.kubectl("cp", `${pod}:/www/index.html`, local);
    expect(await Bun.file(local).text()).toBe("hello from bunlet\n");
    const port = freePort();
    const pf = Bun.spawn([cp.kubectlBinary, "port-forward", `pod/${pod}`, `${port}:8080`], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, KUBECONFIG: cp.admin, HOME: cp.dir },
    });
    try {
      const body = await until(
        "port-forward answers",
        () =>
          fetch(`http://127.0.0.1:${port}/`).then(
            (r) => r.text(),
            () => undefined,
          ),
        30_000,
        { intervalMs: 200 },
      );
      expect(body).toBe("hello from bunlet\n");
    } finally {
      pf.kill();
      await pf.exited;
    }
  }, 120_000);

  test("kubectl attach -i reaches a container started with stdin", async () => {
    await cp.kubectlIn(attachablePod(n.ctd.images.busybox), "apply", "-f", "-");
    await cp.kubectl("wait", "pod/attachable", "--for=condition=Ready", "--timeout=60s");
    // stdinOnce: the container's stdin closes when the attach ends, so cat ends and the attach returns.
    const out = await cp.kubectlIn("hello through attach\n", "attach", "-i", "attachable", "-c", "main");
    expect(out).toContain("hello through attach");
    await until("attachable Succeeded", async () => (await json("get", "pod", "attachable")).status.phase === "Succeeded", 30_000, { intervalMs: 300 });
    await cp.kubectl("delete", "pod", "attachable", "--wait=false");
  }, 120_000);

  test("another node's client certificate gets 403 on /exec: bunlet asks the real API server (Node authorizer, RBAC) with a SubjectAccessReview", async () => {
    const other = await issueCert(cp.ca, cp.dir, "/O=system:nodes/CN=system:node:other-node");
    const pod = (await json("get", "pods", "-l", "app=web")).items[0].metadata.name;
    const url = `https://127.0.0.1:${n.port}/exec/default/${pod}/web?command=id&output=1`;
    const tls = { cert: other.certPem, key: other.keyPem, rejectUnauthorized: false };
    const denied = await fetch(url, { method: "POST", tls });
    expect(denied.status).toBe(403);
    expect(await denied.text()).toContain("user=system:node:other-node");
    // The API server's own kubelet-client identity (system:masters) is allowed through the same check.
    const admin = await issueCert(cp.ca, cp.dir, "/O=system:masters/CN=kube-apiserver-kubelet-client");
    const allowed = await fetch(url, { method: "POST", tls: { cert: admin.certPem, key: admin.keyPem, rejectUnauthorized: false } });
    expect(allowed.status).not.toBe(403);
    expect(allowed.status).not.toBe(401);
  }, 60_000);

  test("kubectl delete deployment: the pods are gone within their grace period", async () => {
    await cp.kubectl("delete", "deployment", "web", "--wait=true", "--timeout=60s");
    await until("pods gone", async () => (await json("get", "pods", "-l", "app=web")).items.length === 0, 60_000, { intervalMs: 500 });
    const sandboxes = (await n.ctd.cri.listPodSandbox()).filter((s) => s.metadata?.name?.startsWith("web-") && s.state === "SANDBOX_READY");
    expect(sandboxes).toEqual([]);
  }, 120_000);
});
