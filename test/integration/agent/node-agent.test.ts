// The whole node agent (createNodeAgent, as `bunlet` runs it) against a private containerd: static
// pods from a temp manifest dir run and show in /pods and /stats/summary; a BestEffort memory hog in a
// small kubepods limit (systemReserved = capacity − 256Mi) is evicted through the kernel memcg
// notifier on kubepods, with an upstream-shaped status, a trace record and metrics, while the other
// pods keep running. The eviction is the default one, decided on the notifier thread
// (BUNLET_NOTIFIER_THREAD_EVICTION unset; =0 runs it on the main thread's cycle). Skipped when not root.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeAgent } from "../../../src/agent.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { notifierThreadEvictionFromEnv } from "../../../src/wire/eviction.ts";
import type { EvictionTraceRecord } from "../../../src/eviction/trace-record.ts";
import { canRunContainerd, type TestContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { startStandaloneNode, type StandaloneNode } from "../../support/standalone.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-agent-${PID}`;
const BASE = `/tmp/bunlet-agent-${PID}`;
const MANIFESTS = join(BASE, "manifests");
const TRACE = join(BASE, "trace.jsonl");
const NODE = "agenttest";
const KUBEPODS_LIMIT_MIB = 256;

/** busybox takes `args` as its command, the memhog image as its arguments; `resources` is container YAML. */
const pod = (name: string, image: string, args: string[], resources = "") =>
  staticPodYaml(name, { image, ...(image.includes("busybox") ? { command: args } : { args }), terminationGracePeriodSeconds: 2, container: resources });

const SLEEP = ["sh", "-c", "exec sleep 3600"];

describe.skipIf(!canRunContainerd())("node agent on containerd", () => {
  let node: StandaloneNode;
  let ctd: TestContainerd;
  let agent: NodeAgent;
  let base: string;

  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${base}${path}`);
    if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
    return (await res.json()) as T;
  };
  const pods = async () => (await get<{ items: Pod[] }>("/pods")).items;
  const podNamed = async (name: string) => (await pods()).find((p) => p.metadata.name === `${name}-${NODE}`);

  beforeAll(async () => {
    const memTotal = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))![1]) * 1024;
    node = await startStandaloneNode({
      base: BASE,
      cgroupRoot: CGROUP_ROOT,
      node: NODE,
      config: [
        // kubepods (node allocatable) = capacity − systemReserved: a small pod budget on a big host.
        `systemReserved: { memory: "${memTotal - KUBEPODS_LIMIT_MIB * 2 ** 20}" }`,
        "evictionHard: { memory.available: 100Mi }",
        "evictionPressureTransitionPeriod: 30s",
        "kernelMemcgNotification: true",
        "evictStaticPods: true",
      ],
      flags: [`--eviction-trace=${TRACE}`],
      prepare: ({ ctd }) => {
        writeFileSync(
          join(MANIFESTS, "steady.yaml"),
          pod(
            "steady",
            ctd.images.busybox,
            SLEEP,
            "      resources:\n        requests: { cpu: 50m, memory: 16Mi }\n        limits: { cpu: 50m, memory: 16Mi }\n",
          ),
        );
        writeFileSync(join(MANIFESTS, "web.yaml"), pod("web", ctd.images.busybox, SLEEP, "      resources:\n        requests: { cpu: 10m, memory: 8Mi }\n"));
      },
    });
    ({ ctd, agent, url: base } = node);
  }, 600_000);

  afterAll(async () => {
    await node?.stop();
  }, 120_000);

  test("static pods from the manifest dir run and /pods shows them Running", async () => {
    for (const name of ["steady", "web"]) {
      const p = await until(`${name} Running`, async () => {
        const x = await podNamed(name);
        return x?.status?.phase === "Running" ? x : undefined;
      });
      expect(p.status!.containerStatuses![0]!.state.running).toBeDefined();
    }
    // kubepods is limited to node allocatable.
    const limit = Number(readFileSync(join("/sys/fs/cgroup/memory", CGROUP_ROOT, "kubepods/memory.limit_in_bytes"), "utf8"));
    expect(limit).toBe(KUBEPODS_LIMIT_MIB * 2 ** 20);
  }, 120_000);

  test("/stats/summary has the pods with memory, and the kubepods system container", async () => {
    type S = {
      node: { runtime?: { imageFs?: { capacityBytes?: number } }; systemContainers?: { name: string; memory?: { availableBytes?: number } }[] };
      pods: { podRef: { name: string }; memory?: { workingSetBytes?: number } }[];
    };
    const s = await until("steady in summary with memory", async () => {
      const x = await get<S>("/stats/summary");
      // imagefs is learnt from the runtime when the eviction manager starts, alongside the pods.
      return x.pods.find((p) => p.podRef.name === `steady-${NODE}`)?.memory && x.node.runtime?.imageFs ? x : undefined;
    });
    const steady = s.pods.find((p) => p.podRef.name === `steady-${NODE}`)!;
    expect(steady.memory!.workingSetBytes).toBeGreaterThan(0);
    const podsContainer = s.node.systemContainers?.find((c) => c.name === "pods");
    expect(podsContainer?.memory?.availableBytes).toBeLessThanOrEqual(KUBEPODS_LIMIT_MIB * 2 ** 20);
    // imagefs is observed on containerd's image store (ImageFsInfo), so imagefs.* thresholds can act.
    expect(s.node.runtime?.imageFs?.capacityBytes).toBeGreaterThan(0);
  }, 60_000);

  test("a BestEffort memory hog is evicted through the kernel notifier; the others keep running", async () => {
    // A second BestEffort pod holding 24 MiB: ranked right after the hog, and must survive (the
    // manager re-observes after the kill instead of evicting again).
    writeFileSync(join(MANIFESTS, "holder.yaml"), pod("holder", ctd.images.memhog, ["24", "0"]));
    await until("holder Running", async () => (await podNamed("holder"))?.status?.phase === "Running", 60_000);
    // 20 MiB/s: crosses the 100Mi-below-256Mi threshold (~156 MiB) after ~7 s, far from the cgroup OOM at 256 MiB.
    writeFileSync(join(MANIFESTS, "hog.yaml"), pod("hog", ctd.images.memhog, ["400", "20"]));
    await until("hog Running", async () => (await podNamed("hog"))?.status?.phase === "Running", 60_000);
    const hog = await until(
      "hog evicted",
      async () => {
        const p = await podNamed("hog");
        return p?.status?.phase === "Failed" ? p : undefined;
      },
      60_000,
    );
    expect(hog.status!.reason).toBe("Evicted");
    expect(hog.status!.message).toMatch(
      /^The node was low on resource: memory\. Threshold quantity: 100Mi, available: \d+Ki\. Container main was using \d+Ki, request is 0, has larger consumption of memory\. ?$/,
    );
    // The trace record: written once memory is back below the threshold.
    const rec = await until("trace record", () => {
      if (!existsSync(TRACE)) return undefined;
      const lines = readFileSync(TRACE, "utf8").trim().split("\n").filter(Boolean);
      return lines.map((l) => JSON.parse(l) as EvictionTraceRecord).find((r) => r.pod === `default/hog-${NODE}`);
    });
    // One comparison over the whole record, so a failure shows all of it. The default path: decided and
    // signalled on the kernel notifier thread (kernel/fast-evict.ts), recorded by the main thread
    // (eviction/fast-adopt.ts) with the same status, message and events; BUNLET_NOTIFIER_THREAD_EVICTION=0
    // runs the same test on the main thread's cycle.
    const t = (s: string | null) => (s === null ? Number.NaN : Date.parse(s));
    const ts = rec.timestamps;
    // A deep copy: Bun 1.4's toMatchObject writes its asymmetric matchers into the object it received.
    expect({
      ...structuredClone(rec),
      ranked: rec.ranked.map((r) => r.pod).slice(0, 2),
      inOrder: t(ts.thresholdCrossed) <= t(ts.decision) && t(ts.decision) <= t(ts.stopSignalSent) && t(ts.stopSignalSent) <= t(ts.containerExited),
    }).toMatchObject({
      signal: "allocatableMemory.available",
      trigger: { kind: "kernel" },
      decidedBy: notifierThreadEvictionFromEnv(process.env) ? "notifier-thread" : undefined,
      threshold: "100Mi",
      timestamps: { stopSignalSent: expect.any(String), containerExited: expect.any(String), memoryBelowThreshold: expect.any(String) },
      ranked: [`default/hog-${NODE}`, `default/holder-${NODE}`],
      inOrder: true,
    });
    // Only the hog went, also once pressure was re-observed after the kill.
    await until("a cycle after the hog's cleanup", () => {
      const r = agent.eviction.manager.lastReport();
      return r && r.timeMs > Date.parse(rec.timestamps.containerExited!) && r.met.length === 0 ? r : undefined;
    });
    for (const name of ["steady", "web", "holder"]) expect((await podNamed(name))?.status?.phase).toBe("Running");
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('kubelet_evictions{eviction_signal="allocatableMemory.available"} 1');
    expect(metrics).toMatch(/bunlet_eviction_detection_to_signal_seconds_count\{eviction_signal="allocatableMemory.available"\} 1/);
    const explain = await get<{ mode: string }>("/debug/eviction");
    expect(explain.mode).toBe("live");
  }, 150_000);

  test("under MemoryPressure a new BestEffort static pod is rejected at admission", async () => {
    expect(agent.eviction.manager.nodeConditions()).toContain("MemoryPressure"); // held for the 30 s transition period
    writeFileSync(join(MANIFESTS, "late.yaml"), pod("late", ctd.images.busybox, SLEEP));
    const late = await until("late rejected", async () => {
      const p = await podNamed("late");
      return p?.status?.phase === "Failed" ? p : undefined;
    });
    expect(late.status).toMatchObject({ reason: "Evicted", message: "The node had condition: [MemoryPressure]. " });
  }, 60_000);
});
