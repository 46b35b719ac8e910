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
