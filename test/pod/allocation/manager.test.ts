import { describe, expect, test } from "bun:test";
import { createAllocationManager, podFromAllocation, resourceInfoForPod } from "../../../src/pod/allocation/manager.ts";
import { resizeSummary } from "../../../src/pod/allocation/events.ts";
import { withDeletedConditions } from "../../../src/pod/api-status.ts";
import { resizeInProgress } from "../../../src/pod/pod-resize.ts";
import { generatePodStatus } from "../../../src/pod/status.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { makePod } from "../fake-runtime.ts";

const guaranteed = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu, memory } });
const podWith = (cpu: string, memory: string, generation = 1): Pod => {
  const p = makePod({ name: "p", containers: [{ name: "app", image: "busybox", resources: guaranteed(cpu, memory) }] });
  return { ...p, metadata: { ...p.metadata, uid: "u1", generation } };
};
const recorded: [string, string, string][] = [];
const events = { event: (_ref: unknown, type: string, reason: string, message: string) => void recorded.push([type, reason, message]) };

describe("allocation manager (upstream handlePodResourcesResize)", () => {
  test("no allocation: the pod as it is; allocated: its resources", () => {
    const m = createAllocationManager();
    const pod = podWith("200m", "64Mi");
    expect(m.updatePodFromAllocation(pod)).toEqual({ pod, updated: false });
    m.setAllocated(pod);
    const resized = podWith("300m", "96Mi", 2);
    const { pod: allocated, updated } = m.updatePodFromAllocation(resized);
    expect(updated).toBe(true);
    expect(allocated.spec.containers[0]!.resources).toEqual(guaranteed("200m", "64Mi"));
    expect(allocated.metadata.generation).toBe(2);
  });

  test("a resize that fits is allocated, InProgress set, ResizeStarted recorded", () => {
    recorded.length = 0;
    const m = createAllocationManager({ events });
    m.setAllocated(podWith("200m", "64Mi"));
    const resized = podWith("300m", "96Mi", 2);
    expect(m.handleResize(resized, [], () => ({ admit: true }), 1000)).toBe(true);
    expect(m.updatePodFromAllocation(resized).updated).toBe(false);
    expect(m.conditions.list("u1")).toEqual([
      { type: "PodResizeInProgress", status: "True", lastProbeTime: "1970-01-01T00:00:01Z", lastTransitionTime: "1970-01-01T00:00:01Z", observedGeneration: 2 },
    ]);
    expect(recorded).toEqual([["Normal", "ResizeStarted", `Pod resize started: ${resizeSummary(resized, 2)}`]]);
  });

  test.each([
    ["OutOfmemory", "Deferred", "ResizeDeferred"],
    ["Infeasible", "Infeasible", "ResizeInfeasible"],
  ])("refused with %s → PodResizePending %s, one %s event per generation", (refusal, reason, eventReason) => {
    recorded.length = 0;
    const m = createAllocationManager({ events });
    m.setAllocated(podWith("200m", "64Mi"));
    const resized = podWith("200m", "4000Gi", 2);
    const admit = () => ({ admit: false, reason: refusal, message: "Node didn't have enough resource: memory" });
    expect(m.handleResize(resized, [], admit, 1000)).toBe(false);
    expect(m.handleResize(resized, [], admit, 2000)).toBe(false);
    const [c] = m.conditions.list("u1");
    expect(c).toMatchObject({ type: "PodResizePending", status: "True", reason, message: "Node didn't have enough resource: memory", observedGeneration: 2 });
    expect(c!.lastTransitionTime).toBe("1970-01-01T00:00:01Z");
    expect(recorded.map((r) => r[1])).toEqual([eventReason]);
    expect(recorded[0]![2]).toStartWith(`Pod resize ${reason}: {"containers":[{"name":"app","resources":{"limits":{"cpu":"200m","memory":"4000Gi"}`);
    // Reverted to the allocation: the condition goes.
    m.handleResize(podWith("200m", "64Mi", 3), [], admit, 3000);
    expect(m.conditions.list("u1")).toEqual([]);
  });

  test("podFromAllocation leaves containers without an allocation alone", () => {
    const pod = podWith("1", "1Gi");
    expect(podFromAllocation(pod, { containers: {} }).pod).toBe(pod);
    expect(resourceInfoForPod(pod)).toEqual({ containers: { app: guaranteed("1", "1Gi") } });
  });
});

describe("resize in progress (upstream isContainerResourceResizeInProgress)", () => {
  const pod = podWith("500m", "128Mi");
  test.each([
    ["actuated equal, other spelling", guaranteed("0.5", "134217728"), new Set(["app"]), false],
    ["actuated differs", guaranteed("200m", "128Mi"), new Set(["app"]), true],
    ["not running", guaranteed("200m", "128Mi"), new Set<string>(), false],
  ])("%s", (_n, actuated, running, want) => expect(resizeInProgress(pod, running, () => actuated)).toBe(want));
});

describe("status", () => {
  test("allocatedResources, resources as actuated, resize conditions, observedGeneration", () => {
    const pod = podWith("300m", "96Mi", 4);
    const runtime = {
      uid: "u1",
      name: "p",
      namespace: "default",
      sandboxes: [{ id: "s", attempt: 0, state: "ready" as const, createdAtMs: 0 }],
      containers: [{ id: "c", name: "app", image: "busybox", state: "running" as const, createdAtMs: 1, startedAtMs: 1, finishedAtMs: 0, attempt: 0 }],
    };
    const inProgress = { type: "PodResizeInProgress", status: "True" as const, lastProbeTime: null, lastTransitionTime: "t", observedGeneration: 4 };
    const s = generatePodStatus({ pod, runtime, nowMs: 0, resize: { actuated: () => guaranteed("0.2", "64Mi"), conditions: [inProgress] } });
    expect(s.containerStatuses![0]!.allocatedResources).toEqual({ cpu: "300m", memory: "96Mi" });
    expect(s.containerStatuses![0]!.resources).toEqual(guaranteed("200m", "64Mi"));
    expect(s.conditions!.at(-1)).toEqual(inProgress);
    expect(s.observedGeneration).toBe(4);
  });
  test("a condition sent before and gone now is deleted by the patch", () => {
    const status = { phase: "Running" as const, conditions: [{ type: "Ready", status: "True" as const, lastProbeTime: null, lastTransitionTime: "t" }] };
    expect(withDeletedConditions(status, ["Ready"])).toBe(status);
    expect(withDeletedConditions(status, ["Ready", "PodResizePending"]).conditions!.at(-1)).toEqual({ type: "PodResizePending", $patch: "delete" } as never);
  });
});
