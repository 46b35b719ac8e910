import { describe, expect, test } from "bun:test";
import { parseGinkgoReport, summarize } from "../../scripts/conformance/report.ts";
import { SKIPS, skipExpression } from "../../scripts/conformance/skips.ts";
import { SUBSET } from "../../scripts/conformance/subset.ts";

const spec = (leaf: string, state: string, extra: object = {}) => ({
  ContainerHierarchyTexts: ["[sig-node] Pods"],
  LeafNodeText: leaf,
  LeafNodeType: "It",
  State: state,
  RunTime: 2_345_000_000,
  ...extra,
});

describe("parseGinkgoReport", () => {
  test("one record per It, by full name, with result, duration and the failure message", () => {
    const text = JSON.stringify([
      {
        SpecReports: [
          { LeafNodeType: "SynchronizedBeforeSuite", State: "passed", RunTime: 1 },
          spec("should get a host IP [NodeConformance]", "passed"),
          spec("should be updated", "failed", { Failure: { Message: "timed out waiting for the condition" } }),
          spec("should be skipped", "skipped"),
          spec("should not time out", "timedout", { Failure: { Message: "deadline" } }),
        ],
      },
    ]);
    const tests = parseGinkgoReport(text);
    expect(Object.keys(tests)).toEqual([
      "[sig-node] Pods should get a host IP [NodeConformance]",
      "[sig-node] Pods should be updated",
      "[sig-node] Pods should be skipped",
      "[sig-node] Pods should not time out",
    ]);
    expect(tests["[sig-node] Pods should get a host IP [NodeConformance]"]).toEqual({ result: "passed", durationSeconds: 2.35 });
    expect(tests["[sig-node] Pods should be updated"]).toEqual({ result: "failed", durationSeconds: 2.35, failure: "timed out waiting for the condition" });
    expect(tests["[sig-node] Pods should not time out"]).toEqual({ result: "failed", durationSeconds: 2.35, state: "timedout", failure: "deadline" });
    expect(summarize(tests)).toEqual({ passed: 1, failed: 2, skipped: 1 });
  });

  test("a report that is not ginkgo's is refused", () => {
    expect(() => parseGinkgoReport(JSON.stringify({ not: "a list" }))).toThrow();
  });
});

describe("skips and subset", () => {
  test("every skip has a reason, and the expression is every pattern as an alternative", () => {
    for (const s of SKIPS) expect(s.reason.length).toBeGreaterThan(10);
    const re = new RegExp(skipExpression());
    expect(re.test("[sig-node] Pods should do something [Serial]")).toBe(true);
    expect(re.test("[sig-node] Pods [Feature:SidecarContainers] x")).toBe(true);
    expect(re.test("[sig-node] Pods should get a host IP [NodeConformance] [Conformance]")).toBe(false);
  });

  test("no subset pattern is skipped", () => {
    const re = new RegExp(skipExpression());
    for (const s of SUBSET) expect(re.test(s.replaceAll("\\", ""))).toBe(false);
  });
});
