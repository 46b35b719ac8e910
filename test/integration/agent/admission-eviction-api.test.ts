// Admission and eviction as the API sees them (API-server double, real containerd, kubectl): a node
// whose hard eviction threshold (memory.available 1000Gi) is always met has MemoryPressure and no
// allocatable memory, so API pods are rejected Failed with upstream's reasons — OutOfmemory,
// NodeAffinity, Evicted (BestEffort under MemoryPressure), PodFeatureUnsupported (a field value bunlet cannot honour) — and an admitted Burstable pod is evicted:
// Failed/Evicted with the DisruptionTarget condition (TerminationByKubelet), plus the Evicted,
// EvictionThresholdMet and NodeHasInsufficientMemory events. Needs root and containerd.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { NodeAgent } from "../../../src/agent.ts";
import type { ApiServerDouble } from "../../support/apiserver/index.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { clusterPaths, joinDouble, sleeperPodYaml, type JoinedNode } from "../../support/cluster.ts";
import { until } from "../../support/wait.ts";

const { node: NODE } = clusterPaths("admit");

describe.skipIf(!canRunContainerd())("admission and eviction in the API", () => {
  let api: ApiServerDouble;
  let agent: NodeAgent;
  let c: JoinedNode;

  const kubectl = (...args: string[]) => c.kubectl(...args);
  const createPod = (name: string, extra: string, resources = "") => c.apply(`${name}.yaml`, sleeperPodYaml(c, name, extra, resources));
  const failed = (name: string) =>
    until(
      `${name} Failed in the API`,
      async () => {
        const o = await api.store.get(`pods/default/${name}`);
        return o?.status?.phase === "Failed" ? o : undefined;
      },
      60_000,
    );
  const events = async () => (await api.store.list("events/")).items;

  beforeAll(async () => {
    c = await joinDouble({
      name: "admit",
      config: ["nodeStatusUpdateFrequency: 1s", "evictionHard: { memory.available: 1000Gi }", "evictionPressureTransitionPeriod: 5s"],
      flags: ["--node-labels=zone=a"],
    });
    ({ api, agent } = c);
    await until(
      "MemoryPressure reported",
      async () => (await api.store.get(`nodes//${NODE}`))?.status?.conditions?.find((c: any) => c.type === "MemoryPressure")?.status === "True",
      60_000,
    );
  }, 600_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("a pod requesting more memory than allocatable: Failed/OutOfmemory in the API, with a Warning event", async () => {
    await createPod("big", "", ", resources: { requests: { cpu: 10m, memory: 1Gi } }");
    const o = await failed("big");
    expect(o.status.reason).toBe("OutOfmemory");
    expect(o.status.message).toMatch(/^Node didn't have enough resource: memory, requested: 1073741824, used: 0, capacity: \d+$/);
    await until(
      "OutOfmemory event",
      async () => (await events()).find((e) => e.reason === "OutOfmemory" && e.involvedObject.name === "big" && e.type === "Warning"),
      10_000,
    );
    expect(await kubectl("get", "pod", "big")).toMatch(/big\s+0\/1\s+OutOfmemory/);
  }, 90_000);

  test("a pod using a field value bunlet cannot honour: Failed/PodFeatureUnsupported naming the field, Warning event", async () => {
    await createPod("userns", "hostUsers: false,", ", resources: { requests: { cpu: 10m } }");
    const o = await failed("userns");
    expect(o.status).toMatchObject({ phase: "Failed", reason: "PodFeatureUnsupported" });
    expect(o.status.message).toBe(
      "Pod uses fields bunlet does not support: spec.hostUsers: false is not supported by bunlet: user namespaces (hostUsers: false) are not implemented",
    );
    const ev = await until(
      "PodFeatureUnsupported event",
      async () => (await events()).find((e) => e.reason === "PodFeatureUnsupported" && e.involvedObject.name === "userns"),
      10_000,
    );
    expect(ev).toMatchObject({ type: "Warning", message: o.status.message });
    expect(await kubectl("get", "pod", "userns")).toMatch(/userns\s+0\/1\s+PodFeatureUnsupported/);
  }, 90_000);

  test("a nodeSelector the node does not match: Failed/NodeAffinity", async () => {
    await createPod("elsewhere", "nodeSelector: { zone: b },", ", resources: { requests: { cpu: 10m } }");
    const o = await failed("elsewhere");
    expect(o.status).toMatchObject({ reason: "NodeAffinity", message: "Predicate NodeAffinity failed: node(s) didn't match Node's node affinity/selector" });
  }, 90_000);

  test("an untolerated NoExecute taint (kubectl taint): Failed/TaintToleration", async () => {
    await kubectl("taint", "node", NODE, "dedicated=db:NoExecute");
    // The node status loop reads the Node every second; admission uses what it read.
    await until("taint seen by the node", () => (agent.nodeApi!.mode()!.status.node()?.spec?.taints ?? []).length > 0, 15_000);
    await createPod("tainted", "", ", resources: { requests: { cpu: 10m } }");
    const o = await failed("tainted");
    expect(o.status).toMatchObject({ phase: "Failed", reason: "TaintToleration", message: "Predicate TaintToleration failed: node(s) had untolerated taint" });
    await kubectl("taint", "node", NODE, "dedicated=db:NoExecute-");
    await until("taint gone for the node", () => (agent.nodeApi!.mode()!.status.node()?.spec?.taints ?? []).length === 0, 15_000);
  }, 120_000);

  test("a BestEffort pod under MemoryPressure: Failed/Evicted by the eviction manager's admission", async () => {
    await createPod("besteffort", "");
    const o = await failed("besteffort");
    expect(o.status).toMatchObject({ reason: "Evicted", message: "The node had condition: [MemoryPressure]. " });
  }, 90_000);

  test("an admitted pod is evicted: Failed/Evicted, DisruptionTarget (TerminationByKubelet), events Evicted, EvictionThresholdMet, NodeHasInsufficientMemory", async () => {
    await createPod("victim", "", ", resources: { requests: { cpu: 10m } }");
    const o = await failed("victim");
    expect(o.status.reason).toBe("Evicted");
    expect(o.status.message).toMatch(/^The node was low on resource: memory\./);
    const dt = o.status.conditions.find((c: any) => c.type === "DisruptionTarget");
    expect(dt).toMatchObject({ status: "True", reason: "TerminationByKubelet", message: o.status.message });
    const evs = await until(
      "eviction events",
      async () => {
        const all = await events();
        return all.some((e) => e.reason === "Evicted" && e.involvedObject.name === "victim") ? all : undefined;
      },
      30_000,
    );
    expect(evs.find((e) => e.reason === "Evicted" && e.involvedObject.name === "victim")).toMatchObject({ type: "Warning", message: o.status.message });
    expect(evs.some((e) => e.reason === "EvictionThresholdMet" && e.message === "Attempting to reclaim memory")).toBe(true);
    expect(evs.some((e) => e.reason === "NodeHasInsufficientMemory" && e.message === `Node ${NODE} status is now: NodeHasInsufficientMemory`)).toBe(true);
    const described = await kubectl("describe", "pod", "victim");
    expect(described).toMatch(/Status:\s+Failed\nReason:\s+Evicted/);
    expect(described).toMatch(/Warning\s+Evicted\s+.*kubelet\s+The node was low on resource: memory\./);
  }, 120_000);
});
