// The node agent joins a real control plane (test/support/upstream) as a kubeadm node does:
// --kubeconfig that does not exist yet + --bootstrap-kubeconfig with a bootstrap token → CSR approved
// by the controller-manager → Node Ready with its --node-labels, the real runtime's version, conditions,
// capacity and allocatable, as kubectl shows them; the lease renewing; a pod bound to the node running,
// its status in the API; a deleted Node registered again; a deleted pod stopped within its grace and
// removed by the node (the API server's audit log shows its delete). An API server stopped and restarted
// under the node: apiserver-restart.test.ts (the double). Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
import { detectNodeIP } from "../../../src/node/addresses.ts";
import { sleeperPodYaml } from "../../support/cluster.ts";
import { canRunContainerd, testRuntimeCriName } from "../../support/containerd.ts";
import { startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the join tests: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("join a real control plane", () => {
  let c: UpstreamCluster;
  const kubectl = (...args: string[]) => c.cp.kubectl(...args);
  const condition = async (type: string) => (await c.json("get", "node", c.n.node)).status.conditions.find((x: any) => x.type === type);

  beforeAll(async () => {
    c = await startUpstreamCluster({
      name: "join",
      binDir: bin.dir!,
      audit: true,
      config: [
        "nodeStatusUpdateFrequency: 1s",
        "nodeLeaseDurationSeconds: 4",
        "systemReserved: { cpu: 100m, memory: 256Mi }",
        "evictionHard: { memory.available: 100Mi }",
      ],
      flags: ["--node-labels=example.com/pool=edge"],
    });
  }, 300_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("bootstrap token → CSR approved by the controller-manager → the node's own certificate → Node Ready, shown by kubectl get nodes -o wide", async () => {
    const node = c.n.node;
    expect((await c.json("get", "node", node)).metadata.labels).toMatchObject({ "example.com/pool": "edge", "kubernetes.io/hostname": node });
    const csr = (await c.json("get", "csr")).items.find((x: any) => x.spec.signerName === "kubernetes.io/kube-apiserver-client-kubelet");
    expect(csr.spec.username).toMatch(/^system:bootstrap:[a-z0-9]{6}$/);
    expect(csr.status.conditions.find((x: any) => x.type === "Approved")).toMatchObject({ status: "True", reason: "AutoApproved" });
    const cert = new X509Certificate(await Bun.file(join(c.n.base, "pki", "kubelet-client-current.pem")).text());
    expect(cert.subject.split("\n").sort()).toEqual([`CN=system:node:${node}`, "O=system:nodes"]);
    expect(cert.issuer).toBe("CN=kubernetes");
    expect(c.audit!.events().some((e) => e.user.username === `system:node:${node}` && e.objectRef?.resource === "nodes")).toBe(true);
    // The InternalIP is the default-route interface's: a node has no --node-ip here (it may not be loopback).
    const ip = detectNodeIP()!.replaceAll(".", "\\.");
    const row = (await kubectl("get", "nodes", "-o", "wide")).split("\n").find((l) => l.startsWith(node))!;
    expect(row).toMatch(
      new RegExp(`^${node}\\s+Ready\\s+<none>\\s+\\S+\\s+v1\\.31\\.0\\+bunlet\\.\\S+\\s+${ip}\\s+<none>\\s+.+\\s+${testRuntimeCriName}://\\S+\\s*$`),
    );
  });

  test("a pod created with kubectl apply (spec.nodeName = this node) runs on containerd, its status in the API", async () => {
    await c.cp.kubectlIn(sleeperPodYaml(c.n, "api-pod"), "apply", "-f", "-");
    const obj = await until(
      "api-pod Running with its IP in the API",
      async () => {
        const o = await c.json("get", "pod", "api-pod");
        return o.status?.phase === "Running" && o.status?.podIP ? o : undefined;
      },
      120_000,
      { intervalMs: 500 },
    );
    expect(obj.status.containerStatuses[0].state.running).toBeDefined();
    expect(obj.status.conditions.find((x: any) => x.type === "Ready")?.status).toBe("True");
    const sandbox = (await c.n.ctd.cri.listPodSandbox()).find((s) => s.metadata?.uid === obj.metadata.uid && s.state === "SANDBOX_READY")!;
    expect((await c.n.ctd.cri.podSandboxStatus(sandbox.id)).status?.network?.ip).toBe(obj.status.podIP);
    const described = await kubectl("describe", "pod", "api-pod");
    expect(described).toMatch(/Status:\s+Running/);
    expect(described).toMatch(/State:\s+Running/);
    expect(described).toMatch(/Conditions:[\s\S]*Ready\s+True/);
    const wide = await kubectl("get", "pods", "-o", "wide");
    expect(wide).toMatch(new RegExp(`api-pod\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+${obj.status.podIP.replaceAll(".", "\\.")}\\s+${c.n.node}`));
  }, 180_000);

  test("kubectl describe node: conditions, capacity, allocatable, system info, lease", async () => {
    const out = await kubectl("describe", "node", c.n.node);
    expect(out).toMatch(/MemoryPressure\s+False\s+.*KubeletHasSufficientMemory\s+kubelet has sufficient memory available/);
    expect(out).toMatch(/DiskPressure\s+False\s+.*KubeletHasNoDiskPressure/);
    expect(out).toMatch(/PIDPressure\s+False\s+.*KubeletHasSufficientPID/);
    expect(out).toMatch(/Ready\s+True\s+.*KubeletReady\s+kubelet is posting ready status/);
    expect(out).toMatch(/Capacity:\n\s+cpu:\s+\d+\n\s+ephemeral-storage:\s+\d+\S*\n(\s+hugepages-\S+:\s+\S+\n)*\s+memory:\s+\d+Ki\n\s+pods:\s+110\n/);
    expect(out).toMatch(/Allocatable:\n\s+cpu:\s+\d+m?\n/);
    expect(out).toMatch(/Container Runtime Version:\s+containerd:\/\//);
    expect(out).toMatch(new RegExp(`Lease:\\n\\s+HolderIdentity:\\s+${c.n.node}`));
    // allocatable memory = capacity − 256Mi systemReserved − 100Mi hard eviction (− hugepages)
    const { capacity, allocatable } = (await c.json("get", "node", c.n.node)).status;
    const ki = (q: string) => Number(q.replace(/Ki$/, ""));
    expect(ki(capacity.memory) - ki(allocatable.memory)).toBeGreaterThanOrEqual(356 * 1024);
  });

  test("the lease in kube-node-lease is renewed", async () => {
    expect(await kubectl("get", "lease", "-n", "kube-node-lease")).toMatch(new RegExp(`${c.n.node}\\s+${c.n.node}\\s+`));
    const lease = () => c.json("get", "lease", "-n", "kube-node-lease", c.n.node);
    const first = await lease();
    expect(first.spec.leaseDurationSeconds).toBe(4);
    await until("lease renewed", async () => (await lease()).spec.renewTime !== first.spec.renewTime, 10_000, { intervalMs: 250 });
  });

  test("kubectl delete node → the node registers again and is Ready; its pod keeps running", async () => {
    const uid = (await c.json("get", "node", c.n.node)).metadata.uid;
    await kubectl("delete", "node", c.n.node);
    await until(
      "re-registered Ready",
      async () => (await c.json("get", "node", c.n.node).catch(() => undefined))?.metadata.uid !== uid && (await condition("Ready"))?.status === "True",
      30_000,
      { intervalMs: 250, retryErrors: true },
    );
    const pod = await c.json("get", "pod", "api-pod");
    expect([pod.status.phase, pod.status.containerStatuses[0].restartCount]).toEqual(["Running", 0]);
  }, 60_000);

  test("kubectl delete pod: stopped within its grace, then removed from the API by the node (grace 0, UID precondition)", async () => {
    const uid = (await c.json("get", "pod", "api-pod")).metadata.uid;
    await kubectl("delete", "pod", "api-pod", "--timeout=120s");
    expect(await kubectl("get", "pods", "--ignore-not-found")).toBe("");
    // kube-apiserver keeps a graceful deletion until the node deletes the pod again with grace 0.
    const del = c.audit!.events().find((e) => e.verb === "delete" && e.objectRef?.resource === "pods" && e.objectRef.name === "api-pod");
    expect(del).toMatchObject({ user: { username: `system:node:${c.n.node}` }, responseStatus: { code: 200 } });
    expect(del!.requestObject).toMatchObject({ gracePeriodSeconds: 0, preconditions: { uid } });
    expect((await c.n.ctd.cri.listPodSandbox()).filter((s) => s.metadata?.uid === uid && s.state === "SANDBOX_READY")).toEqual([]);
  }, 180_000);
});
