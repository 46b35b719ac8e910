// The node agent joins a cluster (the API-server double) as a kubeadm node does: --kubeconfig that
// does not exist yet + --bootstrap-kubeconfig with a bootstrap token → CSR approved → Node Ready
// with the real runtime's version, conditions, capacity and allocatable — checked with the real
// kubectl — the lease renewing, a deleted Node registered again, and an API-server restart caught up.
// Needs root and containerd (skipped otherwise).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { NodeAgent } from "../../../src/agent.ts";
import type { ApiServerDouble } from "../../support/apiserver/index.ts";
import { canRunContainerd, type TestContainerd } from "../../support/containerd.ts";
import { clusterPaths, joinDouble, sleeperPodYaml, type JoinedNode } from "../../support/cluster.ts";
import { until } from "../../support/wait.ts";

const { node: NODE } = clusterPaths("join");

describe.skipIf(!canRunContainerd())("join a cluster", () => {
  let ctd: TestContainerd;
  let api: ApiServerDouble;
  let agent: NodeAgent;
  let c: JoinedNode;

  const kubectl = (...args: string[]) => c.kubectl(...args);
  const node = async () => (await api.store.get(`nodes//${NODE}`))!;
  const condition = async (type: string) => (await api.store.get(`nodes//${NODE}`))?.status?.conditions?.find((c: any) => c.type === type);

  beforeAll(async () => {
    c = await joinDouble({
      name: "join",
      identity: "bootstrap",
      config: [
        "nodeStatusUpdateFrequency: 1s",
        "nodeLeaseDurationSeconds: 4",
        "systemReserved: { cpu: 100m, memory: 256Mi }",
        "evictionHard: { memory.available: 100Mi }",
      ],
      flags: ["--node-labels=example.com/pool=edge", "--node-ip=10.20.30.40"],
    });
    ({ ctd, api, agent } = c);
  }, 600_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("bootstrap token → CSR approved → Node Ready, shown by kubectl get nodes -o wide", async () => {
    await until("Node Ready", async () => (await condition("Ready"))?.status === "True", 30_000);
    expect((await node()).metadata.labels).toMatchObject({ "example.com/pool": "edge", "kubernetes.io/hostname": NODE });
    const csr = (await api.store.list("certificatesigningrequests.certificates.k8s.io/")).items[0]!;
    expect(csr.status.conditions[0]).toMatchObject({ type: "Approved", reason: "AutoApproved" });
    expect(api.requests.some((r) => r.user === `system:node:${NODE}`)).toBe(true);
    const out = await kubectl("get", "nodes", "-o", "wide");
    const row = out.split("\n").find((l) => l.startsWith(NODE))!;
    expect(row).toMatch(
      new RegExp(`^${NODE}\\s+Ready\\s+<none>\\s+\\S+\\s+v1\\.31\\.0\\+bunlet\\.\\S+\\s+10\\.20\\.30\\.40\\s+<none>\\s+.+\\s+containerd://\\S+\\s*$`),
    );
  });

  test("a pod created with kubectl apply (spec.nodeName = this node) runs on containerd through the API pod source", async () => {
    await c.apply("api-pod.yaml", sleeperPodYaml(c, "api-pod"));
    const uid = (await api.store.get("pods/default/api-pod"))!.metadata.uid;
    const running = await until(
      "API pod Running",
      () => agent.pods.lifecycle.listPodsForApi().find((p) => p.metadata.uid === uid && p.status?.phase === "Running"),
      120_000,
    );
    expect(running.status!.containerStatuses![0]!.state?.running).toBeDefined();
    expect(agent.pods.lifecycle.sourcesReady()).toBe(true);
    // The status manager patched pods/status: the API object shows Running with the pod IP.
    const obj = await until(
      "pod status in the API",
      async () => {
        const o = (await api.store.get("pods/default/api-pod"))!;
        return o.status?.phase === "Running" && o.status?.podIP ? o : undefined;
      },
      60_000,
    );
    expect(obj.status.podIP).toBe(running.status!.podIP);
    expect(obj.status.conditions.find((c: any) => c.type === "Ready")?.status).toBe("True");
    const wide = await kubectl("get", "pods", "-o", "wide");
    const described = await kubectl("describe", "pod", "api-pod");
    expect(described).toMatch(/Status:\s+Running/);
    expect(described).toMatch(/State:\s+Running/);
    expect(described).toMatch(/Conditions:[\s\S]*Ready\s+True/);
    expect(wide).toMatch(new RegExp(`api-pod\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+${obj.status.podIP.replaceAll(".", "\\.")}\\s+${NODE}`));
  }, 180_000);

  test("kubectl describe node: conditions, capacity, allocatable, system info", async () => {
    const out = await kubectl("describe", "node", NODE);
    expect(out).toMatch(/MemoryPressure\s+False\s+.*KubeletHasSufficientMemory\s+kubelet has sufficient memory available/);
    expect(out).toMatch(/DiskPressure\s+False\s+.*KubeletHasNoDiskPressure/);
    expect(out).toMatch(/PIDPressure\s+False\s+.*KubeletHasSufficientPID/);
    expect(out).toMatch(/Ready\s+True\s+.*KubeletReady\s+kubelet is posting ready status/);
    expect(out).toMatch(/Capacity:\n\s+cpu:\s+\d+\n\s+ephemeral-storage:\s+\d+\S*\n(\s+hugepages-\S+:\s+\S+\n)*\s+memory:\s+\d+Ki\n\s+pods:\s+110\n/);
    expect(out).toMatch(/Allocatable:\n\s+cpu:\s+\d+m?\n/);
    expect(out).toMatch(/Container Runtime Version:\s+containerd:\/\//);
    expect(out).toMatch(new RegExp(`Lease:\\n\\s+HolderIdentity:\\s+${NODE}`));
    const n = await node();
    // allocatable memory = capacity − 256Mi systemReserved − 100Mi hard eviction (− hugepages)
    const ki = (q: string) => Number(q.replace(/Ki$/, ""));
    expect(ki(n.status.capacity.memory) - ki(n.status.allocatable.memory)).toBeGreaterThanOrEqual(356 * 1024);
  });

  test("the lease in kube-node-lease is renewed", async () => {
    expect(await kubectl("get", "lease", "-n", "kube-node-lease")).toMatch(new RegExp(`${NODE}\\s+${NODE}\\s+`));
    const lease = async () => (await api.store.get(`leases.coordination.k8s.io/kube-node-lease/${NODE}`))!;
    const first = (await lease()).spec.renewTime;
    await until("lease renewed", async () => (await lease()).spec.renewTime !== first, 10_000);
    expect((await lease()).spec.leaseDurationSeconds).toBe(4);
  });

  test("kubectl delete node → the node registers again and is Ready", async () => {
    const uid = (await node()).metadata.uid;
    await kubectl("delete", "node", NODE);
    await until(
      "re-registered Ready",
      async () => (await api.store.get(`nodes//${NODE}`))?.metadata.uid !== uid && (await condition("Ready"))?.status === "True",
      30_000,
    );
  });

  test("API server restarted: pods side untouched, status catches up", async () => {
    await api.stop();
    await until("a status sync failed while it is down", () => agent.nodeApi!.mode()!.status.lastError(), 15_000);
    // What the node saw while the API server was away must be reported when it returns.
    const n = await node();
    await api.store.put(`nodes//${NODE}`, {
      ...n,
      status: {
        ...n.status,
        conditions: n.status.conditions.map((c: any) => (c.type === "Ready" ? { ...c, status: "Unknown", reason: "NodeStatusUnknown" } : c)),
      },
    });
    await api.start();
    expect((await condition("Ready"))?.status).toBe("Unknown");
    await until("Ready again after the restart", async () => (await condition("Ready"))?.status === "True", 30_000);
    expect(agent.nodeApi!.mode()!.status.lastError()).toBeUndefined();
    // The API pod kept running through the restart: one of it, not restarted.
    const apiPods = agent.pods.lifecycle.listPodsForApi().filter((p) => p.metadata.name === "api-pod");
    expect(apiPods.map((p) => [p.status?.phase, p.status?.containerStatuses?.[0]?.restartCount])).toEqual([["Running", 0]]);
  });

  test("kubectl delete pod: stopped within its grace, then removed from the API (grace 0, UID precondition)", async () => {
    const uid = (await api.store.get("pods/default/api-pod"))!.metadata.uid;
    await kubectl("delete", "pod", "api-pod", "--timeout=120s");
    expect(await api.store.get("pods/default/api-pod")).toBeUndefined();
    const del = api.requests.filter(
      (r) => r.method === "DELETE" && r.path.startsWith("/api/v1/namespaces/default/pods/api-pod") && r.user === `system:node:${NODE}`,
    );
    expect(del.length).toBeGreaterThan(0);
    expect((await ctd.cri.listPodSandbox()).filter((s: any) => s.metadata?.uid === uid && s.state === 0)).toEqual([]);
  }, 180_000);
});
