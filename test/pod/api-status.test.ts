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
      if (fail) { const e = fail; fail = undefined; throw e; }
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
  expect(sent[0]).toEqual({ path: "/api/v1/namespaces/ns/pods/p/status", contentType: "application/strategic-merge-patch+json", body: { metadata: { uid: "u1" }, status: { phase: "Pending" } } });
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
