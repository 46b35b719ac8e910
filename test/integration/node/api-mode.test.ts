// Registration, node status and the lease against the API-server double (real TLS, real client):
// the Node appears Ready with what the facts say, status is patched only on change, the lease is
// created and renewed, a deleted Node is registered again, and a restarted API server gets the
// status the node had meanwhile.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { realClock } from "../../../src/clock.ts";
import { createKubeClient } from "../../../src/kube/index.ts";
import { createNodeApiMode, type NodeApiMode, type NodeFacts } from "../../../src/node/index.ts";
import type { NodeConditionType } from "../../../src/eviction/index.ts";
import { startApiServer, type ApiServerDouble } from "../../support/apiserver/index.ts";
import { until } from "../../support/wait.ts";

let api: ApiServerDouble;
let mode: NodeApiMode;
let pressure: NodeConditionType[] = [];
let runtimeErrors: string[] = ["container runtime status check may not have completed yet"];
/** What the startup tracker (kubelet_node_startup_*) was told, in order. */
const startupEvents: string[] = [];

const facts: NodeFacts = {
  machine: async () => ({
    machineID: "mid",
    systemUUID: "uuid",
    bootID: "boot",
    kernelVersion: "6.1.0",
    osImage: "Debian GNU/Linux 12 (bookworm)",
    operatingSystem: "linux",
    architecture: "amd64",
    cpus: 2,
    memoryBytes: 2 ** 31,
    hugepagesBytes: {},
    ephemeralStorageBytes: 2 ** 34,
  }),
  addresses: () => [
    { type: "InternalIP", address: "10.9.8.7" },
    { type: "Hostname", address: "worker-1" },
  ],
  runtime: async () => ({ version: "containerd://1.6.20", errors: runtimeErrors }),
  images: async () => [{ names: ["bunlet.local/pause:1"], sizeBytes: 1000 }],
  pressure: () => pressure,
  hardEvictionThresholds: [],
};

const node = async () => (await api.store.get("nodes//worker-1"))!;
const lease = async () => (await api.store.get("leases.coordination.k8s.io/kube-node-lease/worker-1"))!;
const cond = async (type: string) => (await api.store.get("nodes//worker-1"))?.status?.conditions?.find((c: any) => c.type === type)?.status;
const ready = () => cond("Ready");
const statusPatches = () => api.requests.filter((r) => r.method === "PATCH" && r.path.startsWith("/api/v1/nodes/worker-1/status")).length;

beforeAll(async () => {
  api = await startApiServer();
  const cert = await api.issueClientCert("system:node:worker-1", ["system:nodes"]);
  const client = createKubeClient(
    { server: api.url, caPem: api.caPem, certPem: cert.certPem, keyPem: cert.keyPem, source: "test" },
    { clock: realClock, timeoutMs: 2000 },
  );
  mode = createNodeApiMode(
    {
      registration: {
        nodeName: "worker-1",
        hostname: "worker-1",
        os: "linux",
        arch: "amd64",
        nodeLabels: { "node-role.kubernetes.io/worker": "" },
        registerWithTaints: [],
      },
      registerNode: true,
      kubeletVersion: "v1.31.0",
      kubeletPort: 10250,
      maxPods: 110,
      maxImages: 50,
      updateFrequencyMs: 200,
      reportFrequencyMs: 60_000,
      leaseDurationSeconds: 2,
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
});
afterAll(async () => {
  mode?.stop();
  await api?.close();
});

test("registers the node NotReady, then Ready once the runtime is", async () => {
  await until("node registered", () => api.store.get("nodes//worker-1"));
  expect((await node()).metadata.labels).toMatchObject({
    "kubernetes.io/hostname": "worker-1",
    "kubernetes.io/os": "linux",
    "beta.kubernetes.io/arch": "amd64",
    "node-role.kubernetes.io/worker": "",
  });
  await until("NotReady reported", async () => (await ready()) === "False");
  expect((await node()).status.conditions.find((c: any) => c.type === "Ready").message).toBe("container runtime status check may not have completed yet");
  runtimeErrors = [];
  await until("Ready reported", async () => (await ready()) === "True", 5000);
  const n = await node();
  expect(n.status.nodeInfo).toMatchObject({
    kubeletVersion: "v1.31.0",
    containerRuntimeVersion: "containerd://1.6.20",
    bootID: "boot",
    osImage: "Debian GNU/Linux 12 (bookworm)",
  });
  expect(n.status.capacity).toEqual({ cpu: "2", memory: "2Gi", pods: "110", "ephemeral-storage": "16Gi" });
  expect(n.status.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10250 } });
  expect(n.status.images).toEqual([{ names: ["bunlet.local/pause:1"], sizeBytes: 1000 }]);
  // The startup tracker saw the attempt, the registration, then Ready — Ready only once the runtime was.
  expect([...new Set(startupEvents)]).toEqual(["attempt", "registered", "ready"]);
});

test("status is patched only when it changed (report frequency 60 s)", async () => {
  const before = statusPatches();
  const syncs = api.requests.length;
  await until(
    "a few status syncs",
    () => api.requests.filter((r) => r.path.startsWith("/api/v1/nodes/worker-1?")).length > 0 && api.requests.length > syncs + 6,
  );
  expect(statusPatches()).toBe(before);
  pressure = ["MemoryPressure"];
  await until("MemoryPressure reported", async () => (await cond("MemoryPressure")) === "True");
  expect(statusPatches()).toBe(before + 1);
  pressure = [];
});

test("the lease is created with the node as owner and renewed every 25 % of its duration", async () => {
  const l = await until("lease", () => api.store.get("leases.coordination.k8s.io/kube-node-lease/worker-1"));
  expect(l.spec).toMatchObject({ holderIdentity: "worker-1", leaseDurationSeconds: 2 });
  expect(l.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  await until("owner reference", async () => (await lease()).metadata.ownerReferences?.[0]?.uid === (await node()).metadata.uid);
  const first = (await lease()).spec.renewTime;
  await until("lease renewed", async () => (await lease()).spec.renewTime !== first);
  expect(mode.lease.renewIntervalMs).toBe(500);
});

test("a deleted Node is registered again", async () => {
  const uid = (await node()).metadata.uid;
  await api.store.delete("nodes//worker-1");
  await until("re-registered", async () => (await api.store.get("nodes//worker-1"))?.metadata.uid !== uid && (await ready()) === "True", 10_000);
});

test("API server down: the node keeps trying; back up: the status catches up", async () => {
  await api.stop();
  pressure = ["DiskPressure"];
  await until("a status sync failed while it is down", () => mode.status.lastError());
  await api.start();
  await until("DiskPressure reported after the restart", async () => (await cond("DiskPressure")) === "True", 15_000);
  const renewed = (await lease()).spec.renewTime;
  await until("lease renewed after the restart", async () => (await lease()).spec.renewTime !== renewed, 15_000);
  pressure = [];
});
