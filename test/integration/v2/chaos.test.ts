// Issue #10's proof: the whole chaos suite (test/chaos/scenarios.test.ts → scripts/chaos/, unchanged)
// inside the cgroup v2 guest with systemd as PID 1, containerd's runc on SystemdCgroup = true and
// bunlet on cgroupDriver systemd. Each scenario's harness also checks that kubepods.slice's memory.max
// equals node allocatable and that every pod has memory stats in /stats/summary. Skips only where the
// guest cannot run (no UML kernel built, not root); under CI a missing guest fails.
//
// One known gap is named, not hidden: while bunlet arms no kernel notifier on cgroup v2 (issue #10
// item 4; the harness then notes "no hard allocatable kernel notifier armed … on cgroup v2"),
// fast-ramp's "triggered by the kernel notification" check fails — its eviction comes from the periodic
// loop. Every other check of every scenario must hold; once a v2 notifier is armed, all of them must.
import { describe, expect, test } from "bun:test";
import { ensureBuilt } from "../../support/binary.ts";
import { bunTestInV2Guest, v2GuestSkipReason } from "../../support/v2-guest.ts";

const skip = v2GuestSkipReason();
const SCENARIOS = ["besteffort-hog", "fast-ramp", "soft-grace", "pid-pressure", "disk-pressure", "restart-during-pressure", "static-pods"];
/** The harness's note (printResult "  note: …") when bunlet armed no kernel notifier on v2. */
const NO_V2_NOTIFIER = /^ {2}note: no hard allocatable kernel notifier armed within \d+ ms on cgroup v2/m;
const KNOWN_GAP = { scenario: "fast-ramp", check: "triggered by the kernel notification" };

interface ScenarioReport {
  pass: boolean;
  failed: string[];
  errors: string[];
}

/** Pure: printResult's blocks ("=== name: PASS (…) ===", "  ✗ check — detail", "  error: …", "  cleanup problem: …"). */
function parseScenarioReports(out: string): Map<string, ScenarioReport> {
  const reports = new Map<string, ScenarioReport>();
  const blocks = out.split(/^=== (?=\S+: (?:PASS|FAIL) \()/m).slice(1);
  for (const b of blocks) {
    const m = /^(\S+): (PASS|FAIL) \(/.exec(b);
    if (!m) continue;
    const lines = b.split("\n");
    reports.set(m[1]!, {
      pass: m[2] === "PASS",
      failed: lines.filter((l) => l.startsWith("  ✗ ")).map((l) => l.slice(4).split(" — ")[0]!),
      errors: lines.filter((l) => /^ {2}(error|cleanup problem): /.test(l)).map((l) => l.trim()),
    });
  }
  return reports;
}

describe("parseScenarioReports", () => {
  test("each printResult block: PASS/FAIL, failed checks, errors and cleanup problems", () => {
    const out = [
      "=== besteffort-hog: PASS (111.4 s) ===",
      "  ✓ exactly one eviction, of the hog — default/hog",
      "--- eviction trace (1 record) ---",
      "=== fast-ramp: FAIL (76.1 s) ===",
      "  ✓ container not OOMKilled — terminated reason=Completed",
      "  ✗ triggered by the kernel notification — trigger={\"kind\":\"periodic\"}",
      "  error: scenario exceeded 180000 ms",
      "  cleanup problem: cgroups: busy",
      "  note: no hard allocatable kernel notifier armed within 15000 ms on cgroup v2: the eviction loop alone watches kubepods",
    ].join("\n");
    expect(NO_V2_NOTIFIER.test(out)).toBe(true);
    expect(parseScenarioReports(out)).toEqual(
      new Map([
        ["besteffort-hog", { pass: true, failed: [], errors: [] }],
        ["fast-ramp", { pass: false, failed: ["triggered by the kernel notification"], errors: ["error: scenario exceeded 180000 ms", "cleanup problem: cgroups: busy"] }],
      ]),
    );
  });
});

describe.skipIf(!!skip)("chaos suite in the cgroup v2 + systemd guest", () => {
  test("every scenario passes with cgroupDriver systemd on cgroup v2", async () => {
    await ensureBuilt();
    // One guest CPU and slower syscalls: more memory and time than on the host, the same scenarios.
    const r = await bunTestInV2Guest("test/chaos/scenarios.test.ts", {
      systemd: true,
      memoryMiB: 3072,
      timeoutS: 2400,
      env: ["BUNLET_CONTAINERD_SYSTEMD_CGROUP=1", "BUNLET_CHAOS_TIME_SCALE=3", "BUNLET_CHAOS_PRINT=1"],
    });
    const out = `${r.stdout}\n${r.stderr}`;
    const tail = out.slice(-30_000);
    expect([0, 1], `the guest run itself failed (exit ${r.exitCode}):\n${tail}`).toContain(r.exitCode);
    const reports = parseScenarioReports(out);
    expect([...reports.keys()].sort(), tail).toEqual([...SCENARIOS].sort());
    const gapAllowed = NO_V2_NOTIFIER.test(out);
    for (const name of SCENARIOS) {
      const rep = reports.get(name)!;
      const allowed = gapAllowed && name === KNOWN_GAP.scenario ? [KNOWN_GAP.check] : [];
      expect({ name, failed: rep.failed.filter((c) => !allowed.includes(c)), errors: rep.errors }, tail).toEqual({ name, failed: [], errors: [] });
    }
    if (gapAllowed && !reports.get(KNOWN_GAP.scenario)!.pass) console.warn(`known gap (issue #10 item 4): ${KNOWN_GAP.scenario} "${KNOWN_GAP.check}" fails while bunlet arms no v2 kernel notifier`);
    // Every scenario's harness checks ran on v2 with the systemd driver, and held.
    const count = (re: RegExp) => out.match(re)?.length ?? 0;
    expect(count(/✓ kubepods memory limit = node allocatable \(cgroup v2, systemd\)/g)).toBeGreaterThanOrEqual(SCENARIOS.length);
    expect(count(/✓ every pod has memory stats in \/stats\/summary/g)).toBeGreaterThanOrEqual(SCENARIOS.length);
  }, 2_500_000);
});
