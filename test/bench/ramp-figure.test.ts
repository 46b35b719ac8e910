import { expect, test } from "bun:test";
import { klogTimeMs, rampSummary } from "../../scripts/bench/lib/ramp-figure.ts";

test("klogTimeMs reads klog's local time of day to the microsecond, in the year given", () => {
  const t = klogTimeMs('I1206 16:20:01.123456   42 eviction_manager.go:389] "Eviction manager: attempting to reclaim"', 2026);
  expect(t).toBe(new Date(2026, 11, 6, 16, 20, 1).getTime() + 123.456);
  expect(klogTimeMs("not a klog line")).toBeUndefined();
});

test("rampSummary: one line a mode measured, runs, SIGTERMs, OOM kills and the agent's own times", () => {
  const run = (receivedMs: number | undefined, oomKills: number) => ({
    crossedAt: 0,
    receivedMs,
    decidedMs: 1,
    sentMs: 2,
    oomKills,
    hostOomKills: oomKills,
    noSigterm: receivedMs === undefined ? "victim exited 137 (SIGKILL, OOMKilled) with no sigterm line" : undefined,
  });
  const lines = rampSummary({ "kubelet-notify": { runs: [run(30, 0), run(undefined, 1)], errors: ["x"] } });
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith(
    "figure 5, kubelet-notify: 2 runs, 1 with SIGTERM, 1 failed, 0 refused at admission and made again; kernel OOM kills in kubepods 1 (host-wide 1)",
  );
  expect(lines[0]).toContain("signal sent p50 2.0 ms, p99 2.0 ms (2); victim exited 137 (SIGKILL, OOMKilled)");
});
