// An API server stopped and restarted under a running node, against the API-server double: a real
// control plane cannot be stopped and started again under a test on demand, nor its stored Node edited
// behind the node's back. While it is away the node keeps its pods running and starts new static pods;
// when it answers again the node reports its status at once (a Ready condition the server holds as
// Unknown is set True again) and writes the events it recorded meanwhile — the sync loop never waits
// for them. Joining, status, events and mirror pods against the real control plane: join-cluster.test.ts,
// mirror-events.test.ts. Needs root and containerd (skipped otherwise).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeAgent } from "../../../src/agent.ts";
import type { ApiServerDouble } from "../../support/apiserver/index.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { joinDouble, sleeperPodYaml, type JoinedNode } from "../../support/cluster.ts";
import { until } from "../../support/wait.ts";

describe.skipIf(!canRunContainerd())("an API server restarted under the node", () => {
  let api: ApiServerDouble;
  let agent: NodeAgent;
  let c: JoinedNode;
  const nodeKey = () => `nodes//${c.node}`;
  const condition = async (type: string) => (await api.store.get(nodeKey()))?.status?.conditions?.find((x: any) => x.type === type);
  const running = (name: string) => agent.pods.lifecycle.listPodsForApi().find((p) => p.metadata.name === name && p.status?.phase === "Running");

  beforeAll(async () => {
    c = await joinDouble({ name: "restart", config: ["nodeStatusUpdateFrequency: 1s", "nodeLeaseDurationSeconds: 4"] });
    ({ api, agent } = c);
    await c.apply("api-pod.yaml", sleeperPodYaml(c, "api-pod"));
    await until("api-pod Running", () => running("api-pod"), 120_000);
  }, 600_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("pods untouched while it is away; the status catches up when it returns", async () => {
    await api.stop();
    await until("a status sync failed while it is down", () => agent.nodeApi!.mode()!.status.lastError(), 15_000);
    // What the node saw while the API server was away must be reported when it returns.
    const n = (await api.store.get(nodeKey()))!;
    await api.store.put(nodeKey(), {
      ...n,
      status: {
        ...n.status,
        conditions: n.status.conditions.map((x: any) => (x.type === "Ready" ? { ...x, status: "Unknown", reason: "NodeStatusUnknown" } : x)),
      },
    });
    await api.start();
    expect((await condition("Ready"))?.status).toBe("Unknown");
    await until("Ready again after the restart", async () => (await condition("Ready"))?.status === "True", 30_000);
    expect(agent.nodeApi!.mode()!.status.lastError()).toBeUndefined();
    // The API pod kept running through the restart: one of it, not restarted.
    const apiPods = agent.pods.lifecycle.listPodsForApi().filter((p) => p.metadata.name === "api-pod");
    expect(apiPods.map((p) => [p.status?.phase, p.status?.containerStatuses?.[0]?.restartCount])).toEqual([["Running", 0]]);
  }, 90_000);

  test("events recorded while the API server is away are written when it returns (the sync loop never waits)", async () => {
    await api.stop();
    const manifest = join(c.manifests, "later.yaml");
    writeFileSync(
      manifest,
      [
        "apiVersion: v1",
        "kind: Pod",
        "metadata: { name: later, namespace: default }",
        `spec: { terminationGracePeriodSeconds: 1, containers: [{ name: c, image: "${c.ctd.images.busybox}", command: [sh, -c, "exec sleep 3600"] }] }`,
      ].join("\n"),
    );
    // The pod starts with the API server down: recording its events does not hold it up.
    await until("static pod Running offline", () => running(`later-${c.node}`), 60_000);
    await api.start();
    // The writer retries every 10 s (the first wait randomised).
    const started = await until(
      "Started event written",
      async () => (await api.store.list("events/")).items.find((e) => e.reason === "Started" && e.involvedObject.name === `later-${c.node}`),
      60_000,
    );
    expect(started.message).toBe("Started container c");
    rmSync(manifest);
  }, 150_000);
});
