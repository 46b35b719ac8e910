import { describe, expect, test } from "bun:test";
import { admitPredicates, predicateAdmitHandler, type AdmissionNode } from "../../src/pod/admit-predicate.ts";
import type { KillPodRequest } from "../../src/pod/lifecycle-types.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";
import { criticalPodAdmissionHandler, PREEMPTED_MESSAGE } from "../../src/pod/preemption-handler.ts";
import { getPodsToPreempt, preemptable, requirementDistance, subtractRequirements, type AdmissionRequirement } from "../../src/pod/preemption.ts";

const Mi = 1024 * 1024;
type Res = { cpu: string; memory: string };
function pod(name: string, requests?: Res, limits?: Res, extra: { priority?: number; annotations?: Record<string, string> } = {}): PodLike {
  const resources = requests || limits ? { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } : undefined;
  return {
    metadata: { name, namespace: "default", uid: `uid-${name}`, annotations: extra.annotations },
    spec: {
      containers: [{ name: "c", image: "i", ...(resources ? { resources } : {}) }],
      ...(extra.priority !== undefined ? { priority: extra.priority } : {}),
    },
  } as unknown as PodLike;
}
const r = (cpu: string, memory: string): Res => ({ cpu, memory });

// The cast of upstream's preemption tests: one pod per QoS class, and larger ones.
const critical = pod("critical", r("100m", "100Mi"), undefined, { priority: 2_000_000_000 });
const bestEffort = pod("bestEffort");
const burstable = pod("burstable", r("100m", "100Mi"));
const guaranteed = pod("guaranteed", r("100m", "100Mi"), r("100m", "100Mi"));
const highRequestBurstable = pod("high-request-burstable", r("300m", "300Mi"));
const highRequestGuaranteed = pod("high-request-guaranteed", r("300m", "300Mi"), r("300m", "300Mi"));

/** Requirements as upstream's tests write them: cpu millicores, memory Mi, pod count (0 = none). */
function reqs(cpuMilli: number, memoryMi: number, pods: number): AdmissionRequirement[] {
  const out: AdmissionRequirement[] = [];
  if (cpuMilli > 0) out.push({ resourceName: "cpu", quantity: cpuMilli });
  if (memoryMi > 0) out.push({ resourceName: "memory", quantity: memoryMi * Mi });
  if (pods > 0) out.push({ resourceName: "pods", quantity: pods });
  return out;
}
const names = (ps: PodLike[]) => ps.map((p) => p.metadata.name).sort();

describe("getPodsToPreempt (upstream's selection)", () => {
  test.each([
    ["no requirements", [], reqs(0, 0, 0), []],
    ["equal requests and requirements", [burstable], reqs(100, 100, 1), ["burstable"]],
    ["BestEffort before Burstable", [burstable, bestEffort], reqs(0, 0, 1), ["bestEffort"]],
    ["Burstable before Guaranteed", [burstable, guaranteed], reqs(0, 0, 1), ["burstable"]],
    ["the smaller Burstable pod when it is enough", [bestEffort, highRequestBurstable, burstable], reqs(100, 100, 0), ["burstable"]],
    ["the larger Burstable pod when the smaller is not enough", [bestEffort, burstable, highRequestBurstable], reqs(150, 150, 0), ["high-request-burstable"]],
    [
      "several pods when one is not enough",
      [bestEffort, burstable, highRequestBurstable, guaranteed, highRequestGuaranteed],
      reqs(350, 350, 0),
      ["burstable", "high-request-burstable"],
    ],
    [
      "a Guaranteed pod only when needed, and no extra Burstable one",
      [bestEffort, burstable, highRequestBurstable, guaranteed, highRequestGuaranteed],
      reqs(0, 550, 0),
      ["high-request-burstable", "high-request-guaranteed"],
    ],
    [
      "critical pods are never chosen",
      [critical, bestEffort, burstable, highRequestBurstable, guaranteed, highRequestGuaranteed],
      reqs(0, 550, 0),
      ["high-request-burstable", "high-request-guaranteed"],
    ],
  ] as const)("%s", (_what, pods, requirements, expected) => {
    expect(names(getPodsToPreempt(critical, [...pods], [...requirements]))).toEqual([...expected].sort());
  });

  test.each([
    ["no pods", [], reqs(0, 0, 1), "no set of running pods found to reclaim resources: [(res: pods, q: 1), ]"],
    [
      "more than all pods request",
      [burstable],
      reqs(200, 200, 2),
      "no set of running pods found to reclaim resources: [(res: cpu, q: 100), (res: memory, q: 104857600), (res: pods, q: 1), ]",
    ],
    ["only critical pods", [critical], reqs(0, 0, 1), "no set of running pods found to reclaim resources: [(res: pods, q: 1), ]"],
    ["BestEffort pods free no memory", [bestEffort], reqs(0, 1, 0), "no set of running pods found to reclaim resources: [(res: memory, q: 1048576), ]"],
  ] as const)("fails: %s", (_what, pods, requirements, message) => {
    expect(() => getPodsToPreempt(critical, [...pods], [...requirements])).toThrow(message);
  });

  test("a pod of higher (non-critical) priority preempts lower ones only", () => {
    const high = pod("high", undefined, undefined, { priority: 1000 });
    const low = pod("low", r("100m", "100Mi"), undefined, { priority: 10 });
    const same = pod("same", r("100m", "100Mi"), undefined, { priority: 1000 });
    expect([preemptable(high, low), preemptable(high, same), preemptable(high, pod("unset"))]).toEqual([true, false, false]);
    expect(preemptable(pod("static", undefined, undefined, { annotations: { "kubernetes.io/config.source": "file" } }), same)).toBe(true);
  });

  test.each([
    ["no requirements", reqs(0, 0, 0), burstable, 0],
    ["no requests", reqs(100, 100, 1), bestEffort, 2],
    ["requests meet them", reqs(100, 100, 1), burstable, 0],
    ["half of each", reqs(200, 200, 0), burstable, 0.5],
  ] as const)("distance: %s", (_what, requirements, p, expected) => {
    expect(requirementDistance([...requirements], p)).toBe(expected);
  });

  test.each([
    ["nothing to subtract from", reqs(0, 0, 0), bestEffort, reqs(0, 0, 0)],
    ["no requests", reqs(100, 100, 1), bestEffort, reqs(100, 100, 0)],
    ["requests meet them", reqs(100, 100, 1), burstable, []],
    ["requests fall short", reqs(200, 200, 1), burstable, reqs(100, 100, 0)],
  ] as const)("subtract: %s", (_what, initial, p, expected) => {
    expect(subtractRequirements([...initial], [p])).toEqual([...expected]);
  });
});

describe("critical pod admission (predicate failures → preemption)", () => {
  const node: AdmissionNode = { name: "n1", labels: { "kubernetes.io/os": "linux" }, taints: [], allocatable: { cpu: "1", memory: "1Gi", pods: "110" } };
  const full: AdmissionNode = { ...node, allocatable: { ...node.allocatable, pods: "3" } };
  const setup = (fail = false) => {
    const killed: { name: string; req: KillPodRequest }[] = [];
    const events: string[] = [];
    const signals: string[] = [];
    const handler = criticalPodAdmissionHandler({
      killPod: async (p, req) => {
        killed.push({ name: p.metadata.name, req });
        if (fail) throw new Error("runtime down");
      },
      events: { event: (ref, type, reason, message) => events.push(`${type} ${reason} ${ref.name}: ${message}`) },
      onPreempted: (s) => signals.push(s),
    });
    return { killed, events, signals, handler };
  };
  const running = [bestEffort, burstable, highRequestBurstable];

  test("a critical pod short of memory preempts the fewest pods, then is admitted once they stopped", async () => {
    const { killed, events, signals, handler } = setup();
    const big = pod("kube-proxy", r("100m", "800Mi"), undefined, { priority: 2_000_001_000 });
    const verdict = admitPredicates(big, running, node, handler);
    expect(verdict.admit).toBe(true);
    expect(killed.map((k) => k.name)).toEqual(["high-request-burstable"]);
    expect(killed[0]!.req).toEqual({
      reason: "Preempting",
      message: "Preempted in order to admit critical pod",
      condition: {
        type: "DisruptionTarget",
        status: "True",
        reason: "TerminationByKubelet",
        message: "Pod was preempted by Kubelet to accommodate a critical pod.",
      },
    });
    expect(events).toEqual([`Warning Preempting high-request-burstable: ${PREEMPTED_MESSAGE}`]);
    await (verdict as { waitFor?: Promise<unknown> }).waitFor;
    expect(signals).toEqual(["memory"]);
  });

  test("OutOfpods: one pod goes, the BestEffort one", () => {
    const { killed, handler } = setup();
    const verdict = admitPredicates(pod("coredns", undefined, undefined, { priority: 2_000_000_000 }), running, full, handler);
    expect(verdict.admit).toBe(true);
    expect(killed.map((k) => k.name)).toEqual(["bestEffort"]);
  });

  test("standalone (no Node object): the pod count alone, preemption too", () => {
    const { killed, handler } = setup();
    const admit = predicateAdmitHandler({ maxPods: 3, node: () => undefined, onFailure: handler });
    expect(admit(pod("static-critical", undefined, undefined, { annotations: { "kubernetes.io/config.source": "file" } }), running).admit).toBe(true);
    expect(killed.map((k) => k.name)).toEqual(["bestEffort"]);
  });

  test.each([
    ["a non-critical pod is refused as before", pod("web", r("100m", "800Mi"), undefined, { priority: 1000 }), "OutOfmemory"],
    ["a critical pod also failing another predicate keeps that one", pod("ds", r("100m", "800Mi"), undefined, { priority: 2_000_000_000 }), "NodeName"],
  ] as const)("%s", (_what, p, reason) => {
    const { killed, handler } = setup();
    const withNodeName = reason === "NodeName" ? ({ ...p, spec: { ...p.spec, nodeName: "other" } } as PodLike) : p;
    expect(admitPredicates(withNodeName, running, node, handler)).toMatchObject({ admit: false, reason });
    expect(killed).toEqual([]);
  });

  test("no set of pods frees enough → UnexpectedAdmissionError, nobody preempted", () => {
    const { killed, handler } = setup();
    const huge = pod("huge", r("100m", "2Gi"), undefined, { priority: 2_000_000_000 });
    expect(admitPredicates(huge, running, node, handler)).toEqual({
      admit: false,
      reason: "UnexpectedAdmissionError",
      message: `Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: [(res: memory, q: ${2048 * Mi - (1024 * Mi - 400 * Mi) - 400 * Mi}), ]`,
    });
    expect(killed).toEqual([]);
  });

  test("a pod that fails to stop is logged; the critical pod is still admitted, nothing counted", async () => {
    const { killed, signals, handler } = setup(true);
    const verdict = admitPredicates(pod("kube-proxy", r("100m", "800Mi"), undefined, { priority: 2_000_001_000 }), running, node, handler);
    expect(verdict.admit).toBe(true);
    await (verdict as { waitFor?: Promise<unknown> }).waitFor;
    expect(killed.length).toBe(1);
    expect(signals).toEqual([]);
  });
});
