// The whole chaos suite (test/chaos/scenarios.test.ts → scripts/chaos/, unchanged)
// inside the cgroup v2 guest with systemd as PID 1, containerd's runc on SystemdCgroup = true and
// bunlet on cgroupDriver systemd. Each scenario's harness also checks that kubepods.slice's memory.max
// equals node allocatable and that every pod has memory stats in /stats/summary. Skips only where the
// guest cannot run (no UML kernel built, not root); under CI a missing guest fails.
//
// swap-hog runs only here: LimitedSwap needs cgroup v2, and the guest's disk gives it swap.
//
// No check is excused on v2: fast-ramp's "triggered by the kernel notification" must hold here too —
// bunlet's v2 fast path, the working-set watch on kubepods.slice, must be what evicts the ramp (the
// eviction trace's trigger kind "kernel"), not the 10 s periodic loop.
import { describe, expect, test } from "bun:test";
import { ensureBuilt } from "../../support/binary.ts";
import { bunTestInV2Guest, guestStallSnapshot, v2GuestSkipReason } from "../../support/v2-guest.ts";

const skip = v2GuestSkipReason();
const SCENARIOS = ["besteffort-hog", "fast-ramp", "soft-grace", "pid-pressure", "disk-pressure", "restart-during-pressure", "static-pods", "swap-hog"];

interface ScenarioReport {
  pass: boolean;
  passed: string[];
  failed: string[];
  errors: string[];
}

/** Pure: the text of printResult's block for `name` (its report, trace and bunlet log tail), or "". */
function scenarioBlock(out: string, name: string): string {
  const at = out.indexOf(`=== ${name}: `);
  if (at < 0) return "";
  const next = out.slice(at + 4).search(/^=== \S+: (?:PASS|FAIL) \(/m);
  return out.slice(at, next < 0 ? undefined : at + 4 + next);
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
      passed: lines.filter((l) => l.startsWith("  ✓ ")).map((l) => l.slice(4).split(" — ")[0]!),
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
      '  ✗ triggered by the kernel notification — trigger={"kind":"periodic"}',
      "  error: scenario exceeded 180000 ms",
      "  cleanup problem: cgroups: busy",
    ].join("\n");
    expect(parseScenarioReports(out)).toEqual(
      new Map([
        ["besteffort-hog", { pass: true, passed: ["exactly one eviction, of the hog"], failed: [], errors: [] }],
        [
          "fast-ramp",
          {
            pass: false,
            passed: ["container not OOMKilled"],
            failed: ["triggered by the kernel notification"],
            errors: ["error: scenario exceeded 180000 ms", "cleanup problem: cgroups: busy"],
          },
        ],
      ]),
    );
    expect(scenarioBlock(out, "besteffort-hog")).toBe(
      "=== besteffort-hog: PASS (111.4 s) ===\n  ✓ exactly one eviction, of the hog — default/hog\n--- eviction trace (1 record) ---\n",
    );
    expect(scenarioBlock(out, "fast-ramp").endsWith("cleanup problem: cgroups: busy")).toBe(true);
    expect(scenarioBlock(out, "soft-grace")).toBe("");
  });
});

describe.skipIf(!!skip)("chaos suite in the cgroup v2 + systemd guest", () => {
  test("every scenario passes with cgroupDriver systemd on cgroup v2", async () => {
    await ensureBuilt();
    // One guest CPU and slower syscalls: more memory and time than on the host, the same scenarios. Time
    // scale 5 (was 3): on an AMX host every guest context switch moves the 11 KB XSAVE area through
    // ptrace, and pods took 15–40 s to start in the guest — besteffort-hog ran out of its 180 s in a
    // fresh-clone CI (2026-12-03 03:29, its eviction itself 2.5 ms). More time, never different steps.
    const run = () =>
      bunTestInV2Guest("test/chaos/scenarios.test.ts", {
        systemd: true,
        memoryMiB: 3072,
        timeoutS: 2700,
        // /dev/ubda: swap-hog makes it swap and turns it on for its own run (LimitedSwap needs cgroup v2).
        diskMiB: 3072,
        env: ["BUNLET_CONTAINERD_SYSTEMD_CGROUP=1", "BUNLET_CHAOS_TIME_SCALE=5", "BUNLET_CHAOS_PRINT=1", "BUNLET_CHAOS_NO_CONTROL_PLANE=1"],
      });
    let r = await run();
    // A frozen guest (v2-guest.sh's stall watchdog: no heartbeat, no output) is the emulator's fault, not
    // a scenario's (docs/cgroup-v2.md#the-cgroup-v2-test-guest: UML livelocks seen on an AMX host): one more
    // whole run, said loudly; every check below still applies to the run that counts.
    if (r.stalled) {
      console.warn(
        `\n!!! chaos guest run 1 STALLED — ${r.stalled}\n!!! ${guestStallSnapshot(r.stderr)}\n!!! its stdout tail:\n${r.stdout.slice(-4000)}\n!!! retrying the whole guest run once\n`,
      );
      r = await run();
    }
    const out = `${r.stdout}\n${r.stderr}`;
    const tail = out.slice(-30_000);
    expect(r.stalled, `the guest stalled again on the retry:\n${tail}`).toBeUndefined();
    expect([0, 1], `the guest run itself failed (exit ${r.exitCode}):\n${tail}`).toContain(r.exitCode);
    const reports = parseScenarioReports(out);
    expect([...reports.keys()].sort(), tail).toEqual([...SCENARIOS].sort());
    for (const name of SCENARIOS) {
      const rep = reports.get(name)!;
      const why = scenarioBlock(out, name).slice(-30_000) || tail;
      expect({ name, failed: rep.failed, errors: rep.errors }, why).toEqual({ name, failed: [], errors: [] });
    }
    // The v2 fast path evicted the ramp: the check ran and held (no exception for v2).
    expect(reports.get("fast-ramp")!.passed, scenarioBlock(out, "fast-ramp").slice(-30_000)).toContain("triggered by the kernel notification");
    // Every scenario's harness checks ran on v2 with the systemd driver, and held.
    const count = (re: RegExp) => out.match(re)?.length ?? 0;
    expect(count(/✓ kubepods memory limit = node allocatable \(cgroup v2, systemd\)/g)).toBeGreaterThanOrEqual(SCENARIOS.length);
    expect(count(/✓ every pod has memory stats in \/stats\/summary/g)).toBeGreaterThanOrEqual(SCENARIOS.length);
  }, 5_000_000);
});
