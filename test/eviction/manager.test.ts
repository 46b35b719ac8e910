import { describe, expect, test } from "bun:test";
import { createManualClock } from "../../src/manual-clock.ts";
import { createEvictionManager, type EvictionManager } from "../../src/eviction/manager.ts";
import { evictionConfig, type EvictionConfig } from "../../src/eviction/types.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";
import type { Summary } from "../../src/stats/summary.ts";
import { silent } from "./harness.ts";
import { atMs, Gi, Mi, pod, podStats, summary, thresholds } from "./helpers.ts";

interface Node {
  m: EvictionManager;
  clock: ReturnType<typeof createManualClock>;
  fetches: number;
  /** Kind of each summary asked for. */
  requests: ("full" | "memory")[];
  kills: { pod: string; grace: number; atS: number }[];
  active: PodLike[];
  availableMi: number;
  /** When set, the next summary() waits for this promise. */
  gate: Promise<void> | undefined;
  resolveKill: Map<string, () => void>;
}

function node(o: {
  config: Partial<EvictionConfig> & { thresholds: EvictionConfig["thresholds"] };
  pods: PodLike[];
  usage: Record<string, number>;
  hangKills?: boolean;
}): Node {
  const clock = createManualClock(atMs(0));
  const n: Node = {
    m: undefined as unknown as EvictionManager,
    clock,
    fetches: 0,
    requests: [],
    kills: [],
    active: [...o.pods],
    availableMi: 4096,
    gate: undefined,
    resolveKill: new Map(),
  };
  const snapshot = (): Summary => {
    const t = new Date(clock.now()).toISOString();
    return summary({
      time: t,
      memAvailable: n.availableMi * Mi,
      memWorkingSet: 2 * Gi,
      pods: n.active.map((p) => podStats(p, { memory: o.usage[p.metadata.name] ?? 0 }, t)),
    });
  };
  n.m = createEvictionManager({
    config: evictionConfig(o.config),
    clock,
    logger: silent,
    summary: async (req) => {
      n.fetches++;
      n.requests.push(req?.memoryOnly ? "memory" : "full");
      if (n.gate) {
        const g = n.gate;
        n.gate = undefined;
        await g;
      }
      return snapshot();
    },
    activePods: () => n.active,
    killPod: (p, grace) => {
      n.kills.push({ pod: p.metadata.name, grace, atS: (clock.now() - atMs(0)) / 1000 });
      if (o.hangKills) return new Promise<void>((resolve) => n.resolveKill.set(p.metadata.name, resolve));
      n.active = n.active.filter((x) => x !== p);
      return Promise.resolve();
    },
  });
  return n;
}

const hard = () => thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] });

/** Drains pending promise callbacks (kill settlement) — one macrotask turn, not a timed wait. */
const flush = () => new Promise<void>((r) => setImmediate(r));

async function advance(n: Node, ms: number) {
  // Step second by second so each timer's cycle completes before the next one fires.
  for (let done = 0; done < ms; done += 1000) {
    n.clock.advance(Math.min(1000, ms - done));
    await n.m.idle();
    await flush();
  }
}

describe("eviction manager loop", () => {
  test("synchronizes at start and every 10 s", async () => {
    const n = node({ config: { thresholds: hard() }, pods: [], usage: {} });
    n.m.start();
    await n.m.idle();
    expect(n.fetches).toBe(1);
    await advance(n, 9000);
    expect(n.fetches).toBe(1);
    await advance(n, 1000);
    expect(n.fetches).toBe(2);
    await advance(n, 20_000);
    expect(n.fetches).toBe(4);
    n.m.stop();
    expect(n.clock.pendingTimers()).toBe(0);
  });

  test("busy while a cycle runs or is queued (the notifier boost ends only when it is not)", async () => {
    const n = node({ config: { thresholds: hard() }, pods: [], usage: {} });
    n.m.start();
    await n.m.idle();
    expect(n.m.busy).toBe(false);
    n.m.trigger("memcg");
    expect(n.m.busy).toBe(true); // queued on a microtask
    let release!: () => void;
    n.gate = new Promise<void>((r) => (release = r));
    await Promise.resolve();
    expect(n.m.busy).toBe(true); // running, held by the gated summary
    release();
    await n.m.idle();
    expect(n.m.busy).toBe(false);
    n.m.stop();
  });

  /** Two BestEffort pods under a hard threshold: a uses more, so the first cycle evicts it; its kill hangs. */
  async function evictingA() {
    const a = pod("a");
    const b = pod("b");
    const n = node({ config: { thresholds: hard() }, pods: [a, b], usage: { a: Gi, b: 10 * Mi }, hangKills: true });
    n.availableMi = 50;
    n.m.start();
    await n.m.idle();
    expect(n.kills.map((k) => k.pod)).toEqual(["a"]);
    return { a, n };
  }

  test("after an eviction, the pod's cleanup seen by podsChanged() syncs at once, not at the next 1 s poll", async () => {
    const { a, n } = await evictingA();
    const fetches = n.fetches;
    n.m.podsChanged(); // a status change while the kill runs: still pending, nothing happens
    await n.m.idle();
    expect(n.fetches).toBe(fetches);
    n.active = n.active.filter((p) => p !== a);
    n.resolveKill.get("a")!();
    await flush(); // the kill settles
    n.clock.advance(50); // 50 ms later (no timer due: the cleanup poll is 1 s) its worker finished: cleanup done
    n.m.podsChanged();
    await n.m.idle();
    expect(n.fetches).toBe(fetches + 1); // the next cycle ran, ~950 ms before the poll would have
    expect(n.kills.map((k) => k.pod)).toEqual(["a", "b"]);
    n.m.podsChanged(); // b's kill is in flight now: nothing runs
    await n.m.idle();
    expect(n.fetches).toBe(fetches + 1);
    n.m.stop();
  });

  test("a cycle in between (another trigger) keeps the wait for the evicted pod's cleanup: podsChanged() still syncs at once", async () => {
    const { a, n } = await evictingA();
    n.m.trigger("memcg"); // e.g. the crossing re-posted, or a PSI trigger: a cycle that sees a's kill in flight
    await n.m.idle();
    const fetches = n.fetches;
    expect(n.kills.map((k) => k.pod)).toEqual(["a"]);
    n.active = n.active.filter((p) => p !== a);
    n.resolveKill.get("a")!();
    await flush();
    n.clock.advance(50);
    n.m.podsChanged(); // the cleanup: the next cycle at once, not with the 10 s period
    await n.m.idle();
    expect(n.fetches).toBe(fetches + 1);
    expect(n.kills.map((k) => k.pod)).toEqual(["a", "b"]);
    n.m.stop();
  });

  test("a kill that never settles: the wait ends at its 30 s, then the 10 s period (no 1 s loop)", async () => {
    const a = pod("a");
    const n = node({ config: { thresholds: hard() }, pods: [a], usage: { a: Gi }, hangKills: true });
    n.availableMi = 50;
    n.m.start();
    await n.m.idle();
    n.m.trigger("memcg");
    await n.m.idle();
    const fetches = n.fetches;
    await advance(n, 30_000); // the cleanup wait's timeout: one cycle
    const atTimeout = n.fetches;
    expect(atTimeout).toBeGreaterThan(fetches);
    await advance(n, 9_000); // then nothing until the period
    expect(n.fetches).toBe(atTimeout);
    await advance(n, 1_000);
    expect(n.fetches).toBe(atTimeout + 1);
    n.m.stop();
  });

  test("a burst of notifier triggers runs one cycle", async () => {
    const n = node({ config: { thresholds: hard() }, pods: [], usage: {} });
    n.m.start();
    await n.m.idle();
    for (let i = 0; i < 5; i++) n.m.trigger("memcg");
    await n.m.idle();
    expect(n.fetches).toBe(2);
    n.m.stop();
  });

  test("a kernel-triggered cycle asks for a memory-only summary; periodic and explicit cycles for a full one", async () => {
    const n = node({ config: { thresholds: hard() }, pods: [], usage: {} });
    n.m.start();
    await n.m.idle();
    n.m.trigger("memcg");
    await n.m.idle();
    await advance(n, 10_000);
    await n.m.synchronize();
    expect(n.requests).toEqual(["full", "memory", "full", "full"]);
    // A trigger during a full cycle: its rerun is the memory-only one.
    let release!: () => void;
    n.gate = new Promise<void>((r) => (release = r));
    const p = n.m.synchronize();
    n.m.trigger("memcg");
    release();
    await p;
    await n.m.idle();
    expect(n.requests.slice(4)).toEqual(["full", "memory"]);
    n.m.stop();
  });

  test("triggers during a running cycle schedule exactly one more", async () => {
    const n = node({ config: { thresholds: hard() }, pods: [], usage: {} });
    let release!: () => void;
    n.gate = new Promise<void>((r) => (release = r));
    n.m.start();
    await Promise.resolve();
    expect(n.fetches).toBe(1);
    n.m.trigger();
    n.m.trigger();
    n.m.trigger();
    release();
    await n.m.idle();
    expect(n.fetches).toBe(2);
    n.m.stop();
  });

  test("after an eviction the next cycle runs as soon as the pod is cleaned up, not 10 s later", async () => {
    const hog = pod("hog");
    const other = pod("other", { requests: { memory: "1Gi" } });
    const n = node({ config: { thresholds: hard() }, pods: [hog, other], usage: { hog: Gi, other: 10 * Mi } });
    n.availableMi = 50;
    n.m.start();
    await n.m.idle();
    expect(n.kills.map((k) => k.pod)).toEqual(["hog"]);
    expect(n.m.isUnderMemoryPressure()).toBe(true);
    n.availableMi = 60; // still under pressure: a second pod must go
    await advance(n, 1000);
    expect(n.kills.map((k) => [k.pod, k.atS])).toEqual([
      ["hog", 0],
      ["other", 1],
    ]);
    n.m.stop();
  });

  test("a slow soft kill does not stall a later hard eviction (upstream #123872): the hard threshold escalates it", async () => {
    const a = pod("a", { tgps: 300 });
    const b = pod("b", { tgps: 300, requests: { memory: "1Gi" } });
    const ts = thresholds({
      evictionHard: { "memory.available": "100Mi" },
      evictionSoft: { "memory.available": "500Mi" },
      evictionSoftGracePeriod: { "memory.available": "10s" },
      enforceNodeAllocatable: [],
    });
    const n = node({ config: { thresholds: ts, maxPodGracePeriodSeconds: 300 }, pods: [a, b], usage: { a: Gi, b: 10 * Mi }, hangKills: true });
    n.availableMi = 400;
    n.m.start();
    await n.m.idle();
    expect(n.kills).toEqual([]); // soft, within grace
    await advance(n, 10_000);
    expect(n.kills).toEqual([{ pod: "a", grace: 300, atS: 10 }]); // soft eviction, kill hangs for its grace period
    // While that kill runs, the loop keeps going: a soft cycle waits instead of evicting a second pod.
    await advance(n, 10_000);
    expect(n.kills).toHaveLength(1);
    // Memory collapses; the kernel notifier fires.
    n.availableMi = 50;
    n.m.trigger("memcg");
    await n.m.idle();
    expect(n.kills.at(-1)).toEqual({ pod: "a", grace: 1, atS: 20 }); // escalated, not stalled for 300 s
    // Not killed a third time while the 1 s kill is in flight.
    await advance(n, 10_000);
    expect(n.kills).toHaveLength(2);
    // The kill completes and the pod goes away: the next victim follows.
    n.active = n.active.filter((p) => p !== a);
    n.resolveKill.get("a")!();
    await advance(n, 2000);
    expect(n.kills.at(-1)).toMatchObject({ pod: "b", grace: 1 });
    n.m.stop();
  });

  test("admission and pressure predicates follow the reported conditions", async () => {
    const n = node({ config: { thresholds: hard() }, pods: [], usage: {} });
    n.availableMi = 50;
    await n.m.synchronize();
    expect(n.m.nodeConditions()).toEqual(["MemoryPressure"]);
    expect(n.m.isUnderDiskPressure()).toBe(false);
    expect(n.m.admit(pod("be")).admit).toBe(false);
    expect(n.m.admit(pod("burst", { requests: { memory: "1Mi" } })).admit).toBe(true);
    const { targets } = n.m.thresholdsForNotifier();
    expect(targets.map((t) => t.description)).toEqual(["hard memory eviction threshold"]);
  });

  test("a kernel-triggered cycle leaves the notifier re-arm to the next full cycle unless it is 20 s overdue", async () => {
    const pushes: number[] = [];
    const clock = createManualClock(atMs(0));
    const m = createEvictionManager({
      config: evictionConfig({ thresholds: hard() }),
      clock,
      logger: silent,
      summary: async () => summary({ time: new Date(clock.now()).toISOString(), memAvailable: Gi }),
      activePods: () => [],
      killPod: async () => {},
      onNotifierTargets: () => pushes.push((clock.now() - atMs(0)) / 1000),
    });
    const at = async (s: number, kind: "kernel" | "full") => {
      clock.set(atMs(s));
      if (kind === "full") await m.synchronize();
      else {
        m.trigger("memcg");
        await m.idle();
      }
    };
    await at(0, "full");
    await at(11, "kernel");
    await at(12, "full");
    await at(25, "kernel");
    await at(33, "kernel");
    expect(pushes).toEqual([0, 12, 33]);
  });

  test("notifier targets are pushed at most every 10 s", async () => {
    const pushes: number[] = [];
    const clock = createManualClock(atMs(0));
    const m = createEvictionManager({
      config: evictionConfig({ thresholds: hard() }),
      clock,
      logger: silent,
      summary: async () => summary({ time: new Date(clock.now()).toISOString(), memAvailable: Gi }),
      activePods: () => [],
      killPod: async () => {},
      onNotifierTargets: (t) => pushes.push(t[0]!.thresholdBytes),
    });
    for (const s of [0, 5, 10, 11]) {
      clock.set(atMs(s));
      await m.synchronize();
    }
    expect(pushes).toHaveLength(2); // at 0 and 11 (> 10 s later)
  });
});

describe("eviction manager loop on a simulated node", () => {
  // A tiny node model: disk usage = images + per-pod writable layers; image GC frees images.
  function diskNode(opts: { imagesGi: number; gcFrees: boolean; aGi?: number }) {
    const clock = createManualClock(atMs(0));
    const a = pod("a");
    const b = pod("b", { priority: 10 });
    const usage: Record<string, number> = { a: opts.aGi ?? 20, b: 30 };
    let images = opts.imagesGi;
    let active = [a, b];
    const kills: string[] = [];
    const reclaim: string[] = [];
    const conditions: string[][] = [];
    const snapshot = (): Summary => {
      const t = new Date(clock.now()).toISOString();
      const used = images + active.reduce((s, p) => s + usage[p.metadata.name]!, 0);
      return summary({
        time: t,
        fsAvailable: (100 - used) * Gi,
        fsCapacity: 100 * Gi,
        pods: active.map((p) => podStats(p, { rootfs: usage[p.metadata.name]! * Gi, logs: 0 }, t)),
      });
    };
    const m = createEvictionManager({
      config: evictionConfig({
        thresholds: thresholds({ evictionHard: { "nodefs.available": "10%" }, evictionMinimumReclaim: { "nodefs.available": "5Gi" } }),
      }),
      clock,
      logger: silent,
      summary: async () => snapshot(),
      activePods: () => active,
      killPod: async (p) => {
        kills.push(p.metadata.name);
        active = active.filter((x) => x !== p);
      },
      reclaim: {
        deleteUnusedContainers: async () => void reclaim.push("containers"),
        deleteUnusedImages: async () => {
          reclaim.push("images");
          if (opts.gcFrees) images = 0;
        },
      },
      onCycle: (r) => conditions.push([...r.conditions]),
    });
    return { m, clock, kills, reclaim, conditions, setImages: (g: number) => (images = g) };
  }

  test("disk pressure relieved by image GC: no pod is evicted", async () => {
    const n = diskNode({ imagesGi: 45, gcFrees: true }); // 95Gi used → 5Gi available < 10Gi
    n.m.start();
    await n.m.idle();
    expect(n.reclaim).toEqual(["containers", "images"]);
    expect(n.kills).toEqual([]);
    expect(n.conditions[0]).toEqual(["DiskPressure"]);
    n.clock.advance(10_000);
    await n.m.idle();
    expect(n.kills).toEqual([]);
    expect(n.m.isUnderDiskPressure()).toBe(true); // transition period keeps the condition
    n.m.stop();
  });

  test("image GC does not free enough: evict by priority, then hysteresis keeps going until min-reclaim is met", async () => {
    const n = diskNode({ imagesGi: 45, gcFrees: false });
    n.m.start();
    await n.m.idle();
    expect(n.kills).toEqual(["a"]); // 75Gi used → 25Gi free ≥ 15Gi: resolved
    n.clock.advance(1000); // cleanup done → immediate next cycle
    await n.m.idle();
    expect(n.kills).toEqual(["a"]);
    n.setImages(58); // 88Gi used → 12Gi free: not below 10Gi, but below 10Gi + 5Gi min-reclaim? only if acting
    n.clock.advance(10_000);
    await n.m.idle();
    expect(n.kills).toEqual(["a"]); // threshold was resolved, so min-reclaim no longer applies
    n.m.stop();
  });

  test("min-reclaim hysteresis: after one eviction 13Gi free (≥ 10Gi, < 10Gi + 5Gi) → a second pod goes", async () => {
    const n = diskNode({ imagesGi: 57, gcFrees: false, aGi: 8 }); // 95Gi used
    n.m.start();
    await n.m.idle();
    expect(n.kills).toEqual(["a"]);
    n.clock.advance(1000);
    await n.m.idle();
    expect(n.kills).toEqual(["a", "b"]);
    n.m.stop();
  });
});
