import { describe, expect, test } from "bun:test";
import { admissionView, admitPod } from "../../src/eviction/admission.ts";
import type { NodeConditionType } from "../../src/eviction/signals.ts";
import { pod } from "./helpers.ts";

const be = pod("be");
const burst = pod("burst", { requests: { memory: "100Mi" } });
const guar = pod("guar", { requests: { memory: "1Gi", cpu: "1" }, limits: { memory: "1Gi", cpu: "1" } });
const tolerant = pod("tol", { tolerations: [{ key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoSchedule" }] });
const wildcard = pod("wild", { tolerations: [{ operator: "Exists" }] });
const wrongEffect = pod("wrong", { tolerations: [{ key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoExecute" }] });
const equalEmpty = pod("eq", { tolerations: [{ key: "node.kubernetes.io/memory-pressure", operator: "Equal", value: "" }] });
const staticPod = pod("static", { annotations: { "kubernetes.io/config.source": "file" } });
const apiSource = pod("api", { annotations: { "kubernetes.io/config.source": "api" } });
const mirror = pod("mirror", { annotations: { "kubernetes.io/config.mirror": "abc" } });
const critical = pod("critical", { priority: 2_000_000_000 });
const almost = pod("almost", { priority: 1_999_999_999 });

const M: NodeConditionType[] = ["MemoryPressure"];
const D: NodeConditionType[] = ["DiskPressure"];
const P: NodeConditionType[] = ["PIDPressure"];
const MD: NodeConditionType[] = ["MemoryPressure", "DiskPressure"];

describe("admitPod", () => {
  const cases: [string, ReturnType<typeof pod>, NodeConditionType[], boolean][] = [
    ["no pressure admits BestEffort", be, [], true],
    ["memory pressure rejects BestEffort", be, M, false],
    ["memory pressure admits Burstable", burst, M, true],
    ["memory pressure admits Guaranteed", guar, M, true],
    ["memory pressure admits BestEffort tolerating the taint", tolerant, M, true],
    ["wildcard toleration works", wildcard, M, true],
    ["wrong effect does not tolerate", wrongEffect, M, false],
    ["Equal with empty value tolerates", equalEmpty, M, true],
    ["disk pressure rejects Guaranteed", guar, D, false],
    ["pid pressure rejects Burstable", burst, P, false],
    ["memory+disk rejects tolerating BestEffort", tolerant, MD, false],
    ["memory+disk rejects Guaranteed", guar, MD, false],
    ["static pods are always admitted", staticPod, MD, true],
    ["config.source=api is not static", apiSource, D, false],
    ["mirror pods are always admitted", mirror, D, true],
    ["priority 2e9 is critical", critical, D, true],
    ["priority just below 2e9 is not", almost, D, false],
  ];
  test.each(cases)("%s", (_n, p, conds, admit) => expect(admitPod(p, conds).admit).toBe(admit));
  test("rejection reason and message use Go slice formatting", () => {
    expect(admitPod(guar, MD)).toEqual({ admit: false, reason: "Evicted", message: "The node had condition: [MemoryPressure DiskPressure]. " });
    expect(admitPod(be, M).message).toBe("The node had condition: [MemoryPressure]. ");
  });
});

describe("admissionView: static pods under evictStaticPods", () => {
  const staticBE = pod("s", { annotations: { "kubernetes.io/config.source": "file", "kubernetes.io/config.hash": "x" } });
  const staticCritical = { ...staticBE, spec: { ...staticBE.spec, priority: 2_000_000_000 } };
  const apiBE = pod("a", { annotations: { "kubernetes.io/config.source": "api" } });

  test.each([
    ["static BestEffort, evictStaticPods off: admitted as upstream", staticBE, false, true],
    ["static BestEffort, evictStaticPods on: rejected like any pod", staticBE, true, false],
    ["static with critical priority, evictStaticPods on: still admitted", staticCritical, true, true],
    ["API BestEffort: rejected either way", apiBE, true, false],
  ] as const)("admission under MemoryPressure: %s", (_name, p, evictStaticPods, admitted) => {
    expect(admitPod(admissionView(p, evictStaticPods), ["MemoryPressure"]).admit).toBe(admitted);
  });

  test("the admission view keeps the pod's other annotations and leaves the pod untouched", () => {
    const v = admissionView(staticBE, true);
    expect(v.metadata.annotations).toEqual({ "kubernetes.io/config.hash": "x" });
    expect(staticBE.metadata.annotations!["kubernetes.io/config.source"]).toBe("file");
  });
});
