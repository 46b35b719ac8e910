// Registration, node status and the lease of the node's API-server mode (in process, on facts the test
// sets) against a real control plane (test/support/upstream: kube-apiserver with Node authorization
// and NodeRestriction, the node-lifecycle and garbage-collector controllers): the Node appears NotReady,
// then Ready with what the facts say; status is patched only on change (counted in kube-apiserver's
// audit log, the real server's record of the node's requests); the lease is created with the Node as
// owner and renewed; a deleted Node is registered again and its lease, taken by the garbage collector,
// created again; and after kube-apiserver is stopped and started again on the same port and etcd, the
// status catches up with what changed meanwhile. Needs the upstream binaries (not root or containerd).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { realClock } from "../../../src/clock.ts";
import type { NodeConditionType } from "../../../src/eviction/index.ts";
import { createKubeClient } from "../../../src/kube/index.ts";
import { createNodeApiMode, type NodeApiMode, type NodeFacts } from "../../../src/node/index.ts";
import { issueCert } from "../../support/apiserver/pki.ts";
import { startControlPlane, upstreamBinDir, type ControlPlane } from "../../support/upstream/index.ts";
import { TEST_MACHINE, TEST_NODE_STATUS } from "../../support/node-facts.ts";
import { until } from "../../support/wait.ts";

const NODE = "worker-1";
let pressure: NodeConditionType[] = [];
/** Until set, the runtime never answers (the node must register at once all the same). */
let runtimeUp = false;
/** What the startup tracker (kubelet_node_startup_*) was told, in order. */
const startupEvents: string[] = [];

const facts: NodeFacts = {
  machine: async () => ({ ...TEST_MACHINE, swapCapacityBytes: 2 ** 30 }), // kube-apiserver keeps nodeInfo.swap
  addresses: () => [
    { type: "InternalIP", address: "10.9.8.7" },
    { type: "Hostname", address: NODE },
  ],
  runtime: () => (runtimeUp ? Promise.resolve({ version: "containerd://1.6.20", errors: [] }) : new Promise(() => {})),
  images: () => (runtimeUp ? Promise.resolve([{ names: ["bunlet.local/pause:1"], sizeBytes: 1000 }]) : new Promise(() => {})),
  pressure: () => pressure,
  hardEvictionThresholds: [],
};

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the node API-mode tests: ${bin.why}`);

describe.skipIf(!bin.dir)("node registration, status and lease against a real API server", () => {
  let cp: ControlPlane;
  let mode: NodeApiMode;
  const json = async (...args: string[]) => JSON.parse(await cp.kubectl(...args, "-o", "json"));
  const node = () => json("get", "node", NODE);
  const lease = () => json("get", "lease", "-n", "kube-node-lease", NODE);
  const cond = async (type: string) => (await node().catch(() => undefined))?.status?.conditions?.find((c: any) => c.type === type)?.status;
  /** The node's own requests on its Node object, from kube-apiserver's audit log. */
  const nodeRequests = (verb: "get" | "patch", subresource?: "status") =>
    cp
      .auditEvents()
      .filter(
        (e) =>
          e.user.username === `system:node:${NODE}` &&
          e.verb === verb &&
          e.objectRef?.resource === "nodes" &&
          e.objectRef.name === NODE &&
          e.objectRef.subresource === subresource,
      ).length;
  const statusPatches = () => nodeRequests("patch", "status");
  const syncs = () => nodeRequests("get");
  const moreSyncs = (n: number) => {
    const from = syncs();
    return until(`${n} more status syncs`, () => syncs() >= from + n, 30_000);
  };

  beforeAll(async () => {
    cp = await startControlPlane({ dir: `/tmp/bunlet-upstream-api-mode-${process.pid}`, binDir: bin.dir!, audit: true });
    const cert = await issueCert(cp.ca, cp.dir, `/O=system:nodes/CN=system:node:${NODE}`);
    const client = createKubeClient(
      { server: cp.server, caPem: cp.ca.certPem, certPem: cert.certPem, keyPem: cert.keyPem, source: "test" },
      { clock: realClock, timeoutMs: 2000 },
    );
    mode = createNodeApiMode(
      {
        registration: {
          nodeName: NODE,
          hostname: NODE,
          os: "linux",
          arch: "amd64",
          // NodeRestriction refuses a node's own labels in kubernetes.io outside the kubelet's set
          // (node-role.kubernetes.io/… among them); node.kubernetes.io/ is the kubelet's to set.
          nodeLabels: { "node.kubernetes.io/pool": "workers" },
          registerWithTaints: [],
        },
        ...TEST_NODE_STATUS,
        startup: {
          attemptRegisterNode: () => startupEvents.push("attempt"),
          registeredNode: () => startupEvents.push("registered"),
          nodeReady: () => startupEvents.push("ready"),
        },
      },
      facts,
      client,
      realClock,
    );
    mode.start();
  }, 180_000);

  afterAll(async () => {
    mode?.stop();
    await cp?.stop();
  }, 60_000);

  test("registers the node at once, NotReady while the runtime has not answered, then Ready once it has", async () => {
    await until("node registered", () => node().catch(() => undefined), 30_000);
    expect((await node()).metadata.labels).toMatchObject({
      "kubernetes.io/hostname": NODE,
      "kubernetes.io/os": "linux",
      "beta.kubernetes.io/arch": "amd64",
      "node.kubernetes.io/pool": "workers",
    });
    await until("NotReady reported", async () => (await cond("Ready")) === "False", 30_000);
    expect((await node()).status.conditions.find((c: any) => c.type === "Ready").message).toBe("container runtime status check may not have completed yet");
    runtimeUp = true;
    await until("Ready reported", async () => (await cond("Ready")) === "True", 30_000);
    const n = await node();
    expect(n.status.nodeInfo).toMatchObject({
      kubeletVersion: "v1.31.0",
      containerRuntimeVersion: "containerd://1.6.20",
      bootID: "boot",
      osImage: "Debian GNU/Linux 12 (bookworm)",
      swap: { capacity: 2 ** 30 },
    });
    expect(n.status.capacity).toEqual({ cpu: "2", memory: "2Gi", pods: "110", "ephemeral-storage": "16Gi" });
    expect(n.status.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10250 } });
    expect(n.status.images).toEqual([{ names: ["bunlet.local/pause:1"], sizeBytes: 1000 }]);
    // The startup tracker saw the attempt, the registration, then Ready — Ready only once the runtime was.
    expect([...new Set(startupEvents)]).toEqual(["attempt", "registered", "ready"]);
  }, 120_000);

  test("status is patched only when it changed (report frequency 60 s): none while nothing changes, one for one change", async () => {
    await moreSyncs(1);
    const before = statusPatches();
    await moreSyncs(6);
    expect(statusPatches()).toBe(before);
    pressure = ["MemoryPressure"];
    await until("MemoryPressure reported", async () => (await cond("MemoryPressure")) === "True", 30_000);
    await until("the patch in the audit log", () => statusPatches() > before, 10_000);
    // The node-lifecycle controller taints the Node for the pressure: a new resourceVersion, not a new status.
    await moreSyncs(6);
    expect(statusPatches()).toBe(before + 1);
    pressure = [];
  }, 120_000);

  test("the lease is created with the node as owner and renewed every 25 % of its duration", async () => {
    const l = await until("lease", () => lease().catch(() => undefined), 30_000);
    expect(l.spec).toMatchObject({ holderIdentity: NODE, leaseDurationSeconds: 2 });
    expect(l.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    await until("owner reference", async () => (await lease()).metadata.ownerReferences?.[0]?.uid === (await node()).metadata.uid, 30_000);
    const first = (await lease()).spec.renewTime;
    await until("lease renewed", async () => (await lease()).spec.renewTime !== first, 30_000);
    expect(mode.lease.renewIntervalMs).toBe(500);
  }, 120_000);

  test("a deleted Node is registered again; its lease, gone with it, is created again for the new Node", async () => {
    const uid = (await node()).metadata.uid;
    await cp.kubectl("delete", "node", NODE, "--wait=false");
    const fresh = await until(
      "re-registered",
      async () => {
        const n = await node().catch(() => undefined);
        return n && n.metadata.uid !== uid && n.status?.conditions?.find((c: any) => c.type === "Ready")?.status === "True" ? n : undefined;
      },
      60_000,
    );
    await until(
      "the lease owned by the new Node",
      async () => (await lease().catch(() => undefined))?.metadata.ownerReferences?.[0]?.uid === fresh.metadata.uid,
      90_000,
      {
        intervalMs: 500,
      },
    );
  }, 180_000);

  test("kube-apiserver stopped: the node keeps trying; started again: the status catches up, the lease is renewed", async () => {
    await cp.stopApiServer();
    pressure = ["DiskPressure"];
    await until("a status sync failed while it is down", () => mode.status.lastError(), 30_000);
    await cp.startApiServer();
    await until("DiskPressure reported after the restart", async () => (await cond("DiskPressure")) === "True", 60_000);
    const renewed = (await lease()).spec.renewTime;
    await until("lease renewed after the restart", async () => (await lease()).spec.renewTime !== renewed, 30_000);
    expect(mode.status.lastError()).toBeUndefined();
    pressure = [];
  }, 180_000);
});
