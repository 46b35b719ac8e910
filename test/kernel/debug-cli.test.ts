import { describe, expect, test } from "bun:test";
import { NotifyUsageError, resolveThresholdBytes, runNotify } from "../../src/cli/debug.ts";

describe("debug notify arguments", () => {
  test.each([
    ["100Mi", 0, 104857600],
    ["+50Mi", 1000, 1000 + 52428800],
    ["1G", 0, 1e9],
    ["0", 5, 0],
  ])("--threshold %s (usage %i) → %i bytes", (spec, usage, want) => {
    expect(resolveThresholdBytes(spec, () => usage)).toBe(want);
  });

  test.each([["1x"], ["+"], ["-5Mi"], ["lots"]])("--threshold %j is rejected with a hint", (spec) => {
    expect(() => resolveThresholdBytes(spec, () => 0)).toThrow(NotifyUsageError);
    expect(() => resolveThresholdBytes(spec, () => 0)).toThrow(/--threshold/);
  });

  const io = { out() {}, err() {}, now: () => 0 };
  test.each([
    [{}, /nothing to watch/],
    [{ cgroup: "x" }, /--cgroup and --threshold go together/],
    [{ threshold: "1Mi" }, /--cgroup and --threshold go together/],
  ])("%j is a usage error", async (opts, re) => {
    await expect(runNotify(opts, io, new AbortController().signal)).rejects.toThrow(re);
  });
});
