// The v2 guest's stall decision (scripts/host/v2-guest/stall.sh, sourced by v2-guest.sh's watchdog)
// and the harness's reading of a stall, by tables: no guest, no kernel — bash runs the pure function.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { GUEST_STALLED_EXIT, guestStallMessage, guestStallSnapshot, REPO } from "./v2-guest.ts";

const STALL_SH = join(REPO, "scripts/host/v2-guest/stall.sh");

function verdict(args: (number | string)[]): string {
  const r = Bun.spawnSync(["bash", "-c", `. "$1"; shift; guest_stall_verdict "$@"`, "stall", STALL_SH, ...args.map(String)], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`stall.sh: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

describe("guest_stall_verdict NOW STARTED LIMIT [MTIME]...", () => {
  const T = 1_800_000_000; // now
  test.each([
    ["booting, nothing yet, within the limit", [T, T - 30, 120], "ok 30"],
    ["never booted: the start is the last progress", [T, T - 120, 120], "stalled 120"],
    ["heartbeat 2 s ago, output quiet for 10 min (a long quiet test)", [T, T - 900, 120, T - 2, T - 600, T - 600, T - 600], "ok 2"],
    ["heartbeat stopped 130 s ago, output older (frozen)", [T, T - 900, 120, T - 130, T - 200, T - 300, T - 140], "stalled 130"],
    ["heartbeat dead but the command still writes: alive", [T, T - 900, 120, T - 500, T - 1, T - 500, T - 500], "ok 1"],
    ["one mark short of the limit", [T, T - 900, 120, T - 119], "ok 119"],
    ["missing marks (no heartbeat file yet) are skipped", [T, T - 10, 120, "-", "", T - 5], "ok 5"],
    ["a mark from before the start does not count", [T, T - 100, 60, T - 500], "stalled 100"],
    ["a mark in the future (clock skew) is no stall", [T, T - 100, 60, T + 3], "ok 0"],
  ] as [string, (number | string)[], string][])("%s", (_name, args, want) => {
    expect(verdict(args)).toBe(want);
  });
});

describe("guestStallMessage", () => {
  test.each([
    [
      "a stall",
      GUEST_STALLED_EXIT,
      "x\nv2-guest: v2 guest stalled: no progress for 121 s during: === pid-pressure\n---- guest console\n",
      "v2 guest stalled: no progress for 121 s during: === pid-pressure",
    ],
    ["exit 123 without the line", GUEST_STALLED_EXIT, "", "v2 guest stalled (v2-guest.sh exit 123)"],
    ["the command's own failure", 1, "v2-guest: v2 guest stalled: … (a line the command printed)", undefined],
    ["a timeout", 124, "v2-guest: timeout after 600s", undefined],
  ] as [string, number, string, string | undefined][])("%s", (_name, exitCode, stderr, want) => {
    expect(guestStallMessage(exitCode, stderr)).toBe(want);
  });
});

describe("guestStallSnapshot", () => {
  test.each([
    [
      "the process lines up to the console dump",
      "out\nv2-guest: v2 guest stalled: no progress for 121 s during: x — this run's host processes (pid stat %cpu time wchan; syscall):\n   5751 R 90.0 00:01:00 -; running\n---- guest console\nboot…",
      "v2-guest: v2 guest stalled: no progress for 121 s during: x — this run's host processes (pid stat %cpu time wchan; syscall):\n   5751 R 90.0 00:01:00 -; running",
    ],
    ["no stall", "v2-guest: timeout after 600s\n---- guest console\n", ""],
  ])("%s", (_name, stderr, want) => {
    expect(guestStallSnapshot(stderr)).toBe(want);
  });
});
