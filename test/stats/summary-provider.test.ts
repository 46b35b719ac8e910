import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ContainerStats as CriContainerStats, Container as CriContainer, PodSandbox } from "../../src/cri/client.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";
import { createDirUsageCache } from "../../src/stats/dir-usage.ts";
import { parseSummaryText } from "../../src/stats/summary-schema.ts";
import { groupCriListing } from "../../src/stats/cri-stats.ts";
import { createSummaryProvider, type SummaryCri, type SummaryProviderOptions } from "../../src/stats/summary-provider.ts";
import type { FsStats, NodeStats } from "../../src/stats/summary.ts";

const MI = 1024 * 1024;
let root: string;
let mount: string;
let logs: string;
let kubeletRoot: string;
let now: number;
const clock = { now: () => now };

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), `bunlet-summary-${process.pid}-`));
  mount = join(root, "cgroup");
  logs = join(root, "logs");
  kubeletRoot = join(root, "kubelet");
  now = Date.parse("2026-03-01T10:00:00Z");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function put(base: string, files: Record<string, string>) {
  for (const [p, content] of Object.entries(files)) {
    mkdirSync(dirname(join(base, p)), { recursive: true });
    writeFileSync(join(base, p), content);
  }
}

const memStat = (o: { inactive: number; rss: number; pgfault?: number; pgmajfault?: number }) =>
  `cache 0\nrss ${o.rss}\ntotal_rss ${o.rss}\ntotal_inactive_file ${o.inactive}\ntotal_pgfault ${o.pgfault ?? 0}\ntotal_pgmajfault ${o.pgmajfault ?? 0}\n`;

/** A v1 cgroup with memory, cpuacct and pids files. */
function fakeCgroup(rel: string, o: { usage: number; inactive: number; rss: number; cpuNs: number; pids?: number; limit?: number; pgfault?: number }) {
  put(mount, {
    [`memory/${rel}/memory.usage_in_bytes`]: `${o.usage}\n`,
    [`memory/${rel}/memory.stat`]: memStat(o),
    [`memory/${rel}/memory.limit_in_bytes`]: `${o.limit ?? 9223372036854771712}\n`,
    [`memory/${rel}/cgroup.procs`]: "",
    [`cpuacct/${rel}/cpuacct.usage`]: `${o.cpuNs}\n`,
    ...(o.pids === undefined ? {} : { [`pids/${rel}/pids.current`]: `${o.pids}\n` }),
  });
}

const nodefs: FsStats = {
  time: "x",
  capacityBytes: 100 * MI * 1024,
  availableBytes: 40 * MI * 1024,
  inodes: 1000,
  inodesFree: 600,
  usedBytes: 60 * MI * 1024,
  inodesUsed: 400,
};
const imagefs: FsStats = { time: "x", capacityBytes: 7, availableBytes: 3, inodes: 9, inodesFree: 2 };

function pod(uid: string, extra: Partial<PodLike["spec"]> = {}, name = `p-${uid}`): PodLike {
  return { metadata: { name, namespace: "ns", uid }, spec: { containers: [{ name: "app" }], ...extra } };
}

function provider(pods: PodLike[], o: Partial<SummaryProviderOptions> = {}) {
  const errors: string[] = [];
  const nodeStats = (): NodeStats => ({ nodeName: "from-kernel", fs: nodefs, runtime: { imageFs: imagefs }, memory: { time: "t", workingSetBytes: 1 } });
  const p = createSummaryProvider({
    nodeName: "node-a",
    nodeStats,
    activePods: () => pods,
    podCgroupPath: (x) => `kubepods/besteffort/pod${x.metadata.uid}`,
    podLogsDir: logs,
    rootDir: kubeletRoot,
    cgroupMountRoot: mount,
    procRoot: join(root, "proc"),
    clock,
    onError: (m) => errors.push(m),
    ...o,
  });
  return { p, errors };
}

describe("pod memory, cpu and processes from the pod cgroup", () => {
  test("workingSet = usage − total_inactive_file; rss, page faults, process_count", async () => {
    fakeCgroup("kubepods/besteffort/podu1", { usage: 100 * MI, inactive: 10 * MI, rss: 80 * MI, cpuNs: 5e9, pids: 3, pgfault: 1234 });
    const { p, errors } = provider([pod("u1")]);
    const s = await p.summary();
    const ps = s.pods[0]!;
    expect(ps.podRef).toEqual({ name: "p-u1", namespace: "ns", uid: "u1" });
    expect(ps.memory).toMatchObject({
      time: "2026-03-01T10:00:00.000Z",
      usageBytes: 100 * MI,
      workingSetBytes: 90 * MI,
      rssBytes: 80 * MI,
      pageFaults: 1234,
      majorPageFaults: 0,
    });
    expect(ps.memory?.availableBytes).toBeUndefined();
    expect(ps.cpu).toEqual({ time: "2026-03-01T10:00:00.000Z", usageCoreNanoSeconds: 5e9 });
    expect(ps.process_stats).toEqual({ process_count: 3 });
    expect(errors).toEqual([]);
  });

  test("usageNanoCores from the delta between two summaries", async () => {
    const rel = "kubepods/besteffort/podu1";
    fakeCgroup(rel, { usage: MI, inactive: 0, rss: 0, cpuNs: 5e9 });
    const { p } = provider([pod("u1")]);
    await p.summary();
    now += 4000;
    put(mount, { [`cpuacct/${rel}/cpuacct.usage`]: `${5e9 + 6e9}\n` });
    const s = await p.summary();
    // 6 s of CPU in 4 s of wall time = 1.5 cores.
    expect(s.pods[0]!.cpu).toEqual({ time: "2026-03-01T10:00:04.000Z", usageCoreNanoSeconds: 11e9, usageNanoCores: 1.5e9 });
  });

  test("the kubelet system container: bunlet's own cgroup (from /proc/self/cgroup), its memory and cpu, the process start time", async () => {
    fakeCgroup("system.slice/bunlet.service", { usage: 80 * MI, inactive: 30 * MI, rss: 40 * MI, cpuNs: 7e9 });
    put(root, { "proc/self/cgroup": "4:memory:/system.slice/bunlet.service\n3:cpu,cpuacct:/system.slice/bunlet.service\n" });
    const { p, errors } = provider([], { kubeletStartTime: "2026-03-01T09:00:00.000Z" });
    const kubelet = (await p.summary()).node.systemContainers?.find((c) => c.name === "kubelet");
    expect(kubelet).toMatchObject({
      name: "kubelet",
      startTime: "2026-03-01T09:00:00.000Z",
      memory: { usageBytes: 80 * MI, workingSetBytes: 50 * MI, rssBytes: 40 * MI },
      cpu: { usageCoreNanoSeconds: 7e9 },
      swap: { swapUsageBytes: 0, swapAvailableBytes: 0 }, // no memsw files: no swap accounting
    });
    expect(errors).toEqual([]);
    // In the root cgroup, or turned off: no kubelet container.
    put(root, { "proc/self/cgroup": "4:memory:/\n" });
    expect((await provider([]).p.summary()).node.systemContainers?.find((c) => c.name === "kubelet")).toBeUndefined();
    put(root, { "proc/self/cgroup": "4:memory:/system.slice/bunlet.service\n" });
    expect((await provider([], { kubeletContainer: false }).p.summary()).node.systemContainers?.find((c) => c.name === "kubelet")).toBeUndefined();
  });

  test("network from the pod's namespace (a process of its cgroup tree); none for a hostNetwork pod", async () => {
    const netDev = `Inter-|   Receive |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0:   52000     400    2    0    0     0          0         0    31000     300    1    0    0     0       0          0
`;
    for (const uid of ["u1", "u2"]) {
      fakeCgroup(`kubepods/besteffort/pod${uid}`, { usage: MI, inactive: 0, rss: 0, cpuNs: 1 });
      put(mount, { [`memory/kubepods/besteffort/pod${uid}/c1/cgroup.procs`]: "4242\n" });
    }
    put(root, { "proc/4242/net/dev": netDev });
    const { p, errors } = provider([pod("u1"), pod("u2", { hostNetwork: true } as Partial<PodLike["spec"]>)]);
    const s = await p.summary();
    const eth0 = { name: "eth0", rxBytes: 52000, rxErrors: 2, txBytes: 31000, txErrors: 1 };
    expect(s.pods[0]!.network).toEqual({ time: "2026-03-01T10:00:00.000Z", ...eth0, interfaces: [eth0] });
    expect(s.pods[1]!.network).toBeUndefined();
    expect(errors).toEqual([]);
  });

  test("no pids cgroup: processes counted in cgroup.procs of the pod tree", async () => {
    const rel = "kubepods/besteffort/podu1";
    fakeCgroup(rel, { usage: MI, inactive: 0, rss: 0, cpuNs: 1 });
    put(mount, { [`memory/${rel}/cgroup.procs`]: "10\n", [`memory/${rel}/abc/cgroup.procs`]: "11\n12\n" });
    const { p } = provider([pod("u1")]);
    expect((await p.summary()).pods[0]!.process_stats).toEqual({ process_count: 3 });
  });

  test("a pod whose cgroup does not exist yet: no memory/cpu, no error", async () => {
    const { p, errors } = provider([pod("u9")]);
    const ps = (await p.summary()).pods[0]!;
    expect(ps.memory).toBeUndefined();
    expect(ps.cpu).toBeUndefined();
    expect(ps.process_stats).toBeUndefined();
    expect(ps["ephemeral-storage"]?.usedBytes).toBe(0);
    expect(errors).toEqual([]);
  });

  test("one bad pod: its field omitted and logged once; other pods unaffected", async () => {
    fakeCgroup("kubepods/besteffort/podgood", { usage: 2 * MI, inactive: MI, rss: 0, cpuNs: 1 });
    fakeCgroup("kubepods/besteffort/podbad", { usage: 2 * MI, inactive: MI, rss: 0, cpuNs: 1 });
    put(mount, { "memory/kubepods/besteffort/podbad/memory.stat": "garbage line here\n" });
    const { p, errors } = provider([pod("good"), pod("bad")]);
    for (let i = 0; i < 3; i++) {
      const s = await p.summary();
      expect(s.pods.map((x) => x.podRef.uid)).toEqual(["good", "bad"]);
      expect(s.pods[0]!.memory?.workingSetBytes).toBe(MI);
      expect(s.pods[1]!.memory).toBeUndefined();
      expect(s.pods[1]!.cpu?.usageCoreNanoSeconds).toBe(1);
    }
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("uid=bad");
    expect(errors[0]).toContain("field=memory");
    expect(errors[0]).toContain("memory.stat");
  });

  test("podCgroupPath throwing is contained too", async () => {
    const { p, errors } = provider([pod("u1")], {
      podCgroupPath: () => {
        throw new Error("boom");
      },
    });
    const s = await p.summary();
    expect(s.pods).toHaveLength(1);
    expect(errors[0]).toContain("boom");
  });
});

describe("logs, volumes and ephemeral-storage (no CRI)", () => {
  test("container logs by file size, emptyDir walks, Memory emptyDir not on disk", async () => {
    const u = "u1";
    put(logs, { [`ns_p-u1_${u}/app/0.log`]: "l".repeat(20_000), [`ns_p-u1_${u}/app/1.log`]: "m".repeat(100), [`ns_p-u1_${u}/pod.log`]: "p".repeat(5000) });
    const vol = (n: string) => `pods/${u}/volumes/kubernetes.io~empty-dir/${n}`;
    put(kubeletRoot, { [`${vol("cache")}/big`]: "c".repeat(50_000), [`${vol("shm")}/s`]: "s".repeat(30_000) });
    const { p } = provider([
      pod(u, {
        volumes: [
          { name: "cache", emptyDir: {} },
          { name: "shm", emptyDir: { medium: "Memory" } },
          { name: "cfg", configMap: {} },
        ],
      }),
    ]);
    const ps = (await p.summary()).pods[0]!;
    const app = ps.containers?.find((c) => c.name === "app");
    expect(app?.logs?.inodesUsed).toBe(3); // dir + 2 files
    expect(app?.logs?.usedBytes).toBeGreaterThanOrEqual(20_100);
    expect(app?.logs).toMatchObject({
      capacityBytes: nodefs.capacityBytes,
      availableBytes: nodefs.availableBytes,
      inodes: nodefs.inodes,
      inodesFree: nodefs.inodesFree,
    });
    expect(ps.volume?.map((v) => v.name)).toEqual(["cache", "shm"]);
    const cache = ps.volume![0]!;
    const shm = ps.volume![1]!;
    expect(cache.usedBytes).toBeGreaterThanOrEqual(50_000);
    expect(cache.capacityBytes).toBe(nodefs.capacityBytes!);
    expect(shm.usedBytes).toBeGreaterThanOrEqual(30_000);
    expect(shm.capacityBytes).toBeUndefined();
    const eph = ps["ephemeral-storage"]!;
    // logs (app dir) + cache volume + pod-level log file; the Memory emptyDir is not disk.
    const podLevelLogs = eph.usedBytes! - app!.logs!.usedBytes! - cache.usedBytes!;
    expect(podLevelLogs).toBeGreaterThanOrEqual(5000);
    expect(podLevelLogs).toBeLessThan(5000 + 8192);
    expect(eph.inodesUsed).toBe(app!.logs!.inodesUsed! + cache.inodesUsed! + 1);
    expect(eph.capacityBytes).toBe(nodefs.capacityBytes!);
  });

  test("volume usage is re-walked at most every volumeTtlMs", async () => {
    const u = "u1";
    const dir = `pods/${u}/volumes/kubernetes.io~empty-dir/cache`;
    put(kubeletRoot, { [`${dir}/a`]: "a" });
    const { p } = provider([pod(u, { volumes: [{ name: "cache", emptyDir: {} }] })], { volumeTtlMs: 10_000 });
    const inodes = async () => (await p.summary()).pods[0]!.volume?.[0]?.inodesUsed;
    expect(await inodes()).toBe(2);
    put(kubeletRoot, { [`${dir}/b`]: "b" });
    now += 5000;
    expect(await inodes()).toBe(2); // cached
    now += 5000;
    await inodes(); // stale value served, refresh started
    let got = 0;
    for (let i = 0; i < 100 && got !== 3; i++) {
      await Bun.sleep(1);
      got = (await inodes()) ?? 0;
    }
    expect(got).toBe(3);
  });

  test("freshVolumes walks the volume now, even when the cached walk is young (eviction's disk ranking)", async () => {
    const u = "u1";
    const dir = `pods/${u}/volumes/kubernetes.io~empty-dir/cache`;
    put(kubeletRoot, { [`${dir}/a`]: "a" });
    const { p } = provider([pod(u, { volumes: [{ name: "cache", emptyDir: {} }] })], { volumeTtlMs: 10_000 });
    const inodes = async (freshVolumes?: boolean) => (await p.summary(freshVolumes ? { freshVolumes } : undefined)).pods[0]!.volume?.[0]?.inodesUsed;
    expect(await inodes()).toBe(2);
    put(kubeletRoot, { [`${dir}/b`]: "b" });
    expect(await inodes()).toBe(2); // cached
    expect(await inodes(true)).toBe(3);
  });
});

describe("with CRI", () => {
  const sandbox = (id: string, uid: string, createdAt: number): PodSandbox => ({
    id,
    metadata: { name: `p-${uid}`, namespace: "ns", uid, attempt: 0 },
    state: "SANDBOX_READY",
    createdAt,
    labels: {},
    annotations: {},
    runtimeHandler: "",
  });
  const container = (id: string, sandboxId: string, name: string, state: CriContainer["state"] = "CONTAINER_RUNNING"): CriContainer => ({
    id,
    podSandboxId: sandboxId,
    metadata: { name, attempt: 0 },
    image: null,
    imageRef: "",
    state,
    createdAt: Date.parse("2026-03-01T09:00:00Z") * 1e6,
    labels: {},
    annotations: {},
    imageId: "",
  });
  const cstats = (id: string, o: { ws?: number; wl?: number; wlInodes?: number; cpu?: number }): CriContainerStats => ({
    attributes: { id, metadata: null, labels: {}, annotations: {} },
    cpu: o.cpu === undefined ? null : { timestamp: 0, usageCoreNanoSeconds: { value: o.cpu }, usageNanoCores: null },
    memory:
      o.ws === undefined
        ? null
        : {
            timestamp: 0,
            workingSetBytes: { value: o.ws },
            availableBytes: null,
            usageBytes: { value: o.ws },
            rssBytes: null,
            pageFaults: null,
            majorPageFaults: null,
          },
    writableLayer: o.wl === undefined ? null : { timestamp: 0, fsId: null, usedBytes: { value: o.wl }, inodesUsed: { value: o.wlInodes ?? 0 } },
  });

  function fakeCri(data: { sandboxes: PodSandbox[]; containers: CriContainer[]; stats: CriContainerStats[] }, fail?: () => Error | undefined) {
    const calls = { n: 0 };
    const guard = <T>(v: T) => {
      calls.n++;
      const e = fail?.();
      return e ? Promise.reject(e) : Promise.resolve(v);
    };
    const cri: SummaryCri = {
      listPodSandbox: () => guard(data.sandboxes),
      listContainers: (f) => guard(data.containers.filter((c) => !f?.state || c.state === f.state.state)),
      listContainerStats: () => guard(data.stats),
    };
    return { cri, calls };
  }

  test("groupCriListing: newest sandbox per pod, running containers only, mapped through the sandbox", () => {
    const g = groupCriListing(
      [sandbox("s-old", "u1", 1), sandbox("s-new", "u1", 2)],
      [container("c1", "s-new", "app"), container("c0", "s-old", "app", "CONTAINER_EXITED"), container("c2", "unknown", "x")],
      [cstats("c1", { ws: 1 })],
    );
    expect(g.sandboxByUid.get("u1")?.id).toBe("s-new");
    expect(g.containersByUid.get("u1")?.map((c) => c.id)).toEqual(["c1"]);
    expect(g.statsById.has("c1")).toBe(true);
  });

  test("containers: cgroup memory when the container cgroup exists, else CRI; rootfs from the writable layer on the imagefs", async () => {
    const prel = "kubepods/besteffort/podu1";
    fakeCgroup(prel, { usage: 50 * MI, inactive: 5 * MI, rss: 40 * MI, cpuNs: 9e9, pids: 4 });
    fakeCgroup(`${prel}/cid-app`, { usage: 30 * MI, inactive: 2 * MI, rss: 25 * MI, cpuNs: 6e9 });
    put(logs, { "ns_p-u1_u1/app/0.log": "x".repeat(4096), "ns_p-u1_u1/side/0.log": "y" });
    const { cri } = fakeCri({
      sandboxes: [sandbox("s1", "u1", Date.parse("2026-03-01T08:00:00Z") * 1e6)],
      containers: [container("cid-app", "s1", "app"), container("cid-side", "s1", "side")],
      stats: [cstats("cid-app", { ws: 1, wl: 8192, wlInodes: 3 }), cstats("cid-side", { ws: 7 * MI, cpu: 123, wl: 4096, wlInodes: 1 })],
    });
    const { p, errors } = provider([pod("u1")], { cri });
    const ps = (await p.summary()).pods[0]!;
    expect(ps.startTime).toBe("2026-03-01T08:00:00.000Z");
    const app = ps.containers!.find((c) => c.name === "app")!;
    const side = ps.containers!.find((c) => c.name === "side")!;
    expect(app.startTime).toBe("2026-03-01T09:00:00.000Z");
    expect(app.memory?.workingSetBytes).toBe(28 * MI);
    expect(app.cpu?.usageCoreNanoSeconds).toBe(6e9);
    expect(side.memory?.workingSetBytes).toBe(7 * MI);
    expect(side.cpu?.usageCoreNanoSeconds).toBe(123);
    expect(app.rootfs).toMatchObject({ usedBytes: 8192, inodesUsed: 3, capacityBytes: imagefs.capacityBytes, availableBytes: imagefs.availableBytes });
    const eph = ps["ephemeral-storage"]!;
    expect(eph.usedBytes).toBe(8192 + 4096 + app.logs!.usedBytes! + side.logs!.usedBytes!);
    expect(eph.inodesUsed).toBe(3 + 1 + app.logs!.inodesUsed! + side.logs!.inodesUsed!);
    expect(ps.memory?.workingSetBytes).toBe(45 * MI);
    expect(ps.process_stats?.process_count).toBe(4);
    expect(errors).toEqual([]);
  });

  test("swap: the pod's and each container's from their cgroups (cadvisorInfoToSwapStats); none for a container read from the CRI", async () => {
    const prel = "kubepods/besteffort/podu1";
    fakeCgroup(prel, { usage: 50 * MI, inactive: 5 * MI, rss: 40 * MI, cpuNs: 9e9 });
    fakeCgroup(`${prel}/cid-app`, { usage: 30 * MI, inactive: 2 * MI, rss: 25 * MI, cpuNs: 6e9 });
    put(mount, {
      [`memory/${prel}/memory.stat`]: `${memStat({ inactive: 5 * MI, rss: 40 * MI })}total_swap 8192\n`,
      [`memory/${prel}/memory.memsw.limit_in_bytes`]: "9223372036854771712\n",
      [`memory/${prel}/cid-app/memory.stat`]: `${memStat({ inactive: 2 * MI, rss: 25 * MI })}total_swap 4096\n`,
      [`memory/${prel}/cid-app/memory.memsw.limit_in_bytes`]: `${64 * MI}\n`,
    });
    const { cri } = fakeCri({
      sandboxes: [sandbox("s1", "u1", 1)],
      containers: [container("cid-app", "s1", "app"), container("cid-side", "s1", "side")],
      stats: [cstats("cid-side", { ws: MI })],
    });
    const { p, errors } = provider([pod("u1")], { cri });
    const ps = (await p.summary()).pods[0]!;
    const time = "2026-03-01T10:00:00.000Z";
    expect(ps.swap).toEqual({ time, swapUsageBytes: 8192 });
    expect(ps.containers!.find((c) => c.name === "app")!.swap).toEqual({ time, swapUsageBytes: 4096, swapAvailableBytes: 64 * MI - 4096 });
    expect(ps.containers!.find((c) => c.name === "side")!.swap).toBeUndefined();
    expect(errors).toEqual([]);
  });

  test("a container cgroup that shows up after a summary is used from the next one (a miss is not remembered)", async () => {
    const prel = "kubepods/besteffort/podu1";
    fakeCgroup(prel, { usage: 50 * MI, inactive: 5 * MI, rss: 40 * MI, cpuNs: 9e9, pids: 4 });
    const { cri } = fakeCri({
      sandboxes: [sandbox("s1", "u1", 1)],
      containers: [container("cid-app", "s1", "app")],
      stats: [cstats("cid-app", { ws: 7 * MI })],
    });
    const { p } = provider([pod("u1")], { cri, criTtlMs: 0 });
    expect((await p.summary()).pods[0]!.containers![0]!.memory?.workingSetBytes).toBe(7 * MI);
    fakeCgroup(`${prel}/cid-app`, { usage: 30 * MI, inactive: 2 * MI, rss: 25 * MI, cpuNs: 6e9 });
    expect((await p.summary()).pods[0]!.containers![0]!.memory?.workingSetBytes).toBe(28 * MI);
    expect((await p.summary()).pods[0]!.containers![0]!.memory?.workingSetBytes).toBe(28 * MI);
  });

  test("containerMemory: the listed containers' memory read now, not the last summary's; a pod the listing does not know yet: undefined", async () => {
    const prel = "kubepods/besteffort/podu1";
    fakeCgroup(prel, { usage: 50 * MI, inactive: 5 * MI, rss: 40 * MI, cpuNs: 9e9 });
    fakeCgroup(`${prel}/cid-app`, { usage: 30 * MI, inactive: 2 * MI, rss: 25 * MI, cpuNs: 6e9 });
    const { cri } = fakeCri({
      sandboxes: [sandbox("s1", "u1", 1)],
      containers: [container("cid-app", "s1", "app"), container("cid-side", "s1", "side")],
      stats: [],
    });
    const { p, errors } = provider([pod("u1"), pod("u2")], { cri });
    expect(p.containerMemory(pod("u1"))).toBeUndefined(); // no listing yet
    expect((await p.summary()).pods[0]!.containers!.find((c) => c.name === "app")!.memory?.workingSetBytes).toBe(28 * MI);
    // The app ramps after the summary: the figure is the cgroup's now.
    fakeCgroup(`${prel}/cid-app`, { usage: 900 * MI, inactive: 2 * MI, rss: 890 * MI, cpuNs: 6e9 });
    const now = p.containerMemory(pod("u1"))!;
    expect(now.map((c) => c.name)).toEqual(["app", "side"]);
    expect(now[0]!.memory?.workingSetBytes).toBe(898 * MI);
    expect(now[1]!.memory).toBeUndefined(); // no cgroup of its own (and no figure made up)
    expect(p.containerMemory(pod("u2"))).toBeUndefined();
    expect(errors).toEqual([]);
  });

  // The listing cache was taken before the pod's container started (or its refresh is slow): the
  // status's containers are read from their cgroups all the same.
  test("containerMemory: containers the listing cache does not know yet are read from the pod status's IDs", async () => {
    const prel = "kubepods/besteffort/podu1";
    fakeCgroup(prel, { usage: 50 * MI, inactive: 5 * MI, rss: 40 * MI, cpuNs: 9e9 });
    fakeCgroup(`${prel}/cid-app`, { usage: 700 * MI, inactive: 2 * MI, rss: 690 * MI, cpuNs: 6e9 });
    const { cri } = fakeCri({ sandboxes: [sandbox("s1", "u1", 1)], containers: [container("cid-side", "s1", "side")], stats: [] });
    const status = new Map([["u1", [{ id: "cid-app", name: "app" }]]]);
    const { p, errors } = provider([pod("u1"), pod("u2")], { cri, runningContainers: (uid) => status.get(uid) ?? [] });
    expect(p.containerMemory(pod("u1"))?.map((c) => [c.name, c.memory?.workingSetBytes])).toEqual([["app", 698 * MI]]); // no listing yet
    await p.summary();
    expect(p.containerMemory(pod("u1"))?.map((c) => [c.name, c.memory?.workingSetBytes])).toEqual([
      ["app", 698 * MI],
      ["side", undefined],
    ]);
    expect(p.containerMemory(pod("u2"))).toBeUndefined();
    expect(errors).toEqual([]);
  });

  test("CRI failing: the summary still comes, without containers; later summaries do not wait on it", async () => {
    fakeCgroup("kubepods/besteffort/podu1", { usage: 2 * MI, inactive: 0, rss: 0, cpuNs: 1 });
    let broken = true;
    const { cri, calls } = fakeCri({ sandboxes: [sandbox("s1", "u1", 1)], containers: [container("c", "s1", "app")], stats: [] }, () =>
      broken ? new Error("connect ENOENT /run/containerd/containerd.sock") : undefined,
    );
    const { p } = provider([pod("u1")], { cri, criTtlMs: 0 });
    const s1 = await p.summary();
    expect(s1.pods[0]!.memory?.usageBytes).toBe(2 * MI);
    expect(s1.pods[0]!.containers).toBeUndefined();
    broken = false;
    await p.summary(); // kicks the background refresh
    let names: string[] | undefined;
    for (let i = 0; i < 100 && !names?.length; i++) {
      await Bun.sleep(1);
      names = (await p.summary()).pods[0]!.containers?.map((c) => c.name);
    }
    expect(names).toEqual(["app"]);
    expect(calls.n).toBeGreaterThan(3);
  });

  test("no pod, no CRI listing", async () => {
    const { cri, calls } = fakeCri({ sandboxes: [], containers: [], stats: [] });
    const { p } = provider([], { cri, criTtlMs: 2000 });
    await p.summary();
    expect(calls.n).toBe(0);
  });

  test("the CRI listing is reused within criTtlMs", async () => {
    const { cri, calls } = fakeCri({ sandboxes: [], containers: [], stats: [] });
    const { p } = provider([pod("u1")], { cri, criTtlMs: 2000 });
    await p.summary();
    await p.summary();
    expect(calls.n).toBe(3);
    now += 2000;
    await p.summary();
    await Bun.sleep(0);
    expect(calls.n).toBe(6);
  });
});

describe("node level", () => {
  test("node name from options; pods system container from podsCgroup when the kernel provider has none; node cpu", async () => {
    fakeCgroup("kubepods", { usage: 300 * MI, inactive: 100 * MI, rss: 0, cpuNs: 4e9 });
    put(mount, { "cpuacct/cpuacct.usage": "1000\n" });
    const { p } = provider([], { podsCgroup: "kubepods" });
    const s = await p.summary();
    expect(s.node.nodeName).toBe("node-a");
    expect(s.node.fs).toEqual(nodefs);
    const pods = s.node.systemContainers?.find((c) => c.name === "pods");
    expect(pods?.memory?.workingSetBytes).toBe(200 * MI);
    expect(pods?.cpu?.usageCoreNanoSeconds).toBe(4e9);
    expect(s.node.cpu?.usageCoreNanoSeconds).toBe(1000);
    expect(s.pods).toEqual([]);
  });

  test("a pods entry from the kernel provider is kept", async () => {
    fakeCgroup("kubepods", { usage: 300 * MI, inactive: 100 * MI, rss: 0, cpuNs: 4e9 });
    const { p } = provider([], {
      podsCgroup: "kubepods",
      nodeStats: () => ({ nodeName: "k", systemContainers: [{ name: "pods", memory: { time: "t", workingSetBytes: 5 } }] }),
    });
    const pods = (await p.summary()).node.systemContainers!.find((c) => c.name === "pods")!;
    expect(pods.memory?.workingSetBytes).toBe(5);
    expect(pods.cpu?.usageCoreNanoSeconds).toBe(4e9);
  });
});

describe("podStats and concurrency", () => {
  test("podStats(uid) for an active pod, undefined otherwise", async () => {
    fakeCgroup("kubepods/besteffort/podu1", { usage: 3 * MI, inactive: MI, rss: 0, cpuNs: 1 });
    const { p } = provider([pod("u1"), pod("u2")]);
    expect((await p.podStats("u1"))?.memory?.workingSetBytes).toBe(2 * MI);
    expect(await p.podStats("nope")).toBeUndefined();
  });

  test("concurrent summary() calls share one build", async () => {
    let reads = 0;
    const { p } = provider([pod("u1")], {
      podCgroupPath: () => {
        reads++;
        return undefined;
      },
    });
    const [a, b] = await Promise.all([p.summary(), p.summary()]);
    expect(a).toBe(b);
    expect(reads).toBe(1);
  });
});

describe("memory-only summary (the pressure path)", () => {
  const kubepodsRel = "kubepods/besteffort";
  const t0 = "2026-03-01T10:00:00.000Z";
  const t1 = "2026-03-01T10:00:02.000Z";

  function node(workingSet: number) {
    return (): NodeStats => ({
      nodeName: "k",
      memory: { time: new Date(clock.now()).toISOString(), workingSetBytes: workingSet, availableBytes: 4096 * MI - workingSet },
      fs: { ...nodefs, time: new Date(clock.now()).toISOString() },
      rlimit: { time: new Date(clock.now()).toISOString(), maxpid: 100, curproc: 10 },
    });
  }

  test("memory fresh from the cgroups; fs, rlimit, cpu, containers, volumes and logs from the last full summary with their timestamps", async () => {
    fakeCgroup(kubepodsRel, { usage: 300 * MI, inactive: 100 * MI, rss: 0, cpuNs: 4e9 });
    fakeCgroup(`${kubepodsRel}/podu1`, { usage: 100 * MI, inactive: 10 * MI, rss: 0, cpuNs: 5e9, pids: 3 });
    put(logs, { "ns_p-u1_u1/app/0.log": "hello\n" });
    put(kubeletRoot, { "pods/u1/volumes/kubernetes.io~empty-dir/v/f": "x" });
    let ws = 1000 * MI;
    const { p, errors } = provider([pod("u1", { volumes: [{ name: "v", emptyDir: {} }] })], { podsCgroup: kubepodsRel, nodeStats: () => node(ws)() });
    const full = await p.summary();
    now += 2000;
    ws = 3000 * MI;
    fakeCgroup(kubepodsRel, { usage: 900 * MI, inactive: 100 * MI, rss: 0, cpuNs: 9e9 });
    fakeCgroup(`${kubepodsRel}/podu1`, { usage: 700 * MI, inactive: 10 * MI, rss: 0, cpuNs: 9e9, pids: 7 });
    const s = await p.summary({ memoryOnly: true });
    expect(s.node.memory).toMatchObject({ time: t1, workingSetBytes: 3000 * MI });
    const podsMem = s.node.systemContainers!.find((c) => c.name === "pods")!;
    expect(podsMem.memory).toMatchObject({ time: t1, workingSetBytes: 800 * MI });
    expect(podsMem.cpu).toEqual(full.node.systemContainers!.find((c) => c.name === "pods")!.cpu!);
    expect(s.node.fs!.time).toBe(t0);
    expect(s.node.rlimit!.time).toBe(t0);
    const ps = s.pods[0]!;
    expect(ps.memory).toMatchObject({ time: t1, workingSetBytes: 690 * MI });
    const { memory: _m, ...rest } = ps;
    const { memory: _f, ...fullRest } = full.pods[0]!;
    expect(rest).toEqual(fullRest);
    expect(ps.process_stats).toEqual({ process_count: 3 });
    expect(ps.volume![0]!.time).toBe(t0);
    // The full summary it was built from is untouched.
    expect(full.pods[0]!.memory?.workingSetBytes).toBe(90 * MI);
    expect(full.node.memory?.workingSetBytes).toBe(1000 * MI);
    expect(errors).toEqual([]);
    // The next full summary reads everything again.
    const again = await p.summary();
    expect(again.node.fs!.time).toBe(t1);
    expect(again.pods[0]!.process_stats).toEqual({ process_count: 7 });
  });

  test("without a full summary yet it builds a full one", async () => {
    fakeCgroup(`${kubepodsRel}/podu1`, { usage: 100 * MI, inactive: 10 * MI, rss: 0, cpuNs: 5e9, pids: 3 });
    const { p } = provider([pod("u1")]);
    const s = await p.summary({ memoryOnly: true });
    expect(s.pods[0]!.process_stats).toEqual({ process_count: 3 });
    expect(s.pods[0]!["ephemeral-storage"]).toBeDefined();
  });

  test("pods as active now: a new pod gets its memory, a gone pod is left out, a torn-down cgroup is no error", async () => {
    fakeCgroup(`${kubepodsRel}/podu1`, { usage: 100 * MI, inactive: 0, rss: 0, cpuNs: 1 });
    fakeCgroup(`${kubepodsRel}/podu2`, { usage: 200 * MI, inactive: 0, rss: 0, cpuNs: 1 });
    const pods = [pod("u1"), pod("u2")];
    const { p, errors } = provider(pods);
    await p.summary();
    fakeCgroup(`${kubepodsRel}/podu3`, { usage: 300 * MI, inactive: 0, rss: 0, cpuNs: 1 });
    pods.splice(0, 1, pod("u3"));
    rmSync(join(mount, "memory", kubepodsRel, "podu2"), { recursive: true });
    const s = await p.summary({ memoryOnly: true });
    expect(s.pods.map((x) => [x.podRef.uid, x.memory?.workingSetBytes])).toEqual([
      ["u3", 300 * MI],
      ["u2", undefined],
    ]);
    expect(errors).toEqual([]);
  });

  test("never waits on (nor shares) a full build in flight", async () => {
    fakeCgroup(`${kubepodsRel}/podu1`, { usage: 100 * MI, inactive: 0, rss: 0, cpuNs: 1 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let slow = false;
    const cri: SummaryCri = {
      listPodSandbox: async () => {
        if (slow) await gate;
        return [];
      },
      listContainers: async () => [],
      listContainerStats: async () => [],
    };
    const { p } = provider([pod("u1")], { cri, criTtlMs: 0, criTimeoutMs: 60_000 });
    await p.summary();
    slow = true;
    const inflight = p.summary();
    fakeCgroup(`${kubepodsRel}/podu1`, { usage: 500 * MI, inactive: 0, rss: 0, cpuNs: 1 });
    const fast = await p.summary({ memoryOnly: true });
    expect(fast.pods[0]!.memory?.workingSetBytes).toBe(500 * MI);
    release();
    await inflight;
  });
});

describe("edges", () => {
  test("the full summary is a valid Summary API document (eviction's schema) and survives JSON", async () => {
    fakeCgroup("kubepods/besteffort/podu1", { usage: 3 * MI, inactive: MI, rss: MI, cpuNs: 10, pids: 2 });
    put(logs, { "ns_p-u1_u1/app/0.log": "hello\n" });
    put(kubeletRoot, { "pods/u1/volumes/kubernetes.io~empty-dir/v/f": "x" });
    const { p } = provider([pod("u1", { volumes: [{ name: "v", emptyDir: {} }] })], { podsCgroup: "kubepods/besteffort" });
    const s = await p.summary();
    const back = parseSummaryText(JSON.stringify(s), "summary-provider output");
    expect(back.pods[0]!.podRef.uid).toBe("u1");
    expect(back.pods[0]!["ephemeral-storage"]?.usedBytes).toBe(s.pods[0]!["ephemeral-storage"]!.usedBytes!);
    for (const t of [s.pods[0]!.memory!.time, s.pods[0]!.cpu!.time, s.pods[0]!.volume![0]!.time]) expect(t).toBe("2026-03-01T10:00:00.000Z");
  });

  test("cgroup v2 (unified) layout: memory.current, cpu.stat, pids.current in one directory", async () => {
    put(mount, {
      "cgroup.controllers": "cpu memory pids\n",
      "kubepods/podu1/memory.current": `${10 * MI}\n`,
      "kubepods/podu1/memory.stat": `anon ${6 * MI}\ninactive_file ${3 * MI}\npgfault 5\npgmajfault 1\n`,
      "kubepods/podu1/memory.max": `${20 * MI}\n`,
      "kubepods/podu1/cpu.stat": "usage_usec 2500\nuser_usec 2000\nsystem_usec 500\n",
      "kubepods/podu1/pids.current": "6\n",
    });
    const { p, errors } = provider([pod("u1")], { podCgroupPath: () => "/kubepods/podu1" });
    const ps = (await p.summary()).pods[0]!;
    expect(ps.memory).toMatchObject({
      usageBytes: 10 * MI,
      workingSetBytes: 7 * MI,
      rssBytes: 6 * MI,
      availableBytes: 13 * MI,
      pageFaults: 5,
      majorPageFaults: 1,
    });
    expect(ps.cpu?.usageCoreNanoSeconds).toBe(2_500_000);
    expect(ps.process_stats?.process_count).toBe(6);
    expect(errors).toEqual([]);
  });

  test("startTime: sandbox creation when CRI knows the pod, else the pod's status.startTime", async () => {
    const withStatus = { ...pod("u1"), status: { phase: "Running", startTime: "2026-02-02T02:02:02Z" } } as PodLike;
    const { p } = provider([withStatus]);
    expect((await p.summary()).pods[0]!.startTime).toBe("2026-02-02T02:02:02Z");
  });

  test("a first volume walk slower than volumeWaitMs is left out of that summary, then reported", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const dirUsage = createDirUsageCache({
      now: () => now,
      walk: async () => {
        await gate;
        return { usedBytes: 4096, inodesUsed: 1, truncated: false };
      },
    });
    const { p } = provider([pod("u1", { volumes: [{ name: "big", emptyDir: {} }] })], { dirUsage, volumeWaitMs: 5 });
    expect((await p.summary()).pods[0]!.volume).toBeUndefined();
    release();
    await gate;
    await Bun.sleep(0);
    expect((await p.summary()).pods[0]!.volume).toEqual([expect.objectContaining({ name: "big", usedBytes: 4096, inodesUsed: 1 })]);
  });
});
