import { describe, expect, test } from "bun:test";
import type { CycleReport, Threshold } from "../../src/eviction/index.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { type EvictionTraceRecord, isoMicros } from "../../src/eviction/trace-record.ts";
import { createEvictionTracer } from "../../src/wire/trace.ts";
import { Mi, pod } from "../eviction/helpers.ts";

const threshold: Threshold = {
  signal: "allocatableMemory.available",
  operator: "LessThan",
  value: { quantity: { nanos: 200n * BigInt(Mi) * 1_000_000_000n, format: "BinarySI" } as never },
  gracePeriodMs: 0,
} as Threshold;
const hog = pod("hog");

function report(timeMs: number, o: { available: number; met: boolean; evict?: boolean }): CycleReport {
  return {
    timeMs,
    observations: { "allocatableMemory.available": { available: o.available, capacity: 512 * Mi, timeMs } },
    thresholds: [threshold],
    met: o.met ? [threshold] : [],
    actionable: o.met ? [threshold] : [],
    actionableFresh: o.met ? [threshold] : [],
    conditions: o.met ? ["MemoryPressure"] : [],
    reclaim: null,
    nodeReclaim: null,
    ranked: o.evict ? [{ pod: hog, priority: 0, usage: 300 * Mi, request: 0, exceedsRequest: true, found: true, qos: "BestEffort" } as never] : [],
    evicted: o.evict
      ? [{ pod: hog, signal: "allocatableMemory.available", gracePeriodSeconds: 1, message: "The node was low on resource: memory. ", annotations: {} }]
      : [],
  } as CycleReport;
}

function harness(opts: { recoveryTimeoutMs?: number } = {}) {
  let now = 1_000_000;
  const lines: string[] = [];
  const metrics = createRegistry();
  const tracer = createEvictionTracer({ now: () => now, write: (l) => void lines.push(l), metrics, recoveryTimeoutMs: opts.recoveryTimeoutMs });
  let finishKill!: () => void;
  const kill = tracer.wrapKillPod(() => new Promise<void>((r) => (finishKill = r)));
  return {
    tracer,
    lines,
    metrics,
    set: (ms: number) => (now = ms),
    kill: () => kill(hog, 1, { reason: "Evicted", message: "The node was low on resource: memory. ", annotations: {} }),
    finishKill: () => finishKill(),
    records: () => lines.map((l) => JSON.parse(l) as EvictionTraceRecord),
  };
}

const firstObservedAt = (ms: number) => ({ firstObservedAt: new Map([[threshold, ms]]) });

describe("eviction tracer", () => {
  test("kernel-triggered eviction: every timestamp, latencies from the kernel event, histogram observed", async () => {
    const h = harness();
    h.set(1_000_000);
    h.tracer.onKernelEvent("hard allocatable memory eviction threshold");
    h.set(1_000_006.5);
    const killed = h.kill(); // decision, inside the cycle that started at 1_000_000.5
    h.tracer.onStopContainer({ containerId: "c1", podUid: "uid-hog", phase: "sent", atMs: 1_000_009 });
    h.tracer.onCycle(report(1_000_000.5, { available: 199 * Mi, met: true, evict: true }), firstObservedAt(1_000_000.5));
    expect(h.lines).toHaveLength(0);
    // Memory back below the threshold before the container's stop returned: written only after both.
    h.tracer.onCycle(report(1_000_040, { available: 400 * Mi, met: false }), { firstObservedAt: new Map() });
    expect(h.lines).toHaveLength(0);
    h.tracer.onStopContainer({ containerId: "c1", podUid: "uid-hog", phase: "done", atMs: 1_000_130 });
    h.set(1_000_131);
    h.finishKill();
    await killed;
    await h.tracer.close();
    const [r] = h.records();
    expect(r).toMatchObject({
      kind: "eviction",
      pod: "default/hog",
      uid: "uid-hog",
      signal: "allocatableMemory.available",
      observed: "199Mi",
      observedValue: 199 * Mi,
      threshold: "200Mi",
      gracePeriodSeconds: 1,
      trigger: { kind: "kernel", reason: "hard allocatable memory eviction threshold" },
      timestamps: {
        thresholdCrossed: isoMicros(1_000_000),
        decision: isoMicros(1_000_006.5),
        stopSignalSent: isoMicros(1_000_009),
        containerExited: isoMicros(1_000_130),
        memoryBelowThreshold: isoMicros(1_000_040),
      },
      latencyMs: { decision: 6.5, stopSignalSent: 9, containerExited: 130, belowThreshold: 40, detectionToSignal: 9 },
      nodeConditions: ["MemoryPressure"],
    });
    expect(r!.ranked.map((x) => x.pod)).toEqual(["default/hog"]);
    const text = h.metrics.render();
    expect(text).toContain('bunlet_eviction_detection_to_signal_seconds_count{eviction_signal="allocatableMemory.available"} 1');
    expect(text).toContain('bunlet_eviction_detection_to_signal_seconds_bucket{eviction_signal="allocatableMemory.available",le="0.01"} 1');
    expect(text).toContain('bunlet_eviction_detection_to_signal_seconds_bucket{eviction_signal="allocatableMemory.available",le="0.005"} 0');
  });

  test("the crossing is stamped when the notifier thread woke (now − lag), not when the main thread saw it", async () => {
    const h = harness();
    h.set(5_000_000.75);
    h.tracer.onKernelEvent("hard allocatable memory eviction threshold", 0.75);
    h.set(5_000_002);
    const killed = h.kill();
    h.tracer.onStopContainer({ containerId: "c1", podUid: "uid-hog", phase: "sent", atMs: 5_000_003 });
    h.tracer.onStopContainer({ containerId: "c1", podUid: "uid-hog", phase: "done", atMs: 5_000_020 });
    h.tracer.onCycle(report(5_000_001, { available: 150 * Mi, met: true, evict: true }), firstObservedAt(5_000_001));
    h.tracer.onCycle(report(5_000_030, { available: 300 * Mi, met: false }), { firstObservedAt: new Map() });
    h.finishKill();
    await killed;
    await h.tracer.close();
    const [r] = h.records();
    expect(r!.timestamps.thresholdCrossed).toBe(isoMicros(5_000_000)!);
    expect(r!.latencyMs).toMatchObject({ decision: 2, stopSignalSent: 3, detectionToSignal: 3 });
  });

  // The v2 working-set thread waits for the victim to take its signal (a time, or null: not seen in its
  // wait); the v1 epoll worker does not wait, and its records carry no signalTaken at all.
  test.each([
    ["v2, taken", 7_000_012, { signalTaken: 12 }],
    ["v2, not seen within the wait", null, { signalTaken: null }],
    ["v1, no wait", undefined, {}],
  ] as const)("notifier-thread eviction, %s", async (_n, taken, want) => {
    const h = harness();
    h.set(7_000_000);
    h.tracer.onKernelEvent("hard allocatable memory eviction threshold");
    h.set(7_000_001);
    const killed = h.kill();
    h.tracer.onNotifierThreadEviction("uid-hog", { wokeAtMs: 7_000_000, decisionMs: 7_000_000.5, stopSentMs: 7_000_001, signalTakenMs: taken });
    h.tracer.onStopContainer({ containerId: "c1", podUid: "uid-hog", phase: "done", atMs: 7_000_040 });
    h.tracer.onCycle(report(7_000_000.2, { available: 150 * Mi, met: true, evict: true }), firstObservedAt(7_000_000.2));
    h.tracer.onCycle(report(7_000_050, { available: 300 * Mi, met: false }), { firstObservedAt: new Map() });
    h.finishKill();
    await killed;
    await h.tracer.close();
    const [r] = h.records();
    expect(r!.decidedBy).toBe("notifier-thread");
    const { signalTaken, ...rest } = r!.latencyMs;
    expect(signalTaken === undefined ? {} : { signalTaken }).toEqual(want);
    expect(rest.stopSignalSent).toBe(1);
  });

  test("periodic eviction: crossing is the threshold's first observation, detection the cycle start", async () => {
    const h = harness();
    h.set(2_000_010);
    const killed = h.kill();
    h.tracer.onStopContainer({ containerId: "c1", podUid: "uid-hog", phase: "sent", atMs: 2_000_012 });
    h.tracer.onStopContainer({ containerId: "c1", podUid: "uid-hog", phase: "done", atMs: 2_000_100 });
    h.tracer.onCycle(report(2_000_000, { available: 150 * Mi, met: true, evict: true }), firstObservedAt(1_990_000));
    h.tracer.onCycle(report(2_001_000, { available: 300 * Mi, met: false }), { firstObservedAt: new Map() });
    h.finishKill();
    await killed;
    await h.tracer.close();
    const [r] = h.records();
    expect(r!.trigger).toEqual({ kind: "periodic" });
    expect(r!.timestamps.thresholdCrossed).toBe(isoMicros(1_990_000)!);
    expect(r!.latencyMs.detectionToSignal).toBe(12);
    expect(r!.latencyMs.belowThreshold).toBe(11_000);
  });

  test("kernel events received out of order: one that happened before the decision is its trigger, though a later one came first", async () => {
    const h = harness();
    // A PSI event at 8_000_010 is received first; the working-set crossing of 8_000_000 (its thread waited
    // for the victim) is received at 8_000_020, with a 20 ms lag. The thread decided at 8_000_002.
    h.set(8_000_010);
    h.tracer.onKernelEvent("PSI memory some");
    h.set(8_000_020);
    h.tracer.onKernelEvent("hard allocatable memory eviction threshold", 20);
    const killed = h.kill();
    h.tracer.onCycle(report(8_000_002, { available: 150 * Mi, met: true, evict: true }), firstObservedAt(8_000_002));
    h.tracer.onNotifierThreadEviction("uid-hog", { wokeAtMs: 8_000_001, decisionMs: 8_000_002, stopSentMs: 8_000_002.1, signalTakenMs: 8_000_005 });
    h.tracer.onStopContainer({ containerId: "c1", podUid: "uid-hog", phase: "done", atMs: 8_000_040 });
    h.tracer.onCycle(report(8_000_050, { available: 300 * Mi, met: false }), { firstObservedAt: new Map() });
    h.finishKill();
    await killed;
    await h.tracer.close();
    const [r] = h.records();
    expect(r!.trigger).toEqual({ kind: "kernel", reason: "hard allocatable memory eviction threshold" });
    expect(r!.timestamps.thresholdCrossed).toBe(isoMicros(8_000_000)!);
  });

  // As the manager's adopt() runs them: its cycle record first, then the thread's times. The crossing's
  // event is stamped on the main thread's clock (now − lag), here 0.3 ms after the thread's own decision
  // stamp (the skew between the two threads' clocks in the one-CPU v2 guest), so the cycle matches no
  // event; the record is still the kernel's, with the thread's wake-up as its detection.
  test("notifier-thread eviction whose event is stamped after its decision: still kernel-triggered, detected at the wake-up", async () => {
    const h = harness();
    h.set(9_000_020);
    h.tracer.onKernelEvent("hard allocatable memory eviction threshold", 19.4); // 9_000_000.6
    const killed = h.kill();
    h.tracer.onCycle(report(9_000_000.3, { available: 150 * Mi, met: true, evict: true }), firstObservedAt(9_000_000.3));
    h.tracer.onNotifierThreadEviction("uid-hog", { wokeAtMs: 9_000_000, decisionMs: 9_000_000.3, stopSentMs: 9_000_000.4, signalTakenMs: 9_000_004 });
    h.tracer.onStopContainer({ containerId: "c1", podUid: "uid-hog", phase: "done", atMs: 9_000_040 });
    h.tracer.onCycle(report(9_000_050, { available: 300 * Mi, met: false }), { firstObservedAt: new Map() });
    h.finishKill();
    await killed;
    await h.tracer.close();
    const [r] = h.records();
    expect(r!.trigger).toEqual({ kind: "kernel", reason: "hard allocatable memory eviction threshold" });
    expect(r!.timestamps.thresholdCrossed).toBe(isoMicros(9_000_000)!);
    expect(r!.latencyMs.detectionToSignal).toBeCloseTo(0.4, 6);
  });

  test("a kernel event after the cycle started belongs to the next cycle", async () => {
    const h = harness();
    h.set(3_000_005);
    h.tracer.onKernelEvent("late");
    h.set(3_000_006);
    const killed = h.kill();
    h.tracer.onCycle(report(3_000_000, { available: 150 * Mi, met: true, evict: true }), firstObservedAt(3_000_000));
    h.finishKill();
    await killed;
    await h.tracer.close();
    expect(h.records()[0]!.trigger).toEqual({ kind: "periodic" });
  });

  test("memory never recovering: the record is written after the timeout with memoryBelowThreshold null", async () => {
    const h = harness({ recoveryTimeoutMs: 5_000 });
    h.set(4_000_001);
    const killed = h.kill();
    h.finishKill();
    await killed;
    h.tracer.onCycle(report(4_000_000, { available: 150 * Mi, met: true, evict: true }), firstObservedAt(4_000_000));
    h.tracer.onCycle(report(4_003_000, { available: 150 * Mi, met: true }), firstObservedAt(4_000_000));
    expect(h.lines).toHaveLength(0);
    h.tracer.onCycle(report(4_006_000, { available: 150 * Mi, met: true }), firstObservedAt(4_000_000));
    await h.tracer.close();
    const [r] = h.records();
    expect(r!.timestamps.memoryBelowThreshold).toBeNull();
    expect(r!.latencyMs.belowThreshold).toBeNull();
    expect(r!.timestamps.stopSignalSent).toBeNull();
  });

  test("stop events of other pods and kills without a cycle record leave no trace; close() flushes open records", async () => {
    const h = harness();
    h.tracer.onStopContainer({ containerId: "x", podUid: "someone-else", phase: "sent", atMs: 1 });
    h.set(5_000_001);
    void h.kill();
    await h.tracer.close();
    const [r] = h.records();
    expect(r!.signal).toBe("unknown");
    expect(h.records()).toHaveLength(1);
  });
});
