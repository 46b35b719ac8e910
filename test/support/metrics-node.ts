// A node of N pods as the metrics see it, without containers: the kubelet's metrics are fed through
// the same hooks the agent wires (pod workers, PLEG, prober, CRI and cgroup decorators, volume
// operations, node gauges, the API client's observer), and a cgroup v1 tree + /proc + CRI listing
// on disk feeds /metrics/cadvisor. For the cardinality test and scripts/bench/metrics.ts.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createAgentRegistry } from "../../src/agent-run.ts";
import type { CriClient } from "../../src/cri/client.ts";
import { createKubeletMetrics, nodeStartupMetrics, restClientMetrics, serverCertificateMetrics, clientCertificateMetrics } from "../../src/metrics/index.ts";
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from "../../src/pod/kuberuntime/labels.ts";
import type { PodCgroups, PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import type { Pod } from "../../src/pod/types.ts";
import type { Registry } from "../../src/server/metrics.ts";
import { createCadvisorSource, type CadvisorSnapshot } from "../../src/stats/cadvisor.ts";

export function fakePods(n: number): Pod[] {
  return Array.from({ length: n }, (_, i) => ({
    metadata: { name: `p${i}`, namespace: `ns${i % 7}`, uid: `uid-${i}`, creationTimestamp: new Date(Date.now() - 60_000).toISOString(), annotations: {} },
    spec: {
      containers: [
        { name: "app", image: "registry.local/app:1" },
        { name: "side", image: "registry.local/side:1" },
      ],
      volumes: [
        { name: "cache", emptyDir: {} },
        { name: "etc", hostPath: { path: "/etc" } },
      ],
    },
    status: { phase: "Running", startTime: new Date().toISOString() },
  })) as unknown as Pod[];
}

/** The agent's /metrics and /metrics/probes registries after N pods were created, started, probed and relisted. */
export async function populateKubeletMetrics(pods: readonly Pod[]): Promise<{ metrics: Registry; probes: Registry }> {
  const metrics = createAgentRegistry();
  const km = createKubeletMetrics(metrics);
  const ok = async () => ({}) as never;
  const cri = km.instrumentCri({
    endpoint: "unix:///fake.sock",
    close() {},
    runPodSandbox: async () => "sb",
    createContainer: async () => "c",
    startContainer: ok,
    listContainers: async () => [],
    listPodSandbox: async () => [],
    containerStatus: ok,
    stopContainer: ok,
  } as unknown as CriClient);
  const cgroups = km.instrumentCgroups<PodCgroups>({ ensurePod: async () => "/kubepods", removePod: async () => {} });
  const l = km.lifecycle;
  for (const pod of pods) {
    l.workerStarted?.(0.002);
    await cgroups.ensurePod(pod);
    for (const v of ["kubernetes.io/empty-dir", "kubernetes.io/host-path"])
      km.storageOperation({ operationName: "volume_mount", volumePlugin: v }, () => undefined);
    await cri.runPodSandbox(
      { metadata: { name: pod.metadata.name, uid: pod.metadata.uid, namespace: pod.metadata.namespace ?? "default", attempt: 0 } } as never,
      "",
    );
    for (const c of pod.spec.containers) {
      await cri.createContainer("sb", { metadata: { name: c.name, attempt: 0 }, labels: {} } as never, {} as never);
      await cri.startContainer("c");
    }
    l.podSynced?.("create", 0.05);
    l.podRunning?.(pod, Date.now());
    for (const c of pod.spec.containers)
      for (const probeType of ["Readiness", "Liveness"] as const) l.probed?.({ pod, container: c.name, probeType, result: "successful", seconds: 0.003 });
  }
  const runtimePods = pods.map((p) => ({
    uid: p.metadata.uid,
    name: p.metadata.name,
    namespace: p.metadata.namespace ?? "default",
    sandboxIds: ["sb"],
    readySandboxes: 1,
    containers: p.spec.containers.map((c) => ({ id: c.name, name: c.name, state: "running" as const })),
  }));
  for (let i = 0; i < 5; i++) l.relisted?.({ startMs: Date.now() - 5, endMs: Date.now(), pods: runtimePods });
  for (let i = 0; i < 10; i++) l.podSynced?.("sync", 0.01);
  km.observeNode("bench-node", { listPodsForApi: () => [...pods], activePods: () => [...pods] } as unknown as PodLifecycle);
  // API-server mode's series, as the node-api wiring registers them.
  const observer = restClientMetrics(metrics);
  for (const method of ["GET", "PATCH", "PUT", "POST"])
    for (let i = 0; i < 20; i++) observer.observe({ method, host: "10.0.0.1:6443", code: "200", durationSeconds: 0.004 });
  nodeStartupMetrics(metrics, { nowMs: Date.now, kubeletStartMs: Date.now() - 5000 });
  clientCertificateMetrics(metrics, { notAfterMs: () => Date.now() + 86_400_000, nowMs: Date.now });
  serverCertificateMetrics(metrics);
  return { metrics, probes: km.probes };
}

/** A cgroup v1 tree, /proc and CRI listing for N pods of two containers each, under `root`. */
export function fakeCadvisorNode(root: string, pods: readonly Pod[]): () => Promise<CadvisorSnapshot> {
  const put = (p: string, c: string) => {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), c);
  };
  let stat = "total_cache 1000\ntotal_rss 2000\ntotal_inactive_file 500\n";
  try {
    stat = readFileSync("/sys/fs/cgroup/memory/memory.stat", "utf8");
  } catch {}
  const cgroup = (rel: string, pid?: number) => {
    put(`cg/memory/${rel}/memory.usage_in_bytes`, "10000000\n");
    put(`cg/memory/${rel}/memory.stat`, stat);
    put(`cg/memory/${rel}/memory.limit_in_bytes`, "9223372036854771712\n");
    put(`cg/memory/${rel}/cgroup.procs`, pid === undefined ? "" : `${pid}\n`);
    put(`cg/cpuacct/${rel}/cpuacct.usage`, "123456789\n");
  };
  cgroup("");
  put("proc/self/mountinfo", readFileSync("/proc/self/mountinfo", "utf8"));
  const netDev =
    "Inter-| Receive | Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo colls carrier compressed\n  eth0: 5000 40 0 0 0 0 0 0 3000 30 0 0 0 0 0 0\n";
  const containers: unknown[] = [];
  const stats: unknown[] = [];
  pods.forEach((pod, i) => {
    const rel = `kubepods/burstable/pod${pod.metadata.uid}`;
    cgroup(rel);
    for (const c of pod.spec.containers) {
      const id = `${pod.metadata.uid}-${c.name}`;
      cgroup(`${rel}/${id}`, 100_000 + i);
      containers.push({
        id,
        podSandboxId: "sb",
        metadata: { name: c.name, attempt: 0 },
        image: { image: c.image },
        imageRef: "",
        state: "CONTAINER_RUNNING",
        createdAt: Date.now() * 1e6,
        labels: { [POD_UID_LABEL]: pod.metadata.uid, [CONTAINER_NAME_LABEL]: c.name },
        annotations: {},
        imageId: "",
      });
      stats.push({
        attributes: { id, metadata: null, labels: {}, annotations: {} },
        cpu: null,
        memory: null,
        writableLayer: { timestamp: 0, fsId: { mountpoint: root }, usedBytes: { value: 4096 }, inodesUsed: { value: 1 } },
      });
    }
    put(`proc/${100_000 + i}/net/dev`, netDev);
  });
  return createCadvisorSource({
    activePods: () => pods,
    podCgroupPath: (p) => `kubepods/burstable/pod${p.metadata.uid}`,
    cri: { listContainers: async () => containers, listContainerStats: async () => stats } as unknown as Pick<
      CriClient,
      "listContainers" | "listContainerStats"
    >,
    cgroupMountRoot: join(root, "cg"),
    procRoot: join(root, "proc"),
    machine: async () => ({ memoryBytes: 16e9, cpuCores: 4, bootID: "b", machineID: "m", systemUUID: "u" }),
  });
}
