import { describe, expect, test } from "bun:test";
import { adoptFastEviction, cpuFields, fastEvictionDecision, withWorkerContainerMemory } from "../../src/eviction/fast-adopt.ts";
import { rankMemoryPressure } from "../../src/eviction/rank.ts";
import { harness } from "./harness.ts";
import { at, atMs, Gi, Mi, pod, podStats, summary, thresholds } from "./helpers.ts";

const hog = pod("hog");
const small = pod("small", { requests: { memory: "100Mi" } });
const pods = () => [hog, small];
const mem = (s: number, availableMi: number) =>
  summary({
    time: at(s),
    memAvailable: availableMi * Mi,
    memWorkingSet: 3 * Gi,
    pods: [podStats(hog, { memory: 800 * Mi }, at(s)), podStats(small, { memory: 50 * Mi }, at(s))],
  });

function setup() {
  const h = harness({
    thresholds: thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: [] }),
    pods: pods(),
    killBehaviour: "keep",
  });
  return h;
}

describe("adoptFastEviction: the notifier thread's eviction recorded as the cycle would", () => {
  test("status, events, conditions, in-flight kill; the next cycle waits instead of evicting a second pod", async () => {
    const h = setup();
    await h.step(0, mem(0, 2000)); // calm: initializes the state and the last summary
    expect(h.kills).toEqual([]);
    h.clock.set(atMs(1));
    const t = h.state.thresholds[0]!;
    const report = adoptFastEviction(h.deps, h.state, {
      threshold: t,
      observation: { available: 80 * Mi, capacity: 4 * Gi, timeMs: atMs(1) },
      pod: hog,
      workingSetBytes: 800 * Mi,
      ranked: rankMemoryPressure(pods(), (p) => podStats(p, { memory: p === hog ? 800 * Mi : 50 * Mi })),
      decidedAtMs: atMs(1),
      signalled: 1,
      signalledAtMs: atMs(1) + 3,
    });
    expect(h.kills.map((k) => [k.pod, k.grace])).toEqual([["hog", 1]]);
    expect(h.kills[0]!.status.message).toBe(
      "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. Container c was using 800Mi, request is 0, has larger consumption of memory. ",
    );
    expect(h.kills[0]!.status.condition?.reason).toBe("TerminationByKubelet");
    expect(h.events.map((e) => `${e.object.kind}/${e.reason}`)).toEqual(["Node/EvictionThresholdMet", "Pod/Evicted"]);
    expect(report.conditions).toEqual(["MemoryPressure"]);
    expect(h.state.nodeConditions).toEqual(["MemoryPressure"]);
    expect(report.evicted.map((e) => e.pod.metadata.name)).toEqual(["hog"]);
    // kubelet_eviction_stats_age_seconds gets the worker's read → signal, as a cycle's stats → kill.
    expect(report.statsAgeSeconds).toEqual({ "memory.available": 0.003 });
    expect(h.logs.some((l) => l.includes("evicting pod=default/hog") && l.includes("decidedOn=notifier-thread") && l.includes("rank=1/2"))).toBe(true);
    // Still under pressure a moment later: the kill is in flight, nobody else is evicted.
    const next = await h.step(2, mem(2, 10));
    expect(next.note).toContain("waiting for eviction of default/hog");
    expect(h.kills.map((k) => k.pod)).toEqual(["hog"]);
  });

  // The manager's last cycle ran before the hog started: its summary has no stats for the hog.
  const sources: [string, (h: ReturnType<typeof setup>) => void][] = [
    [
      "its containers' memory read at adoption (containerMemory)",
      (h) => (h.deps.containerMemory = (p) => (p === hog ? [{ name: "c", memory: { time: at(1), workingSetBytes: 700 * Mi } }] : undefined)),
    ],
    [
      "the summary provider's last full summary (lastPodStats)",
      (h) => (h.deps.lastPodStats = (uid) => (uid === hog.metadata.uid ? podStats(hog, { memory: 700 * Mi }, at(1)) : undefined)),
    ],
  ];
  test.each(sources)("a victim that started after the last cycle: the message's container figure from %s", async (_n, give) => {
    const h = setup();
    await h.step(0, summary({ time: at(0), memAvailable: 2000 * Mi, memWorkingSet: 3 * Gi, pods: [podStats(small, { memory: 50 * Mi }, at(0))] }));
    give(h);
    h.clock.set(atMs(2));
    adoptFastEviction(h.deps, h.state, {
      threshold: h.state.thresholds[0]!,
      observation: { available: 80 * Mi, capacity: 4 * Gi, timeMs: atMs(2) },
      pod: hog,
      workingSetBytes: 800 * Mi,
      ranked: rankMemoryPressure(pods(), (p) => podStats(p, { memory: p === hog ? 800 * Mi : 50 * Mi })),
      decidedAtMs: atMs(2),
      signalled: 1,
    });
    expect(h.kills[0]!.status.message).toBe(
      "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. Container c was using 700Mi, request is 0, has larger consumption of memory. ",
    );
  });

  // The CRI listing cache predates the hog's container (containerMemory: undefined), the last full
  // summary has no container of it, and a read on the main thread would see its memory being freed.
  test("the worker's container figures, read before the victim's exit, make the message's container sentence", async () => {
    const h = setup();
    await h.step(0, summary({ time: at(0), memAvailable: 2000 * Mi, memWorkingSet: 3 * Gi, pods: [podStats(small, { memory: 50 * Mi }, at(0))] }));
    h.deps.containerMemory = () => undefined;
    h.deps.lastPodStats = (uid) => (uid === hog.metadata.uid ? { ...podStats(hog, { memory: 700 * Mi }, at(0)), containers: [] } : undefined);
    h.clock.set(atMs(2));
    const m = { generation: 3, thresholds: [h.state.thresholds[0]!], pods: pods(), containerNames: [["c"], ["c"]] };
    const decision = fastEvictionDecision(m, {
      fired: true,
      generation: 3,
      threshold: 0,
      available: 80 * Mi,
      capacity: 4 * Gi,
      victim: 0,
      usages: [800 * Mi, 50 * Mi],
      workingSets: [800 * Mi, 50 * Mi],
      containerWorkingSets: [790 * Mi],
      readAtMs: atMs(2),
      sentAtMs: atMs(2),
      signalled: 1,
      sent: [{ pid: 0, signal: 15 }],
    });
    expect(decision.containerWorkingSets).toEqual([{ name: "c", workingSetBytes: 790 * Mi }]);
    adoptFastEviction(h.deps, h.state, decision);
    expect(h.kills[0]!.status.message).toBe(
      "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. Container c was using 790Mi, request is 0, has larger consumption of memory. ",
    );
    // A figure read on the main thread after the signal (the victim freeing its memory) does not replace the worker's.
    expect(withWorkerContainerMemory([{ name: "c", memory: { time: at(2), workingSetBytes: 10 * Mi } }], decision.containerWorkingSets, at(2))).toEqual([
      { name: "c", memory: { time: at(2), workingSetBytes: 790 * Mi } },
    ]);
  });

  test("a cycle told the notifier thread is evicting (mayEvict false) evicts nobody", async () => {
    const h = setup();
    let asked = 0;
    h.deps.mayEvict = () => (asked++, false);
    const r = await h.step(0, mem(0, 10));
    expect(asked).toBe(1);
    expect(h.kills).toEqual([]);
    expect(r.note).toContain("notifier thread");
    h.deps.mayEvict = () => true;
    await h.step(10, mem(10, 10));
    expect(h.kills.map((k) => k.pod)).toEqual(["hog"]);
  });
});

describe("cpuFields: the deciding thread's accounting in the eviction's log line", () => {
  test.each([
    ["no accounting", undefined, {}],
    ["decision only", { decisionMs: 0.46 }, { decisionMs: "0.46" }],
    [
      "since the sleep, and the major faults up to the signal and to the victim's taking it",
      { sinceSleep: { ms: 9.064, runMs: 0, runnableMs: 8, sleepMs: 3.459 }, decisionMs: 0.46, majflt: { toSignal: 0, toTaken: 2, othersToTaken: 5 } },
      { sinceSleep: "9.064ms run=0 runnable=8 asked=3.459", decisionMs: "0.46", majflt: "toSignal=0 toTaken=2 othersToTaken=5" },
    ],
    ["faults unreadable (no /proc/thread-self/stat): left out", { decisionMs: 1, majflt: { toSignal: Number.NaN } }, { decisionMs: "1" }],
    ["a decision that did not wait for the victim", { decisionMs: 1, majflt: { toSignal: 3 } }, { decisionMs: "1", majflt: "toSignal=3" }],
  ] as const)("%s", (_name, cpu, want) => {
    expect(cpuFields(cpu as Parameters<typeof cpuFields>[0])).toEqual(want);
  });
});
