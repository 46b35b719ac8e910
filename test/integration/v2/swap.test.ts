// NodeSwap on cgroup v2 with a swap device: dist/bunlet with memorySwap.swapBehavior LimitedSwap on
// containerd, in API-server mode against the API-server double (API pods: static pods are critical and
// never get swap, as upstream), kubepods fenced at node allocatable (400 MiB, evictionHard
// memory.available 150Mi). Proven, in one run:
//   - a Burstable pod's container gets memory.swap.max = floor(request / MemTotal × SwapTotal), a
//     Guaranteed pod's 0; the Node reports status.nodeInfo.swap.capacity = SwapTotal;
//   - the Burstable "hog" pushed past its memory limit swaps, and /stats/summary (container, pod, node)
//     and /metrics/resource show it;
//   - with the hog's pages in swap, a second Burstable pod's ramp takes kubepods past
//     allocatableMemory.available: the hog (furthest above its request) is the pod evicted, the others stay.
// Swap: the guest's /dev/ubda (in-guest.test.ts gives its busybox-init boot a disk) made swap and turned
// on for this file only. bunlet runs in a cgroup of its own: the swap controller is detected as upstream,
// by memory.swap.max in the kubelet's cgroup, which the root cgroup has not.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import type { Pod } from "../../../src/pod/types.ts";
import type { Summary } from "../../../src/stats/summary.ts";
import { startApiServer, type ApiServerDouble } from "../../support/apiserver/index.ts";
import { BINARY, killAll, spawnBunlet } from "../../support/binary.ts";
import { removeSandboxes } from "../../support/containerd.ts";
import { cgroupFile, guestGate, memTotalBytes, MiB, MOUNT, useGuestNode } from "../../support/guest-node.ts";
import { until } from "../../support/wait.ts";

const SWAP_DEVICE = "/dev/ubda";
const ALLOCATABLE = 400 * MiB;
const swapTotalBytes = () => Number(/^SwapTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? 0) * 1024;
const sh = (cmd: string) => {
  const r = Bun.spawnSync(["sh", "-c", cmd], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd}: exit ${r.exitCode}: ${r.stderr.toString()}`);
  return r.stdout.toString();
};

const onV2 = guestGate("cgroup2", "cgroup v2 swap tests");
const withSwap = onV2 && (swapTotalBytes() > 0 || existsSync(SWAP_DEVICE));
if (onV2 && !withSwap) console.warn(`skipping cgroup v2 swap tests: no swap and no ${SWAP_DEVICE} to make it on`);

interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

describe.skipIf(!withSwap)("NodeSwap LimitedSwap on cgroup v2 (containerd, runc, real kernel, a swap device)", () => {
  const n = useGuestNode({ name: "v2-swap", node: "v2s" });
  const agentCgroup = join(MOUNT, `bunlet-v2-swap-agent-${process.pid}`);
  let api: ApiServerDouble;
  let swappedOn = false;

  beforeAll(async () => {
    if (swapTotalBytes() === 0) {
      sh(`mkswap ${SWAP_DEVICE} >/dev/null && swapon ${SWAP_DEVICE}`);
      swappedOn = true;
    }
    mkdirSync(agentCgroup);
    api = await startApiServer({ storage: "memory" });
  }, 60_000);
  afterAll(async () => {
    try {
      // Whichever afterAll runs first: bunlet stopped (its cgroup emptied), the pods gone (their swap freed).
      await killAll();
      await removeSandboxes(n.ctd.cri, n.node).catch(() => {});
      await api?.close();
      if (existsSync(agentCgroup)) await until("bunlet's cgroup empty", () => (rmdirSync(agentCgroup), true), 10_000);
    } finally {
      if (swappedOn) sh(`swapoff ${SWAP_DEVICE}`);
    }
  }, 60_000);

  const name = (pod: string) => `${pod}-${n.node}`;
  const https = (path: string) =>
    fetch(`https://127.0.0.1:${n.port}${path}`, { headers: { authorization: `Bearer ${api.adminToken}` }, tls: { rejectUnauthorized: false } });
  const apiPod = async (pod: string) => (await api.store.get(`pods/default/${name(pod)}`)) as Pod | undefined;
  const putPod = (pod: string, qosClass: string, container: ContainerSpec) =>
    api.store.put(`pods/default/${name(pod)}`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: name(pod), namespace: "default", uid: randomUUID(), creationTimestamp: new Date().toISOString() },
      spec: { nodeName: n.node, hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [{ imagePullPolicy: "IfNotPresent", ...container }] },
      status: { phase: "Pending", qosClass },
    });
  const runningContainer = async (pod: string) => {
    const p = await until(`${pod} running`, async () => ((await apiPod(pod))?.status?.phase === "Running" ? apiPod(pod) : undefined), 120_000, {
      intervalMs: 250,
    });
    const id = p!.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, "");
    return { uid: p!.metadata.uid!, id };
  };

  /** bunlet in its own cgroup, API-server mode, LimitedSwap, kubepods fenced; resolves once /healthz answers. */
  async function startNode() {
    const kubeconfig = join(n.base, "kubelet.kubeconfig");
    await api.writeKubeconfig(kubeconfig, { ...(await api.issueClientCert(`system:node:${n.node}`, ["system:nodes"])), user: "kubelet" });
    const config = n.configFlags([
      "failSwapOn: false",
      "memorySwap: { swapBehavior: LimitedSwap }",
      "enforceNodeAllocatable: [pods]",
      `systemReserved: { memory: "${memTotalBytes() - ALLOCATABLE}" }`,
      "evictionHard: { memory.available: 150Mi }",
      "evictionPressureTransitionPeriod: 2s",
    ]);
    const enter = `echo $$ >${agentCgroup}/cgroup.procs && exec "$0" "$@"`;
    const p = spawnBunlet([...config, `--kubeconfig=${kubeconfig}`], { command: ["sh", "-c", enter, BINARY] });
    await until("bunlet's /healthz", async () => (await https("/healthz").catch(() => undefined))?.status === 200, 90_000, { intervalMs: 250 });
    return p;
  }

  test("proportional memory.swap.max, swap in the stats, and the swapping hog evicted at the threshold", async () => {
    const p = await startNode();
    const { busybox, memhog } = n.ctd.images;
    const memTotal = memTotalBytes();
    const swapTotal = swapTotalBytes();
    const hogSwapMax = Math.floor(((32 * MiB) / memTotal) * swapTotal);
    // The hog holds 15 MiB more than its limit: that much must go to swap (its share is larger).
    expect(hogSwapMax).toBeGreaterThan(20 * MiB);
    await putPod("guar", "Guaranteed", {
      name: "main",
      image: busybox,
      command: ["sh", "-c", "exec sleep 3600"],
      resources: { requests: { cpu: "100m", memory: "32Mi" }, limits: { cpu: "100m", memory: "32Mi" } },
    });
    await putPod("hog", "Burstable", {
      name: "main",
      image: memhog,
      args: ["215", "50"],
      resources: { requests: { memory: "32Mi" }, limits: { memory: "200Mi" } },
    });

    // memory.swap.max: the hog's share of the node's swap; the Guaranteed container's 0.
    const hog = await runningContainer("hog");
    const guar = await runningContainer("guar");
    // bunlet asks for the bytes; the kernel keeps whole pages.
    const pages = (bytes: number) => Math.floor(bytes / 4096) * 4096;
    expect(cgroupFile(n.cgroupRoot, "kubepods", "burstable", `pod${hog.uid}`, hog.id, "memory.swap.max")).toBe(String(pages(hogSwapMax)));
    expect(cgroupFile(n.cgroupRoot, "kubepods", `pod${guar.uid}`, guar.id, "memory.swap.max")).toBe("0");
    const node = await until("nodeInfo.swap", async () => (await api.store.get(`nodes//${n.node}`))?.status?.nodeInfo?.swap, 60_000);
    expect(node).toEqual({ capacity: swapTotal });

    // The hog past its limit swaps: the summary and the resource metrics show it.
    const swapped = await until(
      "the hog's swap in /stats/summary",
      async () => {
        const s = (await (await https("/stats/summary")).json()) as Summary;
        const pod = s.pods.find((x) => x.podRef.name === name("hog"));
        return (pod?.containers?.[0]?.swap?.swapUsageBytes ?? 0) > 10 * MiB ? { s, pod: pod! } : undefined;
      },
      60_000,
      { intervalMs: 500 },
    );
    const c = swapped.pod.containers![0]!.swap!;
    expect(c.swapUsageBytes! + c.swapAvailableBytes!).toBe(pages(hogSwapMax));
    // The pod's and the node's, read a moment apart from the container's (pages move in and out).
    expect(swapped.pod.swap?.swapUsageBytes).toBeGreaterThan(10 * MiB);
    expect(swapped.s.node.swap?.swapUsageBytes).toBeGreaterThan(10 * MiB);
    expect(swapped.s.pods.find((x) => x.podRef.name === name("guar"))?.containers?.[0]?.swap).toMatchObject({ swapUsageBytes: 0, swapAvailableBytes: 0 });
    const metrics = await (await https("/metrics/resource")).text();
    const hogSwapSample = new RegExp(`^container_swap_usage_bytes\\{container="main",namespace="default",pod="${name("hog")}"\\} (\\d+)`, "m").exec(metrics);
    expect(Number(hogSwapSample?.[1])).toBeGreaterThan(0);
    expect(metrics).toMatch(/^node_swap_usage_bytes\{\} [1-9]\d* \d+$/m);

    // A second Burstable pod ramps kubepods past allocatableMemory.available: the swapping hog goes.
    await putPod("filler", "Burstable", { name: "main", image: memhog, args: ["100", "20"], resources: { requests: { memory: "64Mi" } } });
    const evicted = await until("the hog evicted", async () => ((await apiPod("hog"))?.status?.phase === "Failed" ? apiPod("hog") : undefined), 120_000, {
      intervalMs: 250,
    });
    expect(evicted?.status?.reason).toBe("Evicted");
    expect(evicted?.status?.message).toContain("memory");
    // The log line is read from the agent's stderr pipe, which can trail the API status on one CPU.
    await until("the eviction logged", async () => /evicting pod=\S*hog/.test(p.stderr()) || undefined, 30_000, { intervalMs: 250 });
    for (const other of ["guar", "filler"]) expect((await apiPod(other))?.status?.phase).toBe("Running");
  }, 360_000);
});
