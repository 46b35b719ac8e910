import { describe, expect, test } from "bun:test";
import { createOperationExecutor, MAX_DURATION_BEFORE_RETRY_MS, nextDurationBeforeRetry } from "../../../src/pod/pluginmanager/operation-executor.ts";

describe("the operation executor (upstream goroutinemap with exponential backoff)", () => {
  test.each([
    [0, 500],
    [500, 1000],
    [64_000, 122_000],
    [122_000, MAX_DURATION_BEFORE_RETRY_MS],
  ])("after %p ms the next backoff is %p ms", (cur, next) => {
    expect(nextDurationBeforeRetry(cur)).toBe(next);
  });

  test("one operation per name; a failed one backs off, a success forgets it", async () => {
    let now = 0;
    const ex = createOperationExecutor({ now: () => now });
    let release!: () => void;
    const first = ex.run("/s", () => new Promise<void>((r) => (release = r)));
    expect(first.started).toBe(true);
    expect(ex.run("/s", async () => {})).toEqual({ started: false, why: "already running" });
    expect(ex.run("/other", async () => {}).started).toBe(true);
    release();
    await ex.settled();
    // Failed: refused for 500 ms, then 1 s after a second failure.
    const failing = ex.run("/s", async () => {
      throw new Error("no");
    });
    if (failing.started) await failing.done;
    expect(ex.run("/s", async () => {})).toEqual({ started: false, why: "backing off" });
    now = 500;
    const again = ex.run("/s", async () => {
      throw new Error("no");
    });
    expect(again.started).toBe(true);
    if (again.started) await again.done;
    now = 1400;
    expect(ex.run("/s", async () => {}).started).toBe(false);
    now = 1500;
    const ok = ex.run("/s", async () => {});
    expect(ok.started).toBe(true);
    if (ok.started) await ok.done;
    expect(ex.isRunning("/s")).toBe(false);
  });
});
