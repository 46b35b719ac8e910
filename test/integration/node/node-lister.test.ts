// The node status sync reads its Node from a watch of its own (upstream's nodeLister) against a real
// control plane (test/support/upstream, with kube-apiserver's audit log): once the watch has listed the
// Node, syncs make no GET of it — only the watch, the lease and a status patch on change, as the
// kubelet — and a change made by someone else (a label) reaches the node through the watch. Needs the
// upstream binaries (not root or containerd).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { realClock } from "../../../src/clock.ts";
import { createKubeClient } from "../../../src/kube/index.ts";
import { createNodeApiMode, type NodeApiMode, type NodeFacts } from "../../../src/node/index.ts";
import { issueCert } from "../../support/apiserver/pki.ts";
import { startControlPlane, upstreamBinDir, type ControlPlane } from "../../support/upstream/index.ts";
import { TEST_MACHINE, TEST_NODE_STATUS } from "../../support/node-facts.ts";
import { until } from "../../support/wait.ts";

const NODE = "watched-1";

const facts: NodeFacts = {
  machine: async () => TEST_MACHINE,
  addresses: () => [{ type: "Hostname", address: NODE }],
  runtime: async () => ({ version: "containerd://1.6.20", errors: [] }),
  images: async () => [],
  pressure: () => [],
  hardEvictionThresholds: [],
};

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the node lister tests: ${bin.why}`);

describe.skipIf(!bin.dir)("node status from a watch of the node's own Node, against a real API server", () => {
  let cp: ControlPlane;
  let mode: NodeApiMode;
  /** The node's own requests of `verb` on `resource`, from kube-apiserver's audit log (each request once). */
  const requests = (verb: string, resource: string, name?: string) =>
    new Set(
      cp
        .auditEvents()
        .filter(
          (e) => e.user.username === `system:node:${NODE}` && e.verb === verb && e.objectRef?.resource === resource && (!name || e.objectRef.name === name),
        )
        .map((e) => e.auditID),
    ).size;
  const nodeGets = () => requests("get", "nodes", NODE);
  const leaseUpdates = () => requests("update", "leases");

  beforeAll(async () => {
    cp = await startControlPlane({ dir: `/tmp/bunlet-upstream-node-lister-${process.pid}`, binDir: bin.dir!, audit: true });
    const cert = await issueCert(cp.ca, cp.dir, `/O=system:nodes/CN=system:node:${NODE}`);
    const identity = { server: cp.server, caPem: cp.ca.certPem, certPem: cert.certPem, keyPem: cert.keyPem, source: "test" };
    const heartbeat = createKubeClient(identity, { clock: realClock, timeoutMs: 2000 });
    const main = createKubeClient(identity, { clock: realClock });
    mode = createNodeApiMode(
      {
        registration: { nodeName: NODE, hostname: NODE, os: "linux", arch: "amd64", nodeLabels: {}, registerWithTaints: [] },
        ...TEST_NODE_STATUS,
      },
      facts,
      heartbeat,
      realClock,
      undefined,
      main,
    );
    mode.start();
    await until("Ready", () => mode.status.node()?.status?.conditions?.find((c) => c.type === "Ready")?.status === "True", 60_000);
  }, 180_000);

  afterAll(async () => {
    mode?.stop();
    await cp?.stop();
  }, 60_000);

  test("once the watch has the Node, status syncs (every 200 ms here) GET it no more", async () => {
    await until("the node's watch of its Node", () => requests("watch", "nodes") > 0, 30_000);
    // Four lease renewals (every 500 ms) span about ten status syncs.
    const [gets, leases] = [nodeGets(), leaseUpdates()];
    await until("four lease renewals", () => leaseUpdates() >= leases + 4, 30_000);
    expect(nodeGets()).toBe(gets);
  }, 90_000);

  test("a label set by someone else reaches the status sync through the watch, with no GET", async () => {
    const gets = nodeGets();
    await cp.kubectl("label", "node", NODE, "example.com/pool=blue");
    await until("the label seen by the node", () => mode.status.node()?.metadata.labels?.["example.com/pool"] === "blue", 30_000);
    expect(nodeGets()).toBe(gets);
  }, 60_000);
});
