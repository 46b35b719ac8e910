import { describe, expect, test } from "bun:test";
import { createManualClock } from "../../src/manual-clock.ts";
import { instrumentCgroups } from "../../src/metrics/cgroups.ts";
import { nodeMetrics, volumeSamples } from "../../src/metrics/node.ts";
import { volumePluginName } from "../../src/pod/volumes/index.ts";
import { podFirstSeenMs, podLifecycleMetrics, runningCounts } from "../../src/metrics/pods.ts";
import { probeMetrics } from "../../src/metrics/probes.ts";
import { createPodWorkers } from "../../src/pod/pod-workers.ts";
import type { RuntimePod } from "../../src/pod/runtime.ts";
import type { Pod } from "../../src/pod/types.ts";
import { createRegistry } from "../../src/server/metrics.ts";

const sample = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

function pod(
  name: string,
  extra: { annotations?: Record<string, string>; creationTimestamp?: string; volumes?: object[]; hostNetwork?: boolean; phase?: string } = {},
): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", uid: `uid-${name}`, annotations: extra.annotations, creationTimestamp: extra.creationTimestamp },
    spec: { containers: [{ name: "main", image: "busybox" }], volumes: extra.volumes, hostNetwork: extra.hostNetwork },
    status: extra.phase ? { phase: extra.phase } : undefined,
  } as unknown as Pod;
}

const rp = (uid: string, ready: number, states: RuntimePod["containers"][number]["state"][]): RuntimePod => ({
  uid,
  name: uid,
  namespace: "default",
  sandboxIds: [],
  readySandboxes: ready,
  containers: states.map((state, i) => ({ id: `${uid}-${i}`, name: `c${i}`, state })),
});

describe("running pods and containers (upstream updateRunningPodAndContainerMetrics)", () => {
  test.each([
    ["nothing", [], 0, { created: 0, running: 0, exited: 0, unknown: 0 }],
    ["a pod with a ready sandbox", [rp("a", 1, ["running", "exited"])], 1, { created: 0, running: 1, exited: 1, unknown: 0 }],
    [
      "a pod whose sandbox stopped counts no running pod",
      [rp("a", 0, ["exited"]), rp("b", 1, ["created", "unknown"])],
      1,
      { created: 1, running: 0, exited: 1, unknown: 1 },
    ],
  ])("%s", (_n, pods, runningPods, containers) => {
    expect(runningCounts(pods as RuntimePod[])).toEqual({ runningPods, containers });
  });

  test("a relist sets the gauges, the relist duration/interval histograms and last seen", () => {
    const registry = createRegistry();
    const m = podLifecycleMetrics(registry);
    m.relisted!({ startMs: 1000, endMs: 1004, pods: [rp("a", 1, ["running"])] });
    m.relisted!({ startMs: 2000, endMs: 2010, pods: [rp("a", 1, ["running", "running"]), rp("b", 1, [])] });
    const text = registry.render();
    expect(sample(text, "kubelet_running_pods")).toBe(2);
    expect(sample(text, 'kubelet_running_containers{container_state="running"}')).toBe(2);
    expect(sample(text, 'kubelet_running_containers{container_state="exited"}')).toBe(0);
    expect(sample(text, "kubelet_pleg_relist_duration_seconds_count")).toBe(2);
    expect(sample(text, "kubelet_pleg_relist_duration_seconds_sum")).toBeCloseTo(0.014);
    expect(sample(text, "kubelet_pleg_relist_interval_seconds_count")).toBe(1);
    expect(sample(text, "kubelet_pleg_relist_interval_seconds_sum")).toBe(1);
    expect(sample(text, "kubelet_pleg_discard_events")).toBe(0);
    expect(sample(text, "kubelet_pleg_last_seen_seconds")).toBeGreaterThan(1.7e9);
  });
});

test("an orphaned pod directory sweep sets kubelet_orphan_pod_cleaned_volumes and its _errors", () => {
  const registry = createRegistry();
  podLifecycleMetrics(registry).orphanedPodDirsSwept!(3, 1);
  const text = registry.render();
  expect(sample(text, "kubelet_orphan_pod_cleaned_volumes")).toBe(3);
  expect(sample(text, "kubelet_orphan_pod_cleaned_volumes_errors")).toBe(1);
});

describe("pod start", () => {
  test("first seen comes from kubernetes.io/config.seen, else creationTimestamp", () => {
    expect(podFirstSeenMs(pod("a", { annotations: { "kubernetes.io/config.seen": "2024-01-01T00:00:01.500000000Z" } }))).toBe(
      Date.UTC(2024, 0, 1, 0, 0, 1, 500),
    );
    expect(podFirstSeenMs(pod("b", { creationTimestamp: "2024-01-01T00:00:02Z" }))).toBe(Date.UTC(2024, 0, 1, 0, 0, 2));
    expect(podFirstSeenMs(pod("c", { annotations: { "kubernetes.io/config.seen": "garbage" } }))).toBeUndefined();
  });

  test("start duration from first seen; the SLI labels only the first pod-network pod first_with_network=true", () => {
    const registry = createRegistry();
    const m = podLifecycleMetrics(registry);
    const t0 = Date.UTC(2024, 0, 1);
    const seen = { "kubernetes.io/config.seen": new Date(t0).toISOString() };
    m.podRunning!(pod("host", { annotations: seen, hostNetwork: true }), t0 + 700);
    m.podRunning!(pod("net1", { annotations: seen }), t0 + 2500);
    m.podRunning!(pod("net2", { annotations: seen }), t0 + 2500);
    const text = registry.render();
    expect(sample(text, "kubelet_pod_start_duration_seconds_count")).toBe(3);
    expect(sample(text, 'kubelet_pod_start_duration_seconds_bucket{le="0.5"}')).toBe(0);
    expect(sample(text, 'kubelet_pod_start_duration_seconds_bucket{le="1"}')).toBe(1);
    expect(sample(text, 'kubelet_pod_start_duration_seconds_bucket{le="3"}')).toBe(3);
    expect(sample(text, 'kubelet_pod_start_sli_duration_seconds_count{first_with_network="true"}')).toBe(1);
    expect(sample(text, 'kubelet_pod_start_sli_duration_seconds_count{first_with_network="false"}')).toBe(2);
    expect(sample(text, 'kubelet_pod_start_total_duration_seconds_count{first_with_network="false"}')).toBe(2);
  });

  test("pod workers report each sync by operation type and the first sync's start delay", async () => {
    const registry = createRegistry();
    const clock = createManualClock(0);
    const workers = createPodWorkers({
      clock,
      metrics: podLifecycleMetrics(registry),
      syncer: {
        syncPod: async () => {
          clock.set(clock.now() + 30);
          return {};
        },
        syncTerminatingPod: async () => {},
        syncTerminatedPod: async () => {},
      },
    });
    workers.updatePod({ type: "create", pod: pod("a") });
    await workers.whenIdle();
    workers.updatePod({ type: "sync", pod: pod("a") });
    await workers.whenIdle();
    workers.updatePod({ type: "kill", pod: pod("a") });
    await workers.whenIdle();
    const text = registry.render();
    expect(sample(text, 'kubelet_pod_worker_duration_seconds_count{operation_type="create"}')).toBe(1);
    expect(sample(text, 'kubelet_pod_worker_duration_seconds_sum{operation_type="create"}')).toBe(0.03);
    expect(sample(text, 'kubelet_pod_worker_duration_seconds_count{operation_type="sync"}')).toBe(1);
    expect(text).not.toContain('operation_type="kill"');
    expect(sample(text, "kubelet_pod_worker_start_duration_seconds_count")).toBe(1);
  });
});

describe("probes", () => {
  test("prober_probe_total by type/result with pod labels; a removed pod's series go", () => {
    const registry = createRegistry();
    const m = probeMetrics(registry);
    const a = pod("a");
    m.probed({ pod: a, container: "main", probeType: "Liveness", result: "successful", seconds: 0.002 });
    m.probed({ pod: a, container: "main", probeType: "Liveness", result: "successful", seconds: 0.002 });
    m.probed({ pod: a, container: "main", probeType: "Readiness", result: "failed", seconds: 0.002 });
    m.probed({ pod: pod("b"), container: "main", probeType: "Startup", result: "unknown", seconds: 0.002 });
    let text = registry.render();
    expect(sample(text, 'prober_probe_total{probe_type="Liveness",result="successful",container="main",pod="a",namespace="default",pod_uid="uid-a"}')).toBe(2);
    expect(sample(text, 'prober_probe_total{probe_type="Readiness",result="failed",container="main",pod="a",namespace="default",pod_uid="uid-a"}')).toBe(1);
    expect(sample(text, 'prober_probe_duration_seconds_count{probe_type="Liveness",container="main",pod="a",namespace="default"}')).toBe(2);
    m.probesRemoved("uid-a");
    text = registry.render();
    expect(text).not.toContain('pod="a"');
    expect(text).toContain('pod="b"');
  });
});

describe("node and volume gauges", () => {
  test.each([
    [{ name: "v", emptyDir: {} }, "kubernetes.io/empty-dir"],
    [{ name: "v", hostPath: { path: "/x" } }, "kubernetes.io/host-path"],
    [{ name: "v", downwardAPI: { items: [] } }, "kubernetes.io/downward-api"],
    [{ name: "v", projected: { sources: [] } }, "kubernetes.io/projected"],
    [{ name: "v" }, undefined],
  ])("volume %# is plugin %p", (v, plugin) => {
    expect(volumePluginName(v)).toBe(plugin);
  });

  test("volume_manager_total_volumes counts desired and actual volumes per plugin", () => {
    const a = pod("a", {
      volumes: [
        { name: "x", emptyDir: {} },
        { name: "y", hostPath: { path: "/y" } },
      ],
    });
    const b = pod("b", { volumes: [{ name: "x", emptyDir: {} }] });
    expect(volumeSamples([a, b], [a])).toEqual([
      { labels: { plugin_name: "kubernetes.io/empty-dir", state: "desired_state_of_world" }, value: 2 },
      { labels: { plugin_name: "kubernetes.io/host-path", state: "desired_state_of_world" }, value: 1 },
      { labels: { plugin_name: "kubernetes.io/empty-dir", state: "actual_state_of_world" }, value: 1 },
      { labels: { plugin_name: "kubernetes.io/host-path", state: "actual_state_of_world" }, value: 1 },
    ]);
  });

  test("node name, desired/active pods by static, config error and preemptions are exposed", () => {
    const registry = createRegistry();
    const staticPod = pod("s", { annotations: { "kubernetes.io/config.source": "file" } });
    nodeMetrics(registry, { nodeName: "node-1", pods: { desiredPods: () => [staticPod, pod("api")], activePods: () => [staticPod], mountedPods: () => [] } });
    const text = registry.render();
    expect(sample(text, 'kubelet_node_name{node="node-1"}')).toBe(1);
    expect(sample(text, 'kubelet_desired_pods{static="true"}')).toBe(1);
    expect(sample(text, 'kubelet_desired_pods{static="false"}')).toBe(1);
    expect(sample(text, 'kubelet_active_pods{static="true"}')).toBe(1);
    expect(sample(text, "kubelet_mirror_pods")).toBe(0);
    expect(sample(text, "kubelet_node_config_error")).toBe(0);
    expect(text).toContain("# TYPE kubelet_preemptions counter");
  });
});

describe("cgroup manager durations", () => {
  test("the first ensure of a pod is a create, later ones updates; removal is a destroy", async () => {
    const registry = createRegistry();
    const calls: string[] = [];
    const cg = instrumentCgroups(
      {
        ensurePod: async (p: Pod) => (calls.push(`ensure ${p.metadata.name}`), "/kubepods/pod"),
        removePod: async (uid: string) => void calls.push(`remove ${uid}`),
      },
      registry,
    );
    expect(await cg.ensurePod(pod("a"))).toBe("/kubepods/pod");
    await cg.ensurePod(pod("a"));
    await cg.removePod("uid-a");
    await cg.ensurePod(pod("a"));
    expect(calls).toEqual(["ensure a", "ensure a", "remove uid-a", "ensure a"]);
    const text = registry.render();
    expect(sample(text, 'kubelet_cgroup_manager_duration_seconds_count{operation_type="create"}')).toBe(2);
    expect(sample(text, 'kubelet_cgroup_manager_duration_seconds_count{operation_type="update"}')).toBe(1);
    expect(sample(text, 'kubelet_cgroup_manager_duration_seconds_count{operation_type="destroy"}')).toBe(1);
  });
});

describe("node pressure conditions", () => {
  test("bunlet_node_pressure_condition follows the eviction manager's conditions at scrape time", async () => {
    const { nodeConditionMetrics } = await import("../../src/eviction/metrics.ts");
    const registry = createRegistry();
    let now: string[] = [];
    nodeConditionMetrics(registry, () => now);
    expect(sample(registry.render(), 'bunlet_node_pressure_condition{condition="MemoryPressure"}')).toBe(0);
    now = ["MemoryPressure"];
    const text = registry.render();
    expect(sample(text, 'bunlet_node_pressure_condition{condition="MemoryPressure"}')).toBe(1);
    expect(sample(text, 'bunlet_node_pressure_condition{condition="DiskPressure"}')).toBe(0);
  });
});
