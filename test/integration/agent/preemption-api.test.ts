// Critical pod admission as the API sees it (API-server double, real containerd, kubectl): a node
// full of pods (maxPods 2) gets a system-node-critical pod; the kubelet preempts the BestEffort pod
// (upstream's getPodsToPreempt: BestEffort first) — Failed/Preempting "Preempted in order to admit
// critical pod" with the DisruptionTarget condition and a Warning Preempting event — and runs the
// critical pod; the Burstable pod keeps running. A non-critical pod on the full node is refused
// OutOfpods, preempting nobody. Needs root and containerd.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import { joinDouble, sleeperPodYaml, type JoinedNode } from "../../support/cluster.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { until } from "../../support/wait.ts";

describe.skipIf(!canRunContainerd())("critical pod preemption in the API", () => {
  let c: JoinedNode;

  const createPod = (name: string, extra: string, resources = "") => c.apply(`${name}.yaml`, sleeperPodYaml(c, name, extra, resources));
  const inPhase = (name: string, phase: string) =>
    until(
      `${name} ${phase} in the API`,
      async () => {
        const o = await c.api.store.get(`pods/default/${name}`);
        return o?.status?.phase === phase ? o : undefined;
      },
      60_000,
    );

  beforeAll(async () => {
    c = await joinDouble({
      name: "preempt",
      config: [
        "nodeStatusUpdateFrequency: 1s",
        "maxPods: 2",
        // No eviction on a busy shared machine: only the pod count is short here.
        "evictionHard: { memory.available: 1Mi, nodefs.available: 1%, imagefs.available: 1% }",
      ],
    });
    await until(
      "Node Ready",
      async () => (await c.api.store.get(`nodes//${c.node}`))?.status?.conditions?.find((x: any) => x.type === "Ready")?.status === "True",
      60_000,
    );
    await createPod("low-besteffort", "");
    await createPod("low-burstable", "", ", resources: { requests: { cpu: 10m } }");
    await inPhase("low-besteffort", "Running");
    await inPhase("low-burstable", "Running");
  }, 600_000);

  afterAll(async () => {
    // The API pods are this test's own: removed by UID from the shared containerd.
    const uids = new Set(((await c?.api.store.list("pods/").catch(() => undefined))?.items ?? []).map((o: any) => o.metadata.uid as string));
    await c?.stop(async () => {
      const rt = createKubeRuntime({ cri: c.ctd.cri, rootDir: c.rootDir });
      for (const p of await rt.getPods(true).catch(() => [])) {
        if (!uids.has(p.uid)) continue;
        await rt.killPod(p, 0).catch(() => {});
        await rt.removePod(p.uid).catch(() => {});
        await rt.tearDownVolumes?.(p.uid).catch(() => {});
      }
    });
  }, 120_000);

  test("a non-critical pod on the full node: Failed/OutOfpods, nobody preempted", async () => {
    await createPod("web", "priority: 1000,", ", resources: { requests: { cpu: 10m } }");
    const o = await inPhase("web", "Failed");
    expect(o.status).toMatchObject({ reason: "OutOfpods", message: "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2" });
    expect((await c.api.store.get("pods/default/low-besteffort"))?.status.phase).toBe("Running");
  }, 90_000);

  test("a system-node-critical pod preempts the BestEffort pod (Failed/Preempting, DisruptionTarget, event) and runs", async () => {
    await createPod("critical", "priorityClassName: system-node-critical,", ", resources: { requests: { cpu: 10m } }");
    const victim = await inPhase("low-besteffort", "Failed");
    expect(victim.status).toMatchObject({ phase: "Failed", reason: "Preempting", message: "Preempted in order to admit critical pod" });
    expect(victim.status.conditions.find((c: any) => c.type === "DisruptionTarget")).toMatchObject({
      status: "True",
      reason: "TerminationByKubelet",
      message: "Pod was preempted by Kubelet to accommodate a critical pod.",
    });
    const critical = await inPhase("critical", "Running");
    expect(critical.spec.priority).toBe(2_000_001_000);
    expect((await c.api.store.get("pods/default/low-burstable"))?.status.phase).toBe("Running");
    const ev = await until(
      "Preempting event",
      async () => (await c.api.store.list("events/")).items.find((e: any) => e.reason === "Preempting" && e.involvedObject.name === "low-besteffort"),
      15_000,
    );
    expect(ev).toMatchObject({ type: "Warning", message: "Preempted in order to admit critical pod", source: { component: "kubelet" } });
    const table = await c.kubectl("get", "pods", "-o", "wide");
    expect(table).toMatch(/low-besteffort\s+0\/1\s+Preempting/);
    expect(table).toMatch(/critical\s+1\/1\s+Running/);
    expect(await c.kubectl("get", "events", "--field-selector", "reason=Preempting")).toMatch(
      /Warning\s+Preempting\s+pod\/low-besteffort\s+Preempted in order to admit critical pod/,
    );
  }, 120_000);
});
