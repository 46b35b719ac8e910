import { describe, expect, test } from "bun:test";
import { createPodWorkers, type PodSyncer, type SyncResult } from "../../src/pod/pod-workers.ts";
import type { Pod } from "../../src/pod/types.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { makePod } from "./fake-runtime.ts";

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function recordingSyncer(opts: { gate?: () => Promise<void>; result?: (pod: Pod) => SyncResult } = {}) {
  const log: string[] = [];
  let active = 0;
  let maxActive = 0;
  const wrap = async (what: string, fn?: () => SyncResult) => {
    active++;
    maxActive = Math.max(maxActive, active);
    log.push(`${what}:start`);
    await (opts.gate?.() ?? Promise.resolve());
    log.push(`${what}:end`);
    active--;
    return fn?.() ?? {};
  };
  const syncer: PodSyncer = {
    syncPod: (pod) => wrap(`sync ${pod.spec.containers[0]!.image}`, () => opts.result?.(pod) ?? {}),
    syncTerminatingPod: (_pod, grace) => wrap(`terminating grace=${grace}`).then(() => undefined),
    syncTerminatedPod: () => wrap("terminated").then(() => undefined),
  };
  return { syncer, log, max: () => maxActive };
}

const podWithImage = (image: string, grace = 30) =>
  makePod({ name: "p", uid: "u1", containers: [{ name: "app", image }], spec: { terminationGracePeriodSeconds: grace } });

describe("pod workers", () => {
  test("updates for one pod are serialized and collapse to the newest", async () => {
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const r = recordingSyncer({
      gate: () => {
        const d = deferred();
        gates.push(d);
        return d.promise;
      },
    });
    const w = createPodWorkers({ syncer: r.syncer, clock: createSettlingClock() });
    w.updatePod({ type: "create", pod: podWithImage("v1") });
    w.updatePod({ type: "update", pod: podWithImage("v2") });
    w.updatePod({ type: "update", pod: podWithImage("v3") });
    await Bun.sleep(0);
    expect(gates).toHaveLength(1);
    gates[0]!.resolve();
    while (gates.length < 2) await Bun.sleep(0);
    gates[1]!.resolve();
    await w.whenIdle();
    expect(r.log).toEqual(["sync v1:start", "sync v1:end", "sync v3:start", "sync v3:end"]);
    expect(r.max()).toBe(1);
  });

  test("kill: grace period override only shortens; finished pods are never synced again", async () => {
    const r = recordingSyncer();
    const finished: string[] = [];
    const w = createPodWorkers({ syncer: r.syncer, clock: createSettlingClock(), onFinished: (p) => finished.push(p.metadata.uid) });
    w.updatePod({ type: "create", pod: podWithImage("v1", 20) });
    await w.whenIdle();
    let done = false;
    w.updatePod({ type: "kill", pod: podWithImage("v1", 20), kill: { gracePeriodOverrideSeconds: 60, onDone: () => (done = true) } });
    await w.whenIdle();
    expect(done).toBe(true);
    expect(w.state("u1")).toBe("finished");
    expect(finished).toEqual(["u1"]);
    w.updatePod({ type: "sync", pod: podWithImage("v1", 20) });
    await w.whenIdle();
    expect(r.log).toEqual(["sync v1:start", "sync v1:end", "terminating grace=20:start", "terminating grace=20:end", "terminated:start", "terminated:end"]);
    w.syncKnownPods(new Set(["u1"]));
    expect(w.state("u1")).toBe("finished");
    w.syncKnownPods(new Set());
    expect(w.state("u1")).toBeUndefined();
  });

  test.each([
    [5, 30, 5],
    [0, 30, 1], // never under 1 s (upstream: "no matter what, we always supply a grace period of 1")
    [1, 0, 1],
    [undefined, 0, 1],
    [undefined, 12, 12],
  ])("override %p with pod grace %p → %p", async (override, grace, want) => {
    const r = recordingSyncer();
    const w = createPodWorkers({ syncer: r.syncer, clock: createSettlingClock() });
    w.updatePod({ type: "kill", pod: podWithImage("v1", grace), kill: { gracePeriodOverrideSeconds: override } });
    await w.whenIdle();
    expect(r.log).toContain(`terminating grace=${want}:start`);
  });

  test.each([
    [5, undefined, 30, 5],
    [60, undefined, 30, 30], // never lengthens the pod's own period
    [0, undefined, 30, 1],
    [10, 3, 30, 3], // an eviction's shorter override still wins
  ])("API deletion with deletionGracePeriodSeconds %p (override %p, pod grace %p) → %p", async (deletion, override, grace, want) => {
    const r = recordingSyncer();
    const w = createPodWorkers({ syncer: r.syncer, clock: createSettlingClock() });
    const pod = podWithImage("v1", grace);
    w.updatePod({ type: "create", pod });
    await w.whenIdle();
    const deleted = { ...pod, metadata: { ...pod.metadata, deletionTimestamp: "2026-01-01T00:00:00Z", deletionGracePeriodSeconds: deletion } };
    w.updatePod({ type: "kill", pod: deleted, kill: override === undefined ? undefined : { gracePeriodOverrideSeconds: override } });
    await w.whenIdle();
    expect(r.log).toContain(`terminating grace=${want}:start`);
  });

  test("a kill arriving during a sync does not wait for it: the sync is aborted, termination starts at once, and one more pass follows the sync", async () => {
    const gate = deferred();
    let first = true;
    const r = recordingSyncer({ gate: () => (first ? ((first = false), gate.promise) : Promise.resolve()) });
    let signal: AbortSignal | undefined;
    const syncPod = r.syncer.syncPod;
    r.syncer.syncPod = (pod, type, s) => ((signal = s), syncPod(pod, type, s));
    const w = createPodWorkers({ syncer: r.syncer, clock: createSettlingClock() });
    w.updatePod({ type: "create", pod: podWithImage("v1") });
    await Bun.sleep(0);
    expect(signal?.aborted).toBe(false);
    w.updatePod({ type: "kill", pod: podWithImage("v1"), kill: { gracePeriodOverrideSeconds: 1 } });
    expect(w.isTerminationRequested("u1")).toBe(true);
    expect(signal?.aborted).toBe(true);
    // Started in the kill's own tick, while the sync still runs.
    expect(r.log).toEqual(["sync v1:start", "terminating grace=1:start"]);
    await Bun.sleep(0);
    gate.resolve();
    await w.whenIdle();
    expect(r.log).toEqual([
      "sync v1:start",
      "terminating grace=1:start",
      "terminating grace=1:end",
      "sync v1:end",
      "terminating grace=1:start",
      "terminating grace=1:end",
      "terminated:start",
      "terminated:end",
    ]);
    expect(w.state("u1")).toBe("finished");
  });

  test("an idle pod's kill reaches the syncer in the caller's tick", () => {
    const r = recordingSyncer({ gate: () => new Promise<void>(() => {}) });
    const w = createPodWorkers({ syncer: r.syncer, clock: createSettlingClock() });
    w.updatePod({ type: "kill", pod: podWithImage("v1"), kill: { gracePeriodOverrideSeconds: 0 } });
    expect(r.log).toEqual(["terminating grace=1:start"]);
  });

  test("a kill with a shorter grace period restarts a running termination with it; a kill no shorter does not", async () => {
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const r = recordingSyncer({
      gate: () => {
        const d = deferred();
        gates.push(d);
        return d.promise;
      },
    });
    let done = 0;
    const w = createPodWorkers({ syncer: r.syncer, clock: createSettlingClock() });
    w.updatePod({ type: "kill", pod: podWithImage("v1", 300), kill: { gracePeriodOverrideSeconds: 300, onDone: () => done++ } });
    w.updatePod({ type: "kill", pod: podWithImage("v1", 300), kill: { gracePeriodOverrideSeconds: 300, onDone: () => done++ } });
    w.updatePod({ type: "kill", pod: podWithImage("v1", 300), kill: { gracePeriodOverrideSeconds: 1, onDone: () => done++ } });
    w.updatePod({ type: "kill", pod: podWithImage("v1", 300), kill: { gracePeriodOverrideSeconds: 1, onDone: () => done++ } });
    expect(r.log).toEqual(["terminating grace=300:start", "terminating grace=1:start"]);
    // The short one ends first (the container is dead); the long call returns then too.
    gates[1]!.resolve();
    gates[0]!.resolve();
    while (gates.length < 3) await Bun.sleep(0);
    gates[2]!.resolve();
    await w.whenIdle();
    expect(r.log.filter((l) => l.endsWith(":start"))).toEqual(["terminating grace=300:start", "terminating grace=1:start", "terminated:start"]);
    expect(done).toBe(4);
    expect(w.state("u1")).toBe("finished");
  });

  test("a terminal sync result terminates the pod; retry results resync after the back-off period", async () => {
    const clock = createSettlingClock();
    let n = 0;
    const r = recordingSyncer({ result: () => (++n < 3 ? { retry: true } : { terminal: true }) });
    const w = createPodWorkers({ syncer: r.syncer, clock, errorRetryMs: 10_000 });
    w.updatePod({ type: "create", pod: podWithImage("v1") });
    await w.whenIdle();
    expect(n).toBe(1);
    await clock.advance(9_999);
    expect(n).toBe(1);
    await clock.advance(1);
    await w.whenIdle();
    expect(n).toBe(2);
    await clock.advance(10_000);
    await w.whenIdle();
    expect(n).toBe(3);
    expect(w.state("u1")).toBe("finished");
  });

  test("a retry with its own delay (a volume set-up that failed) resyncs that soon, not after the back-off period", async () => {
    const clock = createSettlingClock();
    let n = 0;
    const r = recordingSyncer({ result: () => (++n < 3 ? { retry: true, retryAfterMs: 500 * n } : {}) });
    const w = createPodWorkers({ syncer: r.syncer, clock, errorRetryMs: 10_000 });
    w.updatePod({ type: "create", pod: podWithImage("v1") });
    await w.whenIdle();
    await clock.advance(499);
    expect(n).toBe(1);
    await clock.advance(1);
    await w.whenIdle();
    expect(n).toBe(2);
    await clock.advance(1_000);
    await w.whenIdle();
    expect(n).toBe(3);
    await clock.advance(60_000);
    await w.whenIdle();
    expect(n).toBe(3); // synced cleanly: no more retries
  });

  test("a throwing sync is logged and retried, other pods unaffected", async () => {
    const clock = createSettlingClock();
    let calls = 0;
    const syncer: PodSyncer = {
      syncPod: async (pod) => {
        calls++;
        if (pod.metadata.uid === "bad" && calls < 3) throw new Error("boom");
        return {};
      },
      syncTerminatingPod: async () => {},
      syncTerminatedPod: async () => {},
    };
    const w = createPodWorkers({ syncer, clock, errorRetryMs: 1000 });
    w.updatePod({ type: "create", pod: makePod({ name: "bad", uid: "bad" }) });
    w.updatePod({ type: "create", pod: makePod({ name: "good", uid: "good" }) });
    await w.whenIdle();
    await clock.advance(1000);
    await w.whenIdle();
    expect(w.state("good")).toBe("syncing");
    expect(calls).toBe(3);
  });
});
