// Upstream's own tests against bunlet: the representative [NodeConformance] subset
// (scripts/conformance/subset.ts) of the release's e2e.test, run by scripts/conformance/run.ts against
// a real control plane whose node is bunlet. Every test of the subset must pass. The whole
// [NodeConformance] run, and the same run with the upstream kubelet, are the commands of docs/upstream.md.
// Needs root, containerd and the upstream binaries.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ConformanceReport } from "../../../scripts/conformance/report.ts";
import { SUBSET } from "../../../scripts/conformance/subset.ts";
import { ROOT } from "../../support/binary.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { upstreamBinDir } from "../../support/upstream/index.ts";

const bin = upstreamBinDir("kube-apiserver kube-controller-manager kube-scheduler kubectl agnhost ginkgo e2e.test");
if (!bin.dir) console.warn(`skipping the conformance subset: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("upstream [NodeConformance] subset against bunlet", () => {
  test("every test of the subset passes", async () => {
    const out = join(ROOT, "dist", "conformance-subset");
    const p = Bun.spawn([process.execPath, join(ROOT, "scripts/conformance/run.ts"), "--node", "bunlet", "--subset", "--out", out], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    let report: ConformanceReport;
    try {
      report = JSON.parse(readFileSync(join(out, "bunlet.json"), "utf8"));
    } catch {
      throw new Error(`no report (exit ${code}):\n${stdout}\n${stderr.slice(-6000)}`);
    }
    const ran = Object.entries(report.tests).filter(([, t]) => t.result !== "skipped");
    const failed = ran.filter(([, t]) => t.result === "failed").map(([name, t]) => `${name}: ${t.failure ?? t.state}`);
    expect(failed).toEqual([]);
    expect(ran.length).toBeGreaterThanOrEqual(SUBSET.length); // each pattern names at least one test
    expect(stdout).toMatch(/passed \d+ failed 0 skipped \d+/);
  }, 1_200_000);
});
