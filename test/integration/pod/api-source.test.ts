// The API-server pod source against the API-server double (etcd-backed where installed): only this
// node's pods, as SET updates; changes and deletions through the watch; bookmarks move the resume
// point; an API-server restart mid-watch resumes without losing or duplicating pods; a compacted
// resourceVersion (410 Gone) relists.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { realClock } from "../../../src/clock.ts";
import { createKubeClient } from "../../../src/kube/index.ts";
import { createApiSource, type ApiPodSource } from "../../../src/pod/sources/api.ts";
import type { PodUpdate } from "../../../src/pod/sources/update.ts";
import { startApiServer, type ApiServerDouble } from "../../support/apiserver/index.ts";
import { until } from "../../support/wait.ts";

let api: ApiServerDouble;
let source: ApiPodSource;
const updates: PodUpdate[] = [];
const last = () => updates.at(-1);
const names = () => (last()?.pods ?? []).map((p) => p.metadata.name).sort();
let uidSeq = 0;

const pod = (name: string, nodeName: string, image = "bunlet.local/pause:1") => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default", uid: `uid-${name}-${++uidSeq}`, creationTimestamp: new Date().toISOString() },
  spec: { nodeName, containers: [{ name: "c", image }], restartPolicy: "Always", terminationGracePeriodSeconds: 30 },
  status: { phase: "Pending" },
});
const put = (p: ReturnType<typeof pod>) => api.store.put(`pods/default/${p.metadata.name}`, p);

beforeAll(async () => {
  api = await startApiServer({ bookmarkIntervalMs: 200 });
  await put(pod("mine-1", "worker-1"));
  await put(pod("other", "worker-2"));
  const cert = await api.issueClientCert("system:node:worker-1", ["system:nodes"]);
  const client = createKubeClient(
    { server: api.url, caPem: api.caPem, certPem: cert.certPem, keyPem: cert.keyPem, source: "test" },
    { clock: realClock, timeoutMs: 5000 },
  );
  source = createApiSource({ client, nodeName: "worker-1", clock: realClock, onUpdate: (u) => updates.push(u), backoffInitialMs: 50, backoffMaxMs: 500 });
  source.start();
});

afterAll(async () => {
  source?.stop();
  await api?.close();
});

test("the first list delivers this node's pods only, as a SET from source api", async () => {
  await until("step 1", () => updates.length > 0, 30_000);
  expect(updates[0]!.op).toBe("SET");
  expect(updates[0]!.source).toBe("api");
  expect(names()).toEqual(["mine-1"]);
  const req = api.requests.find((r) => r.path.startsWith("/api/v1/pods"))!;
  expect(decodeURIComponent(req.path)).toContain("fieldSelector=spec.nodeName=worker-1");
});

test("added, modified and deleted pods arrive through the watch", async () => {
  await put(pod("mine-2", "worker-1"));
  await until("step 2", () => names().join() === "mine-1,mine-2", 30_000);
  const m2 = (await api.store.get("pods/default/mine-2"))!;
  await api.store.put("pods/default/mine-2", { ...m2, metadata: { ...m2.metadata, labels: { v: "2" } } });
  await until("step 3", () => last()!.pods.find((p) => p.metadata.name === "mine-2")?.metadata.labels?.v === "2", 30_000);
  await api.store.delete("pods/default/mine-2");
  await until("step 4", () => names().join() === "mine-1", 30_000);
  expect(updates.every((u) => u.op === "SET")).toBe(true);
});

test("bookmarks move the resume point without an update", async () => {
  const before = updates.length;
  await put(pod("other-2", "worker-2"));
  const rev = await api.store.revision();
  await until("step 5", () => Number(source.resourceVersion()) >= rev, 30_000);
  expect(updates.length).toBe(before);
});

test("an API-server restart mid-watch resumes: no pod lost or duplicated, no relist", async () => {
  const lists = () => api.requests.filter((r) => r.path.startsWith("/api/v1/pods") && !r.path.includes("watch=true")).length;
  const listsBefore = lists();
  await api.stop();
  await put(pod("while-down", "worker-1"));
  await api.start();
  await until("step 6", () => names().join() === "mine-1,while-down", 60_000);
  const uids = last()!.pods.map((p) => p.metadata.uid);
  expect(new Set(uids).size).toBe(uids.length);
  expect(lists()).toBe(listsBefore);
});

test("a compacted resourceVersion (410 Gone) relists and the set stays right", async () => {
  const lists = () => api.requests.filter((r) => r.path.startsWith("/api/v1/pods") && !r.path.includes("watch=true")).length;
  const listsBefore = lists();
  await api.stop();
  await put(pod("after-compact", "worker-1"));
  await api.store.delete("pods/default/while-down");
  await put(pod("filler", "worker-2"));
  await api.store.compact();
  await api.start();
  await until("step 7", () => names().join() === "after-compact,mine-1", 60_000);
  expect(lists()).toBeGreaterThan(listsBefore);
});
