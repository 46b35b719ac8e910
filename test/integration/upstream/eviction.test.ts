// Node-pressure eviction as a cluster sees it (machine test): bunlet is the node of a real control
// plane, the real scheduler places a BestEffort memory hog and a Burstable pod on it, the hog crosses
// the hard allocatable memory threshold, and everything an SRE would look at with kubectl shows what
// happened — the Node's MemoryPressure condition (then cleared), the hog Failed/Evicted with the
// DisruptionTarget condition, the events — while the Burstable pod keeps running.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canRunContainerd } from "../../support/containerd.ts";
import { joinUpstream, startControlPlane, upstreamBinDir, waitNodeReady, type ControlPlane, type UpstreamNode } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const MIB = 1024 * 1024;
const ALLOCATABLE = 1024 * MIB;
const THRESHOLD_MIB = 300;
const TRANSITION_S = 5;

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the real-cluster eviction test: ${bin.why}`);
const onV1 = !existsSync("/sys/fs/cgroup/cgroup.controllers"); // the fence below is written in v1's memory hierarchy

function memTotalBytes(): number {
  const kb = /^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1];
  return Number(kb) * 1024;
}

const pods = (memhog: string, busybox: string) => `
apiVersion: v1
kind: Pod
metadata: { name: steady }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${busybox}
      command: [sh, -c, "exec sleep 3600"]
      resources: { requests: { memory: 32Mi }, limits: { memory: 128Mi } }
---
apiVersion: v1
kind: Pod
metadata: { name: hog }
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    # 900 MiB at 100 MiB/s: past the line (~724 MiB of pod memory) after ~7 s, under the 1 GiB kubepods limit.
    - { name: main, image: ${memhog}, imagePullPolicy: Never, args: ["900", "100"] }
`;

describe.skipIf(!canRunContainerd() || !bin.dir || !onV1)("bunlet under memory pressure, seen through a real control plane", () => {
  let cp: ControlPlane;
  let n: UpstreamNode;
  const json = async (...args: string[]) => JSON.parse(await cp.kubectl(...args, "-o", "json"));
  const condition = async (type: string) => (await json("get", "node", n.node)).status.conditions.find((c: { type: string }) => c.type === type);

  beforeAll(async () => {
    cp = await startControlPlane({ dir: `/tmp/bunlet-upstream-eviction-${process.pid}`, binDir: bin.dir! });
    n = await joinUpstream({
      name: "real-evict",
      cp,
      config: [
        "nodeStatusUpdateFrequency: 1s",
        "enforceNodeAllocatable: [pods]",
        `systemReserved: { memory: "${memTotalBytes() - ALLOCATABLE}" }`,
        // evictionHard memory.available is copied onto allocatableMemory.available (kubepods), as upstream.
        `evictionHard: { memory.available: ${THRESHOLD_MIB}Mi }`,
        `evictionPressureTransitionPeriod: ${TRANSITION_S}s`,
        "kernelMemcgNotification: true",
      ],
      // A fence above allocatable, so a hog that outran eviction meets its own OOM killer, never the host's.
      prepare: ({ cgroupRoot }) => {
        const root = `/sys/fs/cgroup/memory${cgroupRoot}`;
        mkdirSync(root, { recursive: true });
        writeFileSync(join(root, "memory.limit_in_bytes"), String(ALLOCATABLE + 128 * MIB));
      },
    });
    await waitNodeReady(cp, n);
  }, 300_000);

  afterAll(async () => {
    await n?.stop();
    await cp?.stop();
  }, 120_000);

  test("the hog is Failed/Evicted with DisruptionTarget, MemoryPressure is set then cleared, the events say why, the Burstable pod keeps running", async () => {
    await cp.kubectlIn(pods(n.ctd.images.memhog, n.ctd.images.busybox), "apply", "-f", "-");
    await cp.kubectl("wait", "pod/steady", "pod/hog", "--for=condition=Ready", "--timeout=90s");
    const steadyBefore = (await json("get", "pod", "steady")).status.containerStatuses[0];

    let pressureSeen = false;
    const hog = await until(
      "hog Failed",
      async () => {
        if ((await condition("MemoryPressure"))?.status === "True") pressureSeen = true;
        const p = await json("get", "pod", "hog");
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
    // The Node's MemoryPressure: True while the transition period holds it (seen above or now), then False.
    pressureSeen ||= (await condition("MemoryPressure"))?.status === "True";
    expect(pressureSeen).toBe(true);
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

    const events = (await json("get", "events")).items as { reason: string; type: string; involvedObject: { kind: string; name: string }; message: string }[];
    expect(events).toContainEqual(
      expect.objectContaining({ reason: "Evicted", type: "Warning", involvedObject: expect.objectContaining({ kind: "Pod", name: "hog" }) }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ reason: "EvictionThresholdMet", type: "Warning", involvedObject: expect.objectContaining({ kind: "Node", name: n.node }) }),
    );
    expect(events).toContainEqual(expect.objectContaining({ reason: "NodeHasInsufficientMemory", involvedObject: expect.objectContaining({ kind: "Node" }) }));

    const steady = await json("get", "pod", "steady");
    expect(steady.status.phase).toBe("Running");
    expect(steady.status.containerStatuses[0]).toMatchObject({ containerID: steadyBefore.containerID, restartCount: 0, ready: true });
  }, 240_000);
});
