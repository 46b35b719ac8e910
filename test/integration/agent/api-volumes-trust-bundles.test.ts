// clusterTrustBundle projections end to end against a real control plane (test/support/upstream;
// kube-apiserver v1.37 serves certificates.k8s.io/v1 ClusterTrustBundles, GA): a node with the
// ClusterTrustBundleProjection gate at its default (on, as upstream v1.37) runs a pod created with
// kubectl whose projected volume holds one bundle by name and the bundles of a signer picked by a label
// selector; the container sees the PEM anchors (deduplicated), a rotated bundle reaches the file, and the
// node watches the collection once (the API server's audit log). Then a node joined with the gate off
// leaves such a pod in ContainerCreating with upstream's FailedMount event and asks nothing about bundles.
// Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { pemBlocks } from "../../../src/pod/apiobjects/trust-anchors.ts";
import { createCA } from "../../support/apiserver/pki.ts";
import { acquireContainerd, canRunContainerd, type TestContainerd } from "../../support/containerd.ts";
import {
  joinUpstream,
  NODE_NAME,
  startUpstreamCluster,
  upstreamBinDir,
  waitNodeReady,
  type UpstreamCluster,
  type UpstreamNode,
} from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const ctb = (name: string, trustBundle: string, signerName?: string, labels?: Record<string, string>) => ({
  apiVersion: "certificates.k8s.io/v1",
  kind: "ClusterTrustBundle",
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { trustBundle, ...(signerName ? { signerName } : {}) },
});
const sorted = (pem: string) => pemBlocks(pem).sort();
const POD = `trust-${NODE_NAME}`;

/** A pod bound to the node whose projected volume `trust` (at /etc/trust) has `sources`. */
const podWith = (image: string, sources: object[]) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: POD, namespace: "default" },
  spec: {
    nodeName: NODE_NAME,
    terminationGracePeriodSeconds: 1,
    automountServiceAccountToken: false,
    containers: [{ name: "app", image, command: ["sh", "-c", "exec sleep 3600"], volumeMounts: [{ name: "trust", mountPath: "/etc/trust" }] }],
    volumes: [{ name: "trust", projected: { sources } }],
  },
});

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the clusterTrustBundle tests: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("clusterTrustBundle projections", () => {
  let c: UpstreamCluster;
  let gateOff: UpstreamNode | undefined;
  // Held for the whole file: the second node reuses the first one's containerd.
  let ctd: TestContainerd;
  const roots: string[] = [];
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  const exec = (cmd: string) => c.cp.kubectl("exec", POD, "-c", "app", "--", "sh", "-c", cmd);
  const nodeAsked = (sinceMs: number, what: (uri: string) => boolean) =>
    c.audit!.events().filter((e) => e.user.username === `system:node:${NODE_NAME}` && Date.parse(e.requestReceivedTimestamp) >= sinceMs && what(e.requestURI));

  beforeAll(async () => {
    ctd = await acquireContainerd();
    c = await startUpstreamCluster({ name: "ctb", binDir: bin.dir!, audit: true, config: ["syncFrequency: 2s", "nodeStatusUpdateFrequency: 2s"] });
    for (const cn of ["mesh-root-a", "mesh-root-b", "mesh-root-c"]) roots.push((await createCA(join(c.cp.dir, cn), cn)).certPem);
  }, 300_000);

  afterAll(async () => {
    await gateOff?.stop();
    await c?.stop();
    await ctd?.release();
  }, 120_000);

  test("by name and by signerName + labelSelector: the container sees the anchors; a rotation reaches the file", async () => {
    const [a, b, cc] = roots as [string, string, string];
    await apply(ctb("mesh-root", a));
    await apply(ctb("example.com:mesh:1", a + b, "example.com/mesh", { trust: "yes" }));
    await apply(ctb("example.com:mesh:2", cc, "example.com/mesh", { trust: "no" }));
    expect(await c.cp.kubectl("get", "clustertrustbundles")).toMatch(
      /^NAME\s+SIGNERNAME\n(?=[\s\S]*example\.com:mesh:1\s+example\.com\/mesh\n)(?=[\s\S]*mesh-root\s+<none>\n)/,
    );
    await apply(
      podWith(c.n.ctd.images.busybox, [
        { clusterTrustBundle: { name: "mesh-root", path: "root.pem" } },
        { clusterTrustBundle: { signerName: "example.com/mesh", labelSelector: { matchLabels: { trust: "yes" } }, path: "mesh/bundle.pem" } },
        { clusterTrustBundle: { name: "absent", optional: true, path: "absent.pem" } },
      ]),
    );
    await c.podInPhase(POD, "Running", 120_000);
    expect(sorted(await exec("cat /etc/trust/root.pem"))).toEqual(sorted(a));
    // a appears in two places of the signer's bundles, once in the file; c's bundle is not selected.
    expect(sorted(await exec("cat /etc/trust/mesh/bundle.pem"))).toEqual(sorted(a + b));
    expect(await exec("wc -c < /etc/trust/absent.pem")).toBe("0\n");
    expect(await exec("stat -L -c %a /etc/trust/root.pem")).toBe("644\n");
    // The node's one watch of the collection (upstream's informer) at v1, not a watch per bundle.
    const watches = nodeAsked(0, (uri) => uri.includes("clustertrustbundles") && uri.includes("watch=true"));
    expect(watches.length).toBeGreaterThanOrEqual(1);
    expect(watches.every((e) => e.requestURI.startsWith("/apis/certificates.k8s.io/v1/clustertrustbundles?") && !e.requestURI.includes("fieldSelector"))).toBe(
      true,
    );

    // Rotation: the named bundle now holds b; the signer gains a selected bundle holding c.
    await apply(ctb("mesh-root", b));
    await apply(ctb("example.com:mesh:3", cc, "example.com/mesh", { trust: "yes" }));
    const holds = async (file: string, pem: string) => JSON.stringify(sorted(await exec(`cat ${file}`))) === JSON.stringify(sorted(pem));
    await until("rotated root in the file", () => holds("/etc/trust/root.pem", b), 60_000, { intervalMs: 500 });
    await until("new signer bundle in the file", () => holds("/etc/trust/mesh/bundle.pem", a + b + cc), 60_000, { intervalMs: 500 });
    expect((await c.json("get", "pod", POD)).status.containerStatuses[0].restartCount).toBe(0);
  }, 300_000);

  test("a node with the gate off: the pod waits in ContainerCreating with upstream's FailedMount event; the node asks nothing about bundles", async () => {
    // The first node leaves; its pod goes with it, and a node with the gate off joins under the same name.
    await c.n.stop();
    await c.cp.kubectl("delete", "pod", POD, "--force", "--grace-period=0", "--ignore-not-found");
    const joinedAt = Date.now();
    gateOff = await joinUpstream({ name: "ctboff", cp: c.cp, config: ["featureGates: { ClusterTrustBundleProjection: false }"] });
    await waitNodeReady(c.cp, gateOff);
    await apply(podWith(gateOff.ctd.images.busybox, [{ clusterTrustBundle: { name: "mesh-root", path: "root.pem" } }]));
    const want = 'MountVolume.SetUp failed for volume "trust" : ClusterTrustBundle projection is not supported in static kubelet mode';
    const ev = await until(
      "FailedMount event",
      async () => (await c.json("get", "events")).items.find((e: any) => e.reason === "FailedMount" && e.involvedObject?.name === POD && e.message === want),
      60_000,
      { intervalMs: 500 },
    );
    expect(ev.type).toBe("Warning");
    const pod = await c.json("get", "pod", POD);
    expect(pod.status.phase).toBe("Pending");
    expect(pod.status.containerStatuses[0].state.waiting.reason).toBe("ContainerCreating");
    expect(nodeAsked(joinedAt, (uri) => uri.includes("clustertrustbundles") || /^\/apis\/certificates\.k8s\.io\/v1[a-z0-9]*$/.test(uri))).toEqual([]);
  }, 240_000);
});
