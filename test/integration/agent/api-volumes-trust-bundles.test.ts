// clusterTrustBundle projections end to end: a node agent joined to the API-server double with the
// ClusterTrustBundleProjection gate on runs a pod created with kubectl whose projected volume holds
// one bundle by name and the bundles of a signer picked by a label selector; the container sees
// the PEM anchors (deduplicated), and a rotated bundle reaches the file. A node with the gate off
// (upstream's default) leaves such a pod in ContainerCreating with upstream's FailedMount message.
// Needs root and containerd (skipped otherwise); run under flock with the other heavy tests.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { NodeAgent } from "../../../src/agent.ts";
import { pemBlocks } from "../../../src/pod/apiobjects/trust-anchors.ts";
import type { ApiServerDouble } from "../../support/apiserver/index.ts";
import { createCA } from "../../support/apiserver/pki.ts";
import { canRunContainerd, type TestContainerd } from "../../support/containerd.ts";
import { joinDouble, type JoinedNode } from "../../support/cluster.ts";
import { until } from "../../support/wait.ts";

const ctb = (name: string, trustBundle: string, signerName?: string, labels?: Record<string, string>) => ({
  apiVersion: "certificates.k8s.io/v1beta1",
  kind: "ClusterTrustBundle",
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { trustBundle, ...(signerName ? { signerName } : {}) },
});
const sorted = (pem: string) => pemBlocks(pem).sort();

/** One joined node and the helpers the tests use on it. */
function node(name: string, gate: boolean) {
  const h = {} as { c: JoinedNode; ctd: TestContainerd; api: ApiServerDouble; agent: NodeAgent };
  const kubectl = (...args: string[]) => h.c.kubectl(...args);
  const apply = (file: string, doc: object) => h.c.apply(`${file}.json`, doc);
  const apiPod = (pod: string) => h.agent.pods.lifecycle.listPodsForApi().find((p) => p.metadata.name === pod);
  const exec = async (pod: string, cmd: string) => {
    const id = apiPod(pod)?.status?.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, "");
    return new TextDecoder().decode((await h.ctd.cri.execSync(id!, ["sh", "-c", cmd], 10)).stdout);
  };
  const podWith = (pod: string, sources: object[]) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: pod, namespace: "default" },
    spec: {
      nodeName: h.c.node,
      terminationGracePeriodSeconds: 1,
      automountServiceAccountToken: false,
      containers: [
        { name: "app", image: h.ctd.images.busybox, command: ["sh", "-c", "exec sleep 3600"], volumeMounts: [{ name: "trust", mountPath: "/etc/trust" }] },
      ],
      volumes: [{ name: "trust", projected: { sources } }],
    },
  });
  const start = async () => {
    h.c = await joinDouble({
      name,
      config: ["syncFrequency: 2s", "nodeStatusUpdateFrequency: 2s", ...(gate ? ["featureGates: {ClusterTrustBundleProjection: true}"] : [])],
    });
    ({ ctd: h.ctd, api: h.api, agent: h.agent } = h.c);
  };
  return { h, kubectl, apply, apiPod, exec, podWith, start };
}

const roots: string[] = [];

describe.skipIf(!canRunContainerd())("clusterTrustBundle projections", () => {
  const n = node("ctb", true);
  beforeAll(async () => {
    await n.start();
    for (const cn of ["mesh-root-a", "mesh-root-b", "mesh-root-c"]) roots.push((await createCA(join(n.h.c.base, cn), cn)).certPem);
  }, 600_000);
  afterAll(async () => {
    await n.h.c?.stop();
  }, 120_000);

  test("by name and by signerName + labelSelector: the container sees the anchors; a rotation reaches the file", async () => {
    const [a, b, c] = roots as [string, string, string];
    await n.apply("root", ctb("mesh-root", a));
    await n.apply("signer-1", ctb("example.com:mesh:1", a + b, "example.com/mesh", { trust: "yes" }));
    await n.apply("signer-2", ctb("example.com:mesh:2", c, "example.com/mesh", { trust: "no" }));
    expect(await n.kubectl("get", "clustertrustbundles")).toMatch(
      /^NAME\s+SIGNERNAME\n(?=[\s\S]*example\.com:mesh:1\s+example\.com\/mesh\n)(?=[\s\S]*mesh-root\s+<none>\n)/,
    );

    const pod = `trust-${n.h.c.node}`;
    await n.apply(
      pod,
      n.podWith(pod, [
        { clusterTrustBundle: { name: "mesh-root", path: "root.pem" } },
        { clusterTrustBundle: { signerName: "example.com/mesh", labelSelector: { matchLabels: { trust: "yes" } }, path: "mesh/bundle.pem" } },
        { clusterTrustBundle: { name: "absent", optional: true, path: "absent.pem" } },
      ]),
    );
    await until("pod Running", () => n.apiPod(pod)?.status?.phase === "Running", 120_000);
    expect(sorted(await n.exec(pod, "cat /etc/trust/root.pem"))).toEqual(sorted(a));
    // a appears in two places of the signer's bundles, once in the file; c's bundle is not selected.
    expect(sorted(await n.exec(pod, "cat /etc/trust/mesh/bundle.pem"))).toEqual(sorted(a + b));
    expect(await n.exec(pod, "wc -c < /etc/trust/absent.pem")).toBe("0\n");
    expect(await n.exec(pod, "stat -L -c %a /etc/trust/root.pem")).toBe("644\n");
    // The node's one watch of the collection (upstream's informer), not a watch per bundle.
    const watches = n.h.api.requests.filter(
      (r) => r.user === `system:node:${n.h.c.node}` && r.path.includes("clustertrustbundles") && r.path.includes("watch=true"),
    );
    expect(watches.length).toBeGreaterThanOrEqual(1);
    expect(watches.every((r) => !r.path.includes("fieldSelector"))).toBe(true);

    // Rotation: the named bundle now holds b; the signer gains a selected bundle holding c.
    await n.apply("root", ctb("mesh-root", b));
    await n.apply("signer-3", ctb("example.com:mesh:3", c, "example.com/mesh", { trust: "yes" }));
    await until(
      "rotated root in the file",
      async () => JSON.stringify(sorted(await n.exec(pod, "cat /etc/trust/root.pem"))) === JSON.stringify(sorted(b)),
      60_000,
    );
    await until(
      "new signer bundle in the file",
      async () => JSON.stringify(sorted(await n.exec(pod, "cat /etc/trust/mesh/bundle.pem"))) === JSON.stringify(sorted(a + b + c)),
      60_000,
    );
    expect(n.apiPod(pod)?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  }, 300_000);
});

describe.skipIf(!canRunContainerd())("clusterTrustBundle projections with the gate off (upstream's default)", () => {
  const n = node("ctboff", false);
  beforeAll(async () => {
    await n.start();
  }, 600_000);
  afterAll(async () => {
    await n.h.c?.stop();
  }, 120_000);

  test("the pod waits in ContainerCreating with upstream's FailedMount message; the node asks nothing about bundles", async () => {
    const ca = (await createCA(join(n.h.c.base, "off-root"), "off-root")).certPem;
    await n.apply("root", ctb("mesh-root", ca));
    const pod = `trust-${n.h.c.node}`;
    await n.apply(pod, n.podWith(pod, [{ clusterTrustBundle: { name: "mesh-root", path: "root.pem" } }]));
    const want = 'MountVolume.SetUp failed for volume "trust" : ClusterTrustBundle projection is not supported in static kubelet mode';
    const waiting = await until("ContainerCreating", () => n.apiPod(pod)?.status?.containerStatuses?.[0]?.state?.waiting, 60_000);
    expect(waiting).toEqual({ reason: "ContainerCreating", message: want });
    expect(n.apiPod(pod)!.status!.phase).toBe("Pending");
    const ev = await until(
      "FailedMount event",
      async () => (await n.h.api.store.list("events/default/")).items.find((e) => e.reason === "FailedMount" && e.involvedObject?.name === pod),
      30_000,
    );
    expect(ev).toMatchObject({ type: "Warning", message: want });
    expect(
      n.h.api.requests.some(
        (r) => r.user === `system:node:${n.h.c.node}` && (r.path.includes("clustertrustbundles") || r.path.startsWith("/apis/certificates.k8s.io/v1beta1")),
      ),
    ).toBe(false);
  }, 180_000);
});
