import { describe, expect, test } from "bun:test";
import type { IViolation } from "dependency-cruiser";
import { formatImportReport, importReport } from "../../scripts/check/imports.ts";
import { isPureTest } from "../../scripts/check/run.ts";

describe("isPureTest: the unit tests npm run check runs", () => {
  test.each([
    ["test/eviction/rank.test.ts", 'import { describe } from "bun:test";', true],
    ["test/clock.test.ts", "// a header", true],
    ["test/pod/lifecycle-containerd.test.ts", "// machine test: root and a private containerd", false],
    ["test/integration/pod/cgroups-v1.test.ts", "// Pod cgroups on cgroup v1", false],
    ["test/e2e/agent.test.ts", "", false],
    ["test/chaos/scenarios.test.ts", "", false],
    ["test/support/binary.ts", "", false],
    ["test/pod/machine-info.test.ts", "// machine testing is not the marker's word", true],
    ["scripts/check/house.ts", "", false],
  ])("%s (%s) → %p", (path, firstLine, want) => {
    expect(isPureTest(path, firstLine)).toBe(want);
  });
});

const violation = (rule: string, from: string, to: string, cycle: string[] = []): IViolation => ({
  rule: { name: rule, severity: "error" },
  from,
  to,
  cycle: cycle.map((name) => ({ name, dependencyTypes: [] })),
});

describe("importReport", () => {
  test("a cycle reported from each of its modules counts once; layer breaks are listed by edge", () => {
    const r = importReport([
      violation("no-circular", "src/a.ts", "src/b.ts", ["src/b.ts", "src/a.ts"]),
      violation("no-circular", "src/b.ts", "src/a.ts", ["src/a.ts", "src/b.ts"]),
      violation("no-circular", "src/c.ts", "src/d.ts", ["src/d.ts", "src/e.ts", "src/c.ts"]),
      violation("layer:src/kernel/", "src/kernel/x.ts", "src/eviction/y.ts"),
      violation("not-ours", "src/p.ts", "src/q.ts"),
    ]);
    expect(r.cycles).toEqual([
      ["src/a.ts", "src/b.ts", "src/a.ts"],
      ["src/c.ts", "src/d.ts", "src/e.ts", "src/c.ts"],
    ]);
    expect(r.upward).toEqual(["src/kernel/x.ts → src/eviction/y.ts (layer:src/kernel/)"]);
    expect(formatImportReport(r)).toEqual([
      "import cycles: 2",
      "  src/a.ts → src/b.ts → src/a.ts",
      "  src/c.ts → src/d.ts → src/e.ts → src/c.ts",
      "upward imports: 1",
      "  src/kernel/x.ts → src/eviction/y.ts (layer:src/kernel/)",
    ]);
  });

  test("none", () => {
    expect(formatImportReport(importReport([]))).toEqual(["import cycles: 0", "upward imports: 0"]);
  });
});
