// Node-pressure eviction as a cluster sees it (machine test): bunlet is the node of a real control
// plane, the real scheduler places a BestEffort memory hog and a Burstable pod on it, the hog crosses
// the hard allocatable memory threshold, and everything an SRE would look at with kubectl shows what
// happened — the Node's MemoryPressure condition (then cleared), the hog Failed/Evicted with the
// DisruptionTarget condition, the events — while the Burstable pod keeps running.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { canRunContainerd } from "../../support/containerd.ts";
import { canFenceMemory, memoryHogPods, memoryPressureNode, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const PRESSURE = { allocatableMiB: 1024, thresholdMiB: 300, transitionS: 5 };

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the real-cluster eviction test: ${bin.why}`);
if (!canFenceMemory) console.warn("skipping the real-cluster eviction test: its memory fence needs cgroup v1's memory hierarchy");

describe.skipIf(!canRunContainerd() || !bin.dir || !canFenceMemory)("bunlet under memory pressure, seen through a real control plane", () => {
  let c: UpstreamCluster;
  const condition = async (type: string) => (await c.json("get", "node", c.n.node)).status.conditions.find((x: { type: string }) => x.type === type);

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "real-evict", binDir: bin.dir!, ...memoryPressureNode(PRESSURE) });
  }, 300_000);

  afterAll(() => c?.stop(), 120_000);

  test("the hog is Failed/Evicted with DisruptionTarget, MemoryPressure is set then cleared, the events say why, the Burstable pod keeps running", async () => {
    await c.cp.kubectlIn(memoryHogPods(c.n.ctd.images), "apply", "-f", "-");
    await c.cp.kubectl("wait", "pod/steady", "pod/hog", "--for=condition=Ready", "--timeout=90s");
    const steadyBefore = (await c.json("get", "pod", "steady")).status.containerStatuses[0];

    let pressureSeen = false;
    const hog = await until(
      "hog Failed",
      async () => {
        if ((await condition("MemoryPressure"))?.status === "True") pressureSeen = true;
        const p = await c.json("get", "pod", "hog");
        return p.status.phase === "Failed" ? p : undefined;
      },
      90_000,
      { intervalMs: 250 },
    );
    expect(hog.status.reason).toBe("Evicted");
    expect(hog.status.message).toMatch(
      /^The node was low on resource: memory\. Threshold quantity: 300Mi, available: \d+Ki\. Container main was using \d+Ki, request is 0/,
    );
    expect(hog.status.conditions.find((c: { type: string }) => c.type === "DisruptionTarget")).toMatchObject({
      status: "True",
      reason: "TerminationByKubelet",
      message: hog.status.message,
    });
    // The Node's MemoryPressure: True from the next status update (nodeStatusUpdateFrequency, 1 s here)
    // while the transition period holds it, then False.
    if (!pressureSeen)
      await until("MemoryPressure True", async () => (await condition("MemoryPressure"))?.status === "True" || undefined, PRESSURE.transitionS * 1000, {
        intervalMs: 200,
      });
    const cleared = await until(
      "MemoryPressure cleared",
      async () => {
        const c = await condition("MemoryPressure");
        return c?.status === "False" ? c : undefined;
      },
      60_000,
      { intervalMs: 500 },
    );
    expect(cleared.reason).toBe("KubeletHasSufficientMemory");

    const events = (await c.json("get", "events")).items as { reason: string; type: string; involvedObject: { kind: string; name: string }; message: string }[];
    expect(events).toContainEqual(
      expect.objectContaining({ reason: "Evicted", type: "Warning", involvedObject: expect.objectContaining({ kind: "Pod", name: "hog" }) }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ reason: "EvictionThresholdMet", type: "Warning", involvedObject: expect.objectContaining({ kind: "Node", name: c.n.node }) }),
    );
    expect(events).toContainEqual(expect.objectContaining({ reason: "NodeHasInsufficientMemory", involvedObject: expect.objectContaining({ kind: "Node" }) }));

    const steady = await c.json("get", "pod", "steady");
    expect(steady.status.phase).toBe("Running");
    expect(steady.status.containerStatuses[0]).toMatchObject({ containerID: steadyBefore.containerID, restartCount: 0, ready: true });
  }, 240_000);
});
