import { describe, expect, test } from "bun:test";
import { sortThresholdsForReclaim, synchronize } from "../../src/eviction/synchronize.ts";
import { harness } from "./harness.ts";
import { at, Gi, Mi, pod, podStats, summary, thresholds } from "./helpers.ts";

const hog = pod("hog");
const small = pod("small", { requests: { memory: "100Mi" } });
const guaranteed = pod("guaranteed", { requests: { memory: "1Gi", cpu: "1" }, limits: { memory: "1Gi", cpu: "1" }, priority: 100 });
const memPods = () => [hog, small, guaranteed];
const memStats = (t: string) => [
  podStats(hog, { memory: 800 * Mi }, t),
  podStats(small, { memory: 50 * Mi }, t),
  podStats(guaranteed, { memory: 900 * Mi }, t),
];
const mem = (s: number, availableMi: number) => summary({ time: at(s), memAvailable: availableMi * Mi, memWorkingSet: 3 * Gi, pods: memStats(at(s)) });

describe("synchronize: hard memory threshold", () => {
  test("evicts the top-ranked pod with grace 1, upstream message, annotations and events", async () => {
    const h = harness({ thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] }), pods: memPods() });
    const r = await h.step(0, mem(0, 80));
    expect(r.met.map((t) => t.signal)).toEqual(["memory.available"]);
    expect(r.conditions).toEqual(["MemoryPressure"]);
    expect(r.reclaim?.signal).toBe("memory.available");
    expect(r.ranked.map((x) => x.pod.metadata.name)).toEqual(["hog", "small", "guaranteed"]);
    expect(h.kills).toHaveLength(1);
    expect(h.kills[0]!.pod).toBe("hog");
    expect(h.kills[0]!.grace).toBe(1);
    expect(h.kills[0]!.status).toEqual({
      reason: "Evicted",
      message:
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. Container c was using 800Mi, request is 0, has larger consumption of memory. ",
      annotations: { offending_containers: "c", offending_containers_usage: "800Mi", starved_resource: "memory" },
      condition: {
        type: "DisruptionTarget",
        status: "True",
        reason: "TerminationByKubelet",
        message:
          "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. Container c was using 800Mi, request is 0, has larger consumption of memory. ",
      },
    });
    expect(h.events.map((e) => `${e.object.kind}/${e.reason}/${e.message.slice(0, 30)}`)).toEqual([
      "Node/EvictionThresholdMet/Attempting to reclaim memory",
      "Pod/Evicted/The node was low on resource: ",
    ]);
    expect(h.logs.some((l) => l.startsWith("I evicting pod=default/hog signal=memory.available observed=80Mi threshold=100Mi rank=1/3 qos=BestEffort"))).toBe(
      true,
    );
  });

  test("the message's container figures are read at eviction time (containerMemory) over the summary's", async () => {
    const h = harness({ thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] }), pods: memPods() });
    const asked: string[] = [];
    h.deps.containerMemory = (p) => (asked.push(p.metadata.name), p === hog ? [{ name: "c", memory: { time: at(0), workingSetBytes: 950 * Mi } }] : undefined);
    await h.step(0, mem(0, 80));
    expect(asked).toEqual(["hog"]); // the victim only
    expect(h.kills[0]!.status.message).toBe(
      "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. Container c was using 950Mi, request is 0, has larger consumption of memory. ",
    );
    expect(h.kills[0]!.status.annotations?.offending_containers_usage).toBe("950Mi");
  });

  test("at most one pod per sync", async () => {
    const h = harness({ thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] }), pods: memPods() });
    await h.step(0, mem(0, 10));
    expect(h.kills.map((k) => k.pod)).toEqual(["hog"]);
    await h.step(10, mem(10, 10));
    expect(h.kills.map((k) => k.pod)).toEqual(["hog", "small"]);
  });

  test("exactly equal is not met (strict)", async () => {
    const h = harness({ thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] }), pods: memPods() });
    const r = await h.step(0, mem(0, 100));
    expect(r.met).toEqual([]);
    expect(h.kills).toEqual([]);
  });

  test("allocatable copy makes pods in aggregate trigger MemoryPressure before the node (trap 4)", async () => {
    const h = harness({ thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" } }), pods: memPods() });
    const s = summary({ time: at(0), memAvailable: 4 * Gi, allocAvailable: 50 * Mi, pods: memStats(at(0)) });
    const r = await h.step(0, s);
    expect(r.met.map((t) => t.signal)).toEqual(["allocatableMemory.available"]);
    expect(r.conditions).toEqual(["MemoryPressure"]);
    expect(h.kills.map((k) => k.pod)).toEqual(["hog"]);
  });

  test("an absent signal skips its thresholds", async () => {
    const h = harness({ thresholds: thresholds({ evictionHard: { "memory.available": "100Mi", "pid.available": "100" } }), pods: memPods() });
    const r = await h.step(0, summary({ time: at(0), maxpid: 1000, curproc: 10 }));
    expect(r.met).toEqual([]);
    expect(Object.keys(r.observations)).toEqual(["pid.available"]);
  });
});

describe("synchronize: soft thresholds and grace periods", () => {
  const soft = () => thresholds({ evictionHard: {}, evictionSoft: { "memory.available": "500Mi" }, evictionSoftGracePeriod: { "memory.available": "30s" } });

  test("condition is reported at once; eviction waits for continuous grace; one miss resets the clock (traps 6, 7)", async () => {
    const h = harness({ thresholds: soft(), config: { maxPodGracePeriodSeconds: 10 }, pods: memPods() });
    const seq: [number, number, boolean][] = [
      [0, 400, false],
      [10, 400, false],
      [20, 600, false], // not met: clock resets
      [30, 400, false],
      [50, 400, false],
      [60, 400, true], // 30s since t=30
    ];
    for (const [s, avail, evicts] of seq) {
      const before = h.kills.length;
      const r = await h.step(s, mem(s, avail));
      expect({ s, evicted: h.kills.length > before }).toEqual({ s, evicted: evicts });
      if (avail < 500) expect(r.conditions).toEqual(["MemoryPressure"]);
    }
    expect(h.kills[0]!.grace).toBe(10); // min(max 10, pod TGPS unset → max)
  });

  test.each([
    [10, 30, 10],
    [60, 30, 30],
    [0, 30, 0],
    [-1, 30, -1], // negative max passes through (issue #118172)
  ])("soft grace override: max=%d tgps=%d → %d", async (max, tgps, want) => {
    const p = pod("p", { tgps });
    const h = harness({
      thresholds: thresholds({ evictionHard: {}, evictionSoft: { "memory.available": "500Mi" }, evictionSoftGracePeriod: { "memory.available": "1s" } }),
      config: { maxPodGracePeriodSeconds: max },
      pods: [p],
    });
    const s = (t: number) => summary({ time: at(t), memAvailable: 100 * Mi, pods: [podStats(p, { memory: Gi }, at(t))] });
    await h.step(0, s(0));
    await h.step(10, s(10));
    expect(h.kills.map((k) => k.grace)).toEqual([want]);
  });

  test("a soft threshold with 0s grace acts hard (grace override 1)", async () => {
    const h = harness({
      thresholds: thresholds({ evictionHard: {}, evictionSoft: { "memory.available": "500Mi" }, evictionSoftGracePeriod: { "memory.available": "0s" } }),
      pods: memPods(),
    });
    await h.step(0, mem(0, 400));
    expect(h.kills.map((k) => k.grace)).toEqual([1]);
  });
});

describe("synchronize: node conditions and the transition period", () => {
  test("observed at 0 and never again: reported until 59s, gone at 60s (strict <)", async () => {
    const h = harness({
      thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] }),
      config: { pressureTransitionPeriodMs: 60_000 },
      pods: [],
    });
    const conds: string[][] = [];
    for (const [s, avail] of [
      [0, 50],
      [30, 500],
      [59, 500],
      [60, 500],
    ] as const)
      conds.push((await h.step(s, mem(s, avail))).conditions);
    expect(conds).toEqual([["MemoryPressure"], ["MemoryPressure"], ["MemoryPressure"], []]);
  });
  test("re-observing refreshes; conditions have their own clocks", async () => {
    const ts = thresholds({ evictionHard: { "memory.available": "100Mi", "pid.available": "100" }, enforceNodeAllocatable: [] });
    const h = harness({ thresholds: ts, config: { pressureTransitionPeriodMs: 60_000 }, pods: [] });
    const s = (t: number, memMi: number, procs: number) => summary({ time: at(t), memAvailable: memMi * Mi, maxpid: 1000, curproc: procs });
    expect((await h.step(0, s(0, 50, 950))).conditions).toEqual(["MemoryPressure", "PIDPressure"]);
    expect((await h.step(40, s(40, 50, 10))).conditions).toEqual(["MemoryPressure", "PIDPressure"]);
    expect((await h.step(70, s(70, 500, 10))).conditions).toEqual(["MemoryPressure"]);
    expect((await h.step(100, s(100, 500, 10))).conditions).toEqual([]);
  });
  test("a transition period of 0 never reports a condition", async () => {
    const h = harness({
      thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] }),
      config: { pressureTransitionPeriodMs: 0 },
      pods: memPods(),
    });
    const r = await h.step(0, mem(0, 50));
    expect(r.conditions).toEqual([]);
    expect(h.kills).toHaveLength(1); // eviction still happens
  });
});

describe("synchronize: min-reclaim hysteresis (trap 8) and staleness (trap 14)", () => {
  const ts = () =>
    thresholds({ evictionHard: { "memory.available": "100Mi" }, evictionMinimumReclaim: { "memory.available": "50Mi" }, enforceNodeAllocatable: [] });
  test("first detection ignores min-reclaim", async () => {
    const h = harness({ thresholds: ts(), pods: memPods() });
    const r = await h.step(0, mem(0, 120));
    expect(r.met).toEqual([]);
  });
  test("an acting threshold stays met until available ≥ threshold + min-reclaim", async () => {
    const h = harness({ thresholds: ts(), pods: memPods() });
    await h.step(0, mem(0, 90));
    const r1 = await h.step(10, mem(10, 120));
    expect(r1.met.map((t) => t.signal)).toEqual(["memory.available"]);
    expect(h.kills.map((k) => k.pod)).toEqual(["hog", "small"]);
    const r2 = await h.step(20, mem(20, 150));
    expect(r2.met).toEqual([]);
    expect(h.kills).toHaveLength(2);
  });
  test("stats whose timestamp did not advance are not acted on twice", async () => {
    const h = harness({ thresholds: ts(), pods: memPods() });
    await h.step(0, mem(0, 50));
    const stale = mem(0, 50);
    const r = await h.step(10, stale);
    expect(r.actionable).toHaveLength(1);
    expect(r.actionableFresh).toHaveLength(0);
    expect(r.conditions).toEqual(["MemoryPressure"]);
    expect(h.kills).toHaveLength(1);
  });
});

describe("synchronize: disk pressure and node-level reclaim", () => {
  const a = pod("a");
  const b = pod("b", { priority: 10 });
  const disk = (t: number, availGi: number, extra: Parameters<typeof summary>[0] = {}) =>
    summary({
      time: at(t),
      fsAvailable: availGi * Gi,
      fsCapacity: 100 * Gi,
      pods: [podStats(a, { rootfs: Gi, logs: Mi }, at(t)), podStats(b, { rootfs: 5 * Gi, logs: Mi }, at(t))],
      ...extra,
    });
  const ts = () => thresholds({ evictionHard: { "nodefs.available": "10%" } });

  test("reclaim relieves the pressure: containers then images, no pod evicted", async () => {
    const h = harness({ thresholds: ts(), pods: [a, b] });
    h.afterReclaim = disk(0, 50);
    const r = await h.step(0, disk(0, 5));
    expect(h.reclaimCalls).toEqual(["containers", "images"]);
    expect(r.nodeReclaim).toEqual({ steps: ["deleteUnusedContainers", "deleteUnusedImages"], relieved: true });
    expect(r.conditions).toEqual(["DiskPressure"]); // reflects the pre-GC observation
    expect(h.kills).toEqual([]);
  });
  test("reclaim fails to relieve: rank and evict (priority before usage)", async () => {
    const h = harness({ thresholds: ts(), pods: [a, b] });
    const r = await h.step(0, disk(0, 5));
    expect(r.nodeReclaim?.relieved).toBe(false);
    expect(r.ranked.map((x) => x.pod.metadata.name)).toEqual(["a", "b"]);
    expect(h.kills.map((k) => [k.pod, k.grace, k.status.annotations.starved_resource])).toEqual([["a", 1, "ephemeral-storage"]]);
  });
  test("after-reclaim check uses min-reclaim and every threshold, soft ones in grace included (trap 9)", async () => {
    const t = thresholds({
      evictionHard: { "nodefs.available": "10%" },
      evictionSoft: { "memory.available": "1Gi" },
      evictionSoftGracePeriod: { "memory.available": "5m" },
      evictionMinimumReclaim: { "nodefs.available": "5Gi" },
    });
    const h = harness({ thresholds: t, pods: [a, b] });
    h.afterReclaim = disk(0, 12, { memAvailable: 4 * Gi }); // 12Gi < 10% + 5Gi = 15Gi
    await h.step(0, disk(0, 5, { memAvailable: 4 * Gi }));
    expect(h.kills.map((k) => k.pod)).toEqual(["a"]);
  });
  test("a memory-only cycle (kernel trigger) asks for a memory-only summary, and re-checks after reclaim on a full one", async () => {
    const h = harness({ thresholds: ts(), pods: [a, b] });
    const requests: (boolean | undefined)[] = [];
    const inner = h.deps.summary;
    h.deps = { ...h.deps, summary: (req) => (requests.push(req?.memoryOnly), inner(req)) };
    h.afterReclaim = disk(0, 50);
    h.current = disk(0, 5);
    const r = await synchronize(h.deps, h.state, { memoryOnly: true });
    expect(r.nodeReclaim?.relieved).toBe(true);
    expect(requests).toEqual([true, undefined]);
  });
  // A pod filling its emptyDir showed as empty in the cached volume walk and the quiet pod was evicted
  // (chaos disk-pressure, CI 2026-12-02): the ranking's stats come from a summary walked afresh.
  describe("ranking under disk pressure uses freshly walked volumes", () => {
    const quiet = pod("quiet");
    const filler = pod("filler", { volumes: [{ name: "scratch", emptyDir: {} }] });
    const stale = (t: number, availGi: number) =>
      summary({
        time: at(t),
        fsAvailable: availGi * Gi,
        fsCapacity: 100 * Gi,
        pods: [podStats(quiet, { logs: Mi }, at(t)), podStats(filler, { logs: Mi, volumes: [{ name: "scratch", used: 0 }] }, at(t))],
      });
    const fresh = (t: number, availGi: number) =>
      summary({
        time: at(t),
        fsAvailable: availGi * Gi,
        fsCapacity: 100 * Gi,
        pods: [podStats(quiet, { logs: Mi }, at(t)), podStats(filler, { logs: Mi, volumes: [{ name: "scratch", used: 40 * Gi }] }, at(t))],
      });
    const withFreshVolumes = (h: ReturnType<typeof harness>, requests: (boolean | undefined)[]) => {
      const inner = h.deps.summary;
      h.deps = { ...h.deps, summary: (req) => (requests.push(req?.freshVolumes), req?.freshVolumes ? Promise.resolve(fresh(0, 5)) : inner(req)) };
    };
    test.each<[string, { dedicatedImageFs: boolean; splitContainerImageFs: boolean } | undefined, (boolean | undefined)[]]>([
      ["after node-level reclaim (the re-check's summary)", undefined, [undefined, true]],
      [
        "no node-level reclaim (dedicated imagefs): one more summary before ranking",
        { dedicatedImageFs: true, splitContainerImageFs: false },
        [undefined, true],
      ],
    ])("%s", async (_name, layout, wantRequests) => {
      const h = harness({ thresholds: ts(), pods: [quiet, filler], ...(layout ? { layout } : {}) });
      const requests: (boolean | undefined)[] = [];
      withFreshVolumes(h, requests);
      const r = await h.step(0, stale(0, 5));
      expect(requests).toEqual(wantRequests);
      expect(r.ranked.map((x) => x.pod.metadata.name)).toEqual(["filler", "quiet"]);
      expect(h.kills.map((k) => k.pod)).toEqual(["filler"]);
    });
    test("memory pressure ranks with the cycle's summary (no extra walk)", async () => {
      const h = harness({ thresholds: thresholds({ evictionHard: { "memory.available": "1Gi" } }), pods: memPods() });
      const requests: (boolean | undefined)[] = [];
      withFreshVolumes(h, requests);
      await h.step(0, mem(0, 500));
      expect(requests).toEqual([undefined]);
    });
  });
  test("dedicated imagefs: nodefs has no reclaim functions, goes straight to ranking logs+volumes", async () => {
    const h = harness({ thresholds: ts(), pods: [a, b], layout: { dedicatedImageFs: true, splitContainerImageFs: false } });
    const r = await h.step(0, disk(0, 5));
    expect(h.reclaimCalls).toEqual([]);
    expect(r.nodeReclaim).toBeNull();
    expect(h.kills).toHaveLength(1);
  });
  test("split layout: imagefs reclaim deletes images only", async () => {
    const h = harness({
      thresholds: thresholds({ evictionHard: { "imagefs.available": "10%" } }),
      pods: [a, b],
      layout: { dedicatedImageFs: true, splitContainerImageFs: true },
    });
    await h.step(0, disk(0, 50, { imageFs: { available: Gi, capacity: 100 * Gi } }));
    expect(h.reclaimCalls).toEqual(["images"]);
  });
  test("containerfs thresholds are derived from nodefs (split) and act from the second sync", async () => {
    const h = harness({
      thresholds: thresholds({ evictionHard: { "nodefs.available": "10%" } }),
      pods: [a, b],
      layout: { dedicatedImageFs: true, splitContainerImageFs: true },
    });
    const s = (t: number) => disk(t, 50, { imageFs: { available: 90 * Gi, capacity: 100 * Gi }, containerFs: { available: 2 * Gi, capacity: 100 * Gi } });
    const r1 = await h.step(0, s(0));
    expect(r1.met).toEqual([]);
    expect(h.state.thresholds.map((t) => t.signal)).toContain("containerfs.available");
    const r2 = await h.step(10, s(10));
    expect(r2.met.map((t) => t.signal)).toEqual(["containerfs.available"]);
  });
});

describe("synchronize: PID pressure", () => {
  test("ranks by priority then process count", async () => {
    const a = pod("a", { priority: 5 });
    const b = pod("b");
    const c = pod("c");
    const h = harness({ thresholds: thresholds({ evictionHard: { "pid.available": "100" } }), pods: [a, b, c] });
    const s = summary({
      time: at(0),
      maxpid: 1000,
      curproc: 950,
      pods: [podStats(a, { processes: 800 }), podStats(b, { processes: 10 }), podStats(c, { processes: 100 })],
    });
    const r = await h.step(0, s);
    expect(r.conditions).toEqual(["PIDPressure"]);
    expect(r.ranked.map((x) => x.pod.metadata.name)).toEqual(["c", "b", "a"]);
    expect(h.kills[0]!.status.message).toBe("The node was low on resource: pids. Threshold quantity: 100, available: 50. ");
  });
});

describe("synchronize: exemptions and evictStaticPods", () => {
  const st = pod("static-hog", { annotations: { "kubernetes.io/config.source": "file" } });
  const mirror = pod("mirror", { annotations: { "kubernetes.io/config.mirror": "x" } });
  const crit = pod("critical", { priority: 2_000_000_000 });
  const normal = pod("normal", { requests: { memory: "1Gi" } });
  const s = (t: number) =>
    summary({
      time: at(t),
      memAvailable: 10 * Mi,
      pods: [
        podStats(st, { memory: 2 * Gi }, at(t)),
        podStats(mirror, { memory: 2 * Gi }, at(t)),
        podStats(crit, { memory: 2 * Gi }, at(t)),
        podStats(normal, { memory: 10 * Mi }, at(t)),
      ],
    });
  const ts = () => thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] });
  test("critical pods are skipped; the next ranked pod is evicted", async () => {
    const h = harness({ thresholds: ts(), pods: [st, mirror, crit, normal] });
    await h.step(0, s(0));
    expect(h.kills.map((k) => k.pod)).toEqual(["normal"]);
  });
  test("only static pods: nothing evicted, and the log says why", async () => {
    const h = harness({ thresholds: ts(), pods: [st] });
    const r = await h.step(0, s(0));
    expect(h.kills).toEqual([]);
    expect(r.note).toContain("static pods");
    expect(r.note).toContain("evictStaticPods");
    expect(h.logs.some((l) => l.startsWith("W") && l.includes("evictStaticPods"))).toBe(true);
  });
  test("evictStaticPods: static pods rank and evict like others; mirror and critical stay exempt", async () => {
    const h = harness({ thresholds: ts(), config: { evictStaticPods: true }, pods: [mirror, crit, st, normal] });
    await h.step(0, s(0));
    expect(h.kills.map((k) => k.pod)).toEqual(["static-hog"]);
  });
});

describe("synchronize: local-storage limit evictions", () => {
  test("emptyDir, pod-level and container limits; several pods in one sync; threshold logic skipped", async () => {
    const ed = pod("emptydir", { volumes: [{ name: "cache", emptyDir: { sizeLimit: "100Mi" } }] });
    const pl = pod("podlimit", {
      containers: [
        { name: "a", resources: { limits: { "ephemeral-storage": "1Gi" } } },
        { name: "b", resources: { limits: { "ephemeral-storage": "1Gi" } } },
      ],
    });
    const cl = pod("ctrlimit", { containers: [{ name: "w", resources: { limits: { "ephemeral-storage": "100Mi" } } }] });
    const ok = pod("fine", { volumes: [{ name: "cache", emptyDir: { sizeLimit: "1Gi" } }] });
    const crit = pod("crit", { priority: 2_000_000_000, volumes: [{ name: "cache", emptyDir: { sizeLimit: "1Mi" } }] });
    const h = harness({ thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] }), pods: [ed, pl, cl, ok, crit] });
    const s = summary({
      time: at(0),
      memAvailable: 10 * Mi,
      pods: [
        podStats(ed, { volumes: [{ name: "cache", used: 200 * Mi }] }),
        podStats(pl, { ephemeral: 3 * Gi, container: "a" }),
        podStats(cl, { rootfs: 60 * Mi, logs: 60 * Mi, container: "w" }),
        podStats(ok, { volumes: [{ name: "cache", used: 200 * Mi }] }),
        podStats(crit, { volumes: [{ name: "cache", used: 200 * Mi }] }),
      ],
    });
    const r = await h.step(0, s);
    expect(h.kills.map((k) => [k.pod, k.grace, k.status.message, k.status.annotations])).toEqual([
      ["emptydir", 1, 'Usage of EmptyDir volume "cache" exceeds the limit "100Mi". ', {}],
      ["podlimit", 1, "Pod ephemeral local storage usage exceeds the total limit of containers 2Gi. ", {}],
      ["ctrlimit", 1, 'Container w exceeded its local ephemeral storage limit "100Mi". ', {}],
    ]);
    expect(r.reclaim).toBeNull();
  });
  test("with a dedicated imagefs only logs count toward a container's limit", async () => {
    const cl = pod("ctrlimit", { containers: [{ name: "w", resources: { limits: { "ephemeral-storage": "100Mi" } } }] });
    const h = harness({ thresholds: [], pods: [cl], layout: { dedicatedImageFs: true, splitContainerImageFs: false } });
    await h.step(0, summary({ time: at(0), pods: [podStats(cl, { rootfs: 60 * Mi, logs: 60 * Mi, container: "w" })] }));
    expect(h.kills).toEqual([]);
  });
});

describe("threshold choice", () => {
  test("memory first, then hard before soft, then configuration order", () => {
    const ts = thresholds({
      evictionHard: { "nodefs.available": "10%", "pid.available": "10" },
      evictionSoft: { "memory.available": "1Gi" },
      evictionSoftGracePeriod: { "memory.available": "1m" },
      enforceNodeAllocatable: [],
    });
    const hardMem = thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] })[0]!;
    const sorted = sortThresholdsForReclaim([...ts, hardMem]);
    expect(sorted.map((t) => `${t.signal}${t.gracePeriodMs ? "~soft" : ""}`)).toEqual([
      "memory.available",
      "memory.available~soft",
      "nodefs.available",
      "pid.available",
    ]);
  });
});

describe("synchronize: kills that fail or outlive their grace", () => {
  test("a failed kill of a pod that stays active is retried after grace + 30 s, not before", async () => {
    const h = harness({
      thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] }),
      pods: memPods(),
      killBehaviour: "keep",
    });
    h.deps.killPod = (p, grace, status) => {
      h.kills.push({ pod: p.metadata.name, grace, status, atMs: h.clock.now() });
      return Promise.reject(new Error("runtime unavailable"));
    };
    await h.step(0, mem(0, 50));
    await h.step(10, mem(10, 50)); // waits: the 1 s kill is within its cleanup window
    await h.step(20, mem(20, 50));
    expect(h.kills.map((k) => k.pod)).toEqual(["hog"]);
    await h.step(31, mem(31, 50)); // 1 s grace + 30 s cleanup passed: retried
    expect(h.kills.map((k) => k.pod)).toEqual(["hog", "hog"]);
    expect(h.logs.some((l) => l.startsWith("E pod failed to evict pod=default/hog") && l.includes("runtime unavailable"))).toBe(true);
  });
});

describe("local-storage messages keep the limit's format", () => {
  test.each([
    ["1G", "1G", "2G"],
    ["1Gi", "1Gi", "2Gi"],
    ["1Gi", "512Mi", "1536Mi"],
  ])("%s + %s → %s", async (l1, l2, want) => {
    const p = pod("p", {
      containers: [
        { name: "a", resources: { limits: { "ephemeral-storage": l1 } } },
        { name: "b", resources: { limits: { "ephemeral-storage": l2 } } },
      ],
    });
    const h = harness({ thresholds: [], pods: [p] });
    await h.step(0, summary({ time: at(0), pods: [podStats(p, { ephemeral: 10 * Gi, container: "zzz" })] }));
    expect(h.kills[0]!.status.message).toBe(`Pod ephemeral local storage usage exceeds the total limit of containers ${want}. `);
  });
});

describe("split filesystem without the KubeletSeparateDiskGC gate", () => {
  test("sync fails with upstream's error and retries layout detection next time", async () => {
    const h = harness({
      thresholds: thresholds({}),
      config: { separateDiskGC: false },
      pods: [],
      layout: { dedicatedImageFs: true, splitContainerImageFs: true },
    });
    const r = await h.step(0, summary({ time: at(0), memAvailable: Gi }));
    expect(r.error).toBe("KubeletSeparateDiskGC is turned off but we still have a split filesystem");
    expect(h.state.initialized).toBe(false);
  });
});
