// Admission and eviction as a real control plane (test/support/upstream) and kubectl show them: a node
// whose hard eviction threshold (memory.available 1000Gi) is always met has MemoryPressure and no
// allocatable memory, so pods bound to it are rejected Failed with upstream's reasons — OutOfmemory,
// NodeAffinity, TaintToleration, Evicted (BestEffort under MemoryPressure), PodFeatureUnsupported (a field
// value bunlet cannot honour) — and an admitted Burstable pod is evicted: Failed/Evicted with the
// DisruptionTarget condition (TerminationByKubelet), plus the Evicted, EvictionThresholdMet and
// NodeHasInsufficientMemory events. Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sleeperPodYaml } from "../../support/cluster.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the admission and eviction tests: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("admission and eviction in the API", () => {
  let c: UpstreamCluster;
  const kubectl = (...args: string[]) => c.cp.kubectl(...args);
  const createPod = (name: string, spec: string, container = "") => c.cp.kubectlIn(sleeperPodYaml(c.n, name, spec, container), "apply", "-f", "-");
  const failed = (name: string) => c.podInPhase(name, "Failed");
  const events = async (): Promise<any[]> => (await c.json("get", "events")).items;
  const event = (reason: string, pod: string) =>
    until(`${reason} event for ${pod}`, async () => (await events()).find((e) => e.reason === reason && e.involvedObject.name === pod), 30_000, {
      intervalMs: 500,
    });
  /**
   * Resolves once the node's watch of its own Node (its node lister, which admission reads) has delivered
   * the Node as the API server has it now: bunlet logs each event ("Node changed … resourceVersion=N").
   */
  const nodeSeen = async () => {
    const rv = Number(await kubectl("get", "node", c.n.node, "-o", "jsonpath={.metadata.resourceVersion}"));
    await until(
      `the node's watch at resourceVersion ${rv}`,
      () => [...c.n.proc.stderr().matchAll(/Node changed .*resourceVersion=(\d+)/g)].some((m) => Number(m[1]) >= rv),
      15_000,
      { intervalMs: 100 },
    );
  };

  beforeAll(async () => {
    c = await startUpstreamCluster({
      name: "admit",
      binDir: bin.dir!,
      audit: true,
      config: ["nodeStatusUpdateFrequency: 1s", "evictionHard: { memory.available: 1000Gi }", "evictionPressureTransitionPeriod: 5s"],
      flags: ["--node-labels=zone=a"],
    });
    await until(
      "MemoryPressure reported",
      async () => (await c.json("get", "node", c.n.node)).status.conditions.find((x: any) => x.type === "MemoryPressure")?.status === "True",
      60_000,
      { intervalMs: 500 },
    );
  }, 300_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("a pod requesting more memory than allocatable: Failed/OutOfmemory in the API, with a Warning event", async () => {
    await createPod("big", "", ", resources: { requests: { cpu: 10m, memory: 1Gi } }");
    const o = await failed("big");
    expect(o.status.reason).toBe("OutOfmemory");
    expect(o.status.message).toMatch(/^Node didn't have enough resource: memory, requested: 1073741824, used: 0, capacity: \d+$/);
    expect(await event("OutOfmemory", "big")).toMatchObject({ type: "Warning", message: o.status.message });
    expect(await kubectl("get", "pod", "big")).toMatch(/big\s+0\/1\s+OutOfmemory/);
  }, 90_000);

  test("a pod using a field value bunlet cannot honour: Failed/PodFeatureUnsupported naming the field, Warning event", async () => {
    await createPod("podres", "resources: { limits: { cpu: 100m } },", ", resources: { requests: { cpu: 10m } }");
    const o = await failed("podres");
    expect(o.status).toMatchObject({ phase: "Failed", reason: "PodFeatureUnsupported" });
    // The API server may default the pod's requests from its limits: the value shown varies, the field and why do not.
    expect(o.status.message).toStartWith("Pod uses fields bunlet does not support: spec.resources: {");
    expect(o.status.message).toEndWith(
      " is not supported by bunlet: pod-level resources (PodLevelResources) are not implemented; set resources on the containers",
    );
    expect(await event("PodFeatureUnsupported", "podres")).toMatchObject({ type: "Warning", message: o.status.message });
    expect(await kubectl("get", "pod", "podres")).toMatch(/podres\s+0\/1\s+PodFeatureUnsupported/);
  }, 90_000);

  test("a nodeSelector the node does not match: Failed/NodeAffinity", async () => {
    await createPod("elsewhere", "nodeSelector: { zone: b },", ", resources: { requests: { cpu: 10m } }");
    const o = await failed("elsewhere");
    expect(o.status).toMatchObject({ reason: "NodeAffinity", message: "Predicate NodeAffinity failed: node(s) didn't match Node's node affinity/selector" });
  }, 90_000);

  test("an untolerated NoExecute taint (kubectl taint): the node reports Failed/TaintToleration, with a Warning event", async () => {
    await kubectl("taint", "node", c.n.node, "dedicated=db:NoExecute");
    await nodeSeen();
    await createPod("tainted", "", ", resources: { requests: { cpu: 10m } }");
    // The taint-eviction controller deletes the pod too (it tolerates nothing): what the node said of it
    // stays in its event and in its status patch, as the audit log holds it.
    const message = "Predicate TaintToleration failed: node(s) had untolerated taint";
    expect(await event("TaintToleration", "tainted")).toMatchObject({ type: "Warning", message });
    const patches = c.audit!.events().filter((e) => e.verb === "patch" && e.objectRef?.name === "tainted" && e.user.username === `system:node:${c.n.node}`);
    expect(patches.map((e) => e.requestObject?.status)).toContainEqual(expect.objectContaining({ phase: "Failed", reason: "TaintToleration", message }));
    await kubectl("taint", "node", c.n.node, "dedicated=db:NoExecute-");
    await nodeSeen();
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
    const dt = o.status.conditions.find((x: any) => x.type === "DisruptionTarget");
    expect(dt).toMatchObject({ status: "True", reason: "TerminationByKubelet", message: o.status.message });
    expect(await event("Evicted", "victim")).toMatchObject({ type: "Warning", message: o.status.message });
    const evs = await events();
    expect(evs.some((e) => e.reason === "EvictionThresholdMet" && e.message === "Attempting to reclaim memory")).toBe(true);
    expect(evs.some((e) => e.reason === "NodeHasInsufficientMemory" && e.message === `Node ${c.n.node} status is now: NodeHasInsufficientMemory`)).toBe(true);
    const described = await kubectl("describe", "pod", "victim");
    expect(described).toMatch(/Status:\s+Failed\nReason:\s+Evicted/);
    expect(described).toMatch(/Warning\s+Evicted\s+.*kubelet\s+The node was low on resource: memory\./);
  }, 120_000);
});
