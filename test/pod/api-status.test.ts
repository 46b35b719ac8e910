// The pod status syncer sends a status only when it changed, retries a 409 at the next sync and
// forgets pods that left the api source (fake client; the agent-level proof is join-cluster.test.ts).
import { expect, test } from "bun:test";
import { createManualClock } from "../../src/manual-clock.ts";
import { ApiError, type KubeClient } from "../../src/kube/index.ts";
import { createApiStatusSyncer } from "../../src/pod/api-status.ts";
import type { Pod, PodStatus } from "../../src/pod/types.ts";

test("patched only on change; a conflict is retried at the next sync", async () => {
  const sent: { path: string; body: any; contentType?: string }[] = [];
  let fail: ApiError | undefined;
  const client = {
    request: async (o: any) => {
      if (fail) {
        const e = fail;
        fail = undefined;
        throw e;
      }
      sent.push({ path: o.path, body: o.body, contentType: o.contentType });
      return {};
    },
  } as unknown as KubeClient;
  const pod = { metadata: { name: "p", namespace: "ns", uid: "u1" }, spec: { containers: [] } } as unknown as Pod;
  let status = { phase: "Pending" } as PodStatus;
  const syncer = createApiStatusSyncer({ client, clock: createManualClock(0), pods: () => [pod], status: () => status });
  await syncer.syncOnce();
  await syncer.syncOnce();
  expect(sent).toHaveLength(1);
  expect(sent[0]).toEqual({
    path: "/api/v1/namespaces/ns/pods/p/status",
    contentType: "application/strategic-merge-patch+json",
    body: { metadata: { uid: "u1" }, status: { phase: "Pending" } },
  });
  status = { phase: "Running" } as PodStatus;
  fail = new ApiError(409, "Conflict", "conflict", "PATCH", "/");
  await syncer.syncOnce();
  expect(sent).toHaveLength(1);
  await syncer.syncOnce();
  expect(sent.map((s) => s.body.status.phase)).toEqual(["Pending", "Running"]);
});

test("a static pod's status is patched to its mirror pod (the mirror's name and UID); none without a mirror", async () => {
  const sent: { path: string; body: any }[] = [];
  const client = { request: async (o: any) => void sent.push({ path: o.path, body: o.body }) } as unknown as KubeClient;
  const staticPod = { metadata: { name: "etcd-n1", namespace: "kube-system", uid: "static-uid" }, spec: { containers: [] } } as unknown as Pod;
  let mirror: Pod | undefined;
  const syncer = createApiStatusSyncer({
    client,
    clock: createManualClock(0),
    pods: () => [],
    staticPods: () => [staticPod],
    mirrorOf: () => mirror,
    status: (uid) => (uid === "static-uid" ? ({ phase: "Running" } as PodStatus) : undefined),
  });
  await syncer.syncOnce();
  expect(sent).toEqual([]);
  mirror = { metadata: { name: "etcd-n1", namespace: "kube-system", uid: "mirror-uid" }, spec: { containers: [] } } as unknown as Pod;
  await syncer.syncOnce();
  await syncer.syncOnce();
  // A recreated mirror (new UID) gets the status again.
  mirror = { ...mirror, metadata: { ...mirror.metadata, uid: "mirror-uid-2" } };
  await syncer.syncOnce();
  expect(sent).toEqual([
    { path: "/api/v1/namespaces/kube-system/pods/etcd-n1/status", body: { metadata: { uid: "mirror-uid" }, status: { phase: "Running" } } },
    { path: "/api/v1/namespaces/kube-system/pods/etcd-n1/status", body: { metadata: { uid: "mirror-uid-2" }, status: { phase: "Running" } } },
  ]);
});

test("a status change is patched at once, coalesced per pod, without waiting for the reconcile period", async () => {
  const sent: string[] = [];
  const arrivals: { n: number; resolve: () => void }[] = [];
  /** Resolves once n requests were made. */
  const requests = (n: number) => new Promise<void>((resolve) => (sent.length >= n ? resolve() : arrivals.push({ n, resolve })));
  let release: (() => void) | undefined;
  const client = {
    request: async (o: any) => {
      sent.push(`${o.method} ${o.body.status?.phase ?? ""}`);
      for (const a of arrivals.splice(0))
        if (sent.length >= a.n) a.resolve();
        else arrivals.push(a);
      if (!release) await new Promise<void>((r) => (release = r));
    },
  } as unknown as KubeClient;
  const clock = createManualClock(0);
  const pod = { metadata: { name: "p", namespace: "ns", uid: "u1" }, spec: { containers: [] } } as unknown as Pod;
  const other = { metadata: { name: "q", namespace: "ns", uid: "u2" }, spec: { containers: [] } } as unknown as Pod;
  const statuses = new Map<string, PodStatus>([
    ["u1", { phase: "Pending" } as PodStatus],
    ["u2", { phase: "Pending" } as PodStatus],
  ]);
  const syncer = createApiStatusSyncer({ client, clock, pods: () => [pod, other], status: (uid) => statuses.get(uid) });
  syncer.start();
  // The first PATCH hangs: the caller is not blocked, and further changes of the pod are coalesced.
  syncer.podStatusChanged("u1");
  await requests(1);
  statuses.set("u1", { phase: "Running" } as PodStatus);
  syncer.podStatusChanged("u1");
  statuses.set("u1", { phase: "Succeeded" } as PodStatus);
  syncer.podStatusChanged("u1");
  expect(sent).toEqual(["PATCH Pending"]);
  release!();
  await syncer.whenFlushed();
  // Only the changed pod (u2 waits for the reconcile) and only its latest status; the clock never moved.
  expect(sent).toEqual(["PATCH Pending", "PATCH Succeeded"]);
  expect(clock.now()).toBe(0);
  // The periodic reconcile (upstream syncBatch, 10 s) sends what was not reported.
  clock.advance(10_000);
  await requests(3);
  expect(sent).toEqual(["PATCH Pending", "PATCH Succeeded", "PATCH Pending"]);
  syncer.stop();
});

test("a pod being deleted: its final status is patched first, then it is deleted once its worker is done, and only once", async () => {
  const sent: string[] = [];
  const client = {
    request: async (o: any) => void sent.push(o.method === "PATCH" ? `PATCH ${o.body.status.phase}` : `${o.method} grace=${o.body.gracePeriodSeconds}`),
  } as unknown as KubeClient;
  const pod = {
    metadata: { name: "p", namespace: "ns", uid: "u1", deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: ["test/finalizer"] },
    spec: { containers: [] },
  } as unknown as Pod;
  let status = { phase: "Running" } as PodStatus;
  let cleanedUp = false;
  const syncer = createApiStatusSyncer({ client, clock: createManualClock(0), pods: () => [pod], status: () => status, cleanedUp: () => cleanedUp });
  await syncer.syncOnce();
  status = { phase: "Succeeded" } as PodStatus;
  cleanedUp = true;
  await syncer.syncOnce();
  // A finalizer keeps the object listed: it is not deleted again.
  await syncer.syncOnce();
  expect(sent).toEqual(["PATCH Running", "PATCH Succeeded", "DELETE grace=0"]);
});

test("podIPs are replaced whole, so a new sandbox's IP does not join the old one", async () => {
  const sent: any[] = [];
  const client = { request: async (o: any) => void sent.push(o.body) } as unknown as KubeClient;
  const pod = { metadata: { name: "p", namespace: "ns", uid: "u1" }, spec: { containers: [] } } as unknown as Pod;
  const status = { phase: "Running", podIP: "10.0.0.7", podIPs: [{ ip: "10.0.0.7" }] } as PodStatus;
  await createApiStatusSyncer({ client, clock: createManualClock(0), pods: () => [pod], status: () => status }).syncOnce();
  expect(sent[0].status).toEqual({
    phase: "Running",
    podIP: "10.0.0.7",
    podIPs: [{ ip: "10.0.0.7" }, { $patch: "replace" }],
  });
  expect(status.podIPs).toEqual([{ ip: "10.0.0.7" }]); // the lifecycle's status untouched
});
