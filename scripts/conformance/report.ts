// Reads ginkgo's JSON report (--json-report: an array of suite reports, each with SpecReports) into
// one record per test, and counts them. Pure: text in, data out.
import { z } from "zod";

export type Result = "passed" | "failed" | "skipped";

export interface TestResult {
  result: Result;
  durationSeconds: number;
  /** Ginkgo's state when it is not plain passed/skipped/failed (panicked, timedout, interrupted…). */
  state?: string;
  failure?: string;
}

export interface ConformanceReport {
  release: string;
  node: string;
  date: string;
  focus: string;
  procs: number;
  wallSeconds: number;
  ginkgoExit: number;
  tests: Record<string, TestResult>;
}

const specReport = z.looseObject({
  ContainerHierarchyTexts: z.array(z.string()).nullish(),
  LeafNodeText: z.string().default(""),
  LeafNodeType: z.string(),
  State: z.string(),
  RunTime: z.number().default(0),
  Failure: z.looseObject({ Message: z.string().default("") }).nullish(),
});
const suiteReports = z.array(z.looseObject({ SpecReports: z.array(specReport).nullish() }));

function resultOf(state: string): Result {
  if (state === "passed") return "passed";
  if (state === "skipped" || state === "pending") return "skipped";
  return "failed";
}

/** Every `It` of the report by its full name (containers and leaf text joined by spaces). */
export function parseGinkgoReport(text: string): Record<string, TestResult> {
  const tests: Record<string, TestResult> = {};
  for (const suite of suiteReports.parse(JSON.parse(text))) {
    for (const s of suite.SpecReports ?? []) {
      if (s.LeafNodeType !== "It") continue;
      const name = [...(s.ContainerHierarchyTexts ?? []), s.LeafNodeText].join(" ");
      const result = resultOf(s.State);
      tests[name] = {
        result,
        durationSeconds: Math.round(s.RunTime / 1e7) / 100,
        ...(["passed", "skipped", "failed", "pending"].includes(s.State) ? {} : { state: s.State }),
        ...(result === "failed" && s.Failure?.Message ? { failure: s.Failure.Message.slice(0, 2000) } : {}),
      };
    }
  }
  return tests;
}

export function summarize(tests: Record<string, TestResult>): Record<Result, number> {
  const out: Record<Result, number> = { passed: 0, failed: 0, skipped: 0 };
  for (const t of Object.values(tests)) out[t.result]++;
  return out;
}
