// Critical pod admission as a real control plane (test/support/upstream) and kubectl show it: a node full
// of pods (maxPods 2) gets a system-node-critical pod (its priority resolved by kube-apiserver's Priority
// admission); the kubelet preempts the BestEffort pod (upstream's getPodsToPreempt: BestEffort first) —
// Failed/Preempting "Preempted in order to admit critical pod" with the DisruptionTarget condition and a
// Warning Preempting event — and runs the critical pod; the Burstable pod keeps running. A pod of a
// higher but not critical priority class on the full node is refused OutOfpods, preempting nobody.
// Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sleeperPodYaml } from "../../support/cluster.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the critical pod preemption tests: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("critical pod preemption in the API", () => {
  let c: UpstreamCluster;
  const createPod = (name: string, spec: string, container = "") => c.cp.kubectlIn(sleeperPodYaml(c.n, name, spec, container), "apply", "-f", "-");
  const inPhase = (name: string, phase: string) => c.podInPhase(name, phase);

  beforeAll(async () => {
    c = await startUpstreamCluster({
      name: "preempt",
      binDir: bin.dir!,
      config: [
        "nodeStatusUpdateFrequency: 1s",
        "maxPods: 2",
        // No eviction on a busy shared machine: only the pod count is short here.
        "evictionHard: { memory.available: 1Mi, nodefs.available: 1%, imagefs.available: 1% }",
      ],
    });
    await c.cp.kubectlIn("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: { name: high }\nvalue: 1000\n", "apply", "-f", "-");
    await createPod("low-besteffort", "");
    await createPod("low-burstable", "", ", resources: { requests: { cpu: 10m } }");
    await inPhase("low-besteffort", "Running");
    await inPhase("low-burstable", "Running");
  }, 300_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("a pod of a higher, not critical, priority on the full node: Failed/OutOfpods, nobody preempted", async () => {
    await createPod("web", "priorityClassName: high,", ", resources: { requests: { cpu: 10m } }");
    const o = await inPhase("web", "Failed");
    expect(o.spec.priority).toBe(1000);
    expect(o.status).toMatchObject({ reason: "OutOfpods", message: "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2" });
    expect((await c.json("get", "pod", "low-besteffort")).status.phase).toBe("Running");
  }, 90_000);

  test("a system-node-critical pod preempts the BestEffort pod (Failed/Preempting, DisruptionTarget, event) and runs", async () => {
    await createPod("critical", "priorityClassName: system-node-critical,", ", resources: { requests: { cpu: 10m } }");
    const victim = await inPhase("low-besteffort", "Failed");
    expect(victim.status).toMatchObject({ phase: "Failed", reason: "Preempting", message: "Preempted in order to admit critical pod" });
    expect(victim.status.conditions.find((x: any) => x.type === "DisruptionTarget")).toMatchObject({
      status: "True",
      reason: "TerminationByKubelet",
      message: "Pod was preempted by Kubelet to accommodate a critical pod.",
    });
    const critical = await inPhase("critical", "Running");
    expect(critical.spec.priority).toBe(2_000_001_000);
    expect((await c.json("get", "pod", "low-burstable")).status.phase).toBe("Running");
    const ev = await until(
      "Preempting event",
      async () => (await c.json("get", "events")).items.find((e: any) => e.reason === "Preempting" && e.involvedObject.name === "low-besteffort"),
      15_000,
      { intervalMs: 500 },
    );
    expect(ev).toMatchObject({ type: "Warning", message: "Preempted in order to admit critical pod", source: { component: "kubelet" } });
    // kubectl get pods shows the container's end (Error: killed) rather than the pod's reason; describe shows both.
    expect(await c.cp.kubectl("describe", "pod", "low-besteffort")).toMatch(
      /Status:\s+Failed\nReason:\s+Preempting\nMessage:\s+Preempted in order to admit critical pod\n/,
    );
    expect(await c.cp.kubectl("get", "pods", "-o", "wide")).toMatch(/critical\s+1\/1\s+Running/);
    expect(await c.cp.kubectl("get", "events", "--field-selector", "reason=Preempting")).toMatch(
      /Warning\s+Preempting\s+pod\/low-besteffort\s+Preempted in order to admit critical pod/,
    );
  }, 120_000);
});
