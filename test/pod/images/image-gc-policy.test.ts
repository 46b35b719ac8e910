import { describe, expect, test } from "bun:test";
import { detectImages, type ImageRecord, imageGCTarget, planImageGC } from "../../../src/pod/images/image-gc-policy.ts";

const GiB = 1024 ** 3;
const MIN = 60_000;

describe("imageGCTarget", () => {
  const policy = { highThresholdPercent: 85, lowThresholdPercent: 80 };
  test.each([
    ["below high", 100, 20, { over: false, usagePercent: 80 }],
    ["exactly at high", 100, 15, { over: true, usagePercent: 85, amountToFreeBytes: 5 }],
    ["93% full", 1000, 70, { over: true, usagePercent: 93, amountToFreeBytes: 130 }],
    ["full", 100, 0, { over: true, usagePercent: 100, amountToFreeBytes: 20 }],
    ["available over capacity is clamped", 100, 150, { over: false, usagePercent: 0 }],
  ] as const)("%s", (_name, capacityBytes, availableBytes, want) => {
    expect(imageGCTarget({ capacityBytes, availableBytes }, policy)).toEqual(want as never);
  });

  test("usage is 100 − ⌊available·100/capacity⌋ as upstream", () => {
    // 15.5% available → ⌊15.5⌋ = 15 → 85% used: at the high threshold.
    expect(imageGCTarget({ capacityBytes: 1000, availableBytes: 155 }, policy)).toEqual({ over: true, usagePercent: 85, amountToFreeBytes: 45 });
  });

  test("capacity 0 is an error", () => {
    expect(() => imageGCTarget({ capacityBytes: 0, availableBytes: 0 }, policy)).toThrow("invalid capacity 0 on image filesystem");
  });
});

const rec = (id: string, o: Partial<ImageRecord> = {}): ImageRecord => ({
  id,
  name: `${id}:latest`,
  sizeBytes: 100,
  inUse: false,
  kept: false,
  firstDetectedMs: 0,
  lastUsedMs: 0,
  ...o,
});

describe("planImageGC", () => {
  const now = 60 * MIN;
  const minAge = 2 * MIN;
  test.each([
    ["nothing to free", [rec("a")], 0, []],
    ["least recently used first", [rec("new", { lastUsedMs: 50 * MIN }), rec("old", { lastUsedMs: 10 * MIN }), rec("never")], 150, ["never", "old"]],
    ["ties on last use broken by first detection", [rec("b", { firstDetectedMs: 20 * MIN }), rec("a", { firstDetectedMs: 10 * MIN })], 100, ["a"]],
    ["stops once the target is reached", [rec("a"), rec("b"), rec("c")], 200, ["a", "b"]],
    ["in use never", [rec("used", { inUse: true, lastUsedMs: now }), rec("free")], 1000, ["free"]],
    ["pinned / sandbox never", [rec("pause", { kept: true }), rec("free")], 1000, ["free"]],
    [
      "younger than minAge skipped, older taken",
      [rec("young", { firstDetectedMs: now - MIN }), rec("aged", { firstDetectedMs: now - 3 * MIN, lastUsedMs: 5 })],
      1000,
      ["aged"],
    ],
    ["exactly minAge old is eligible", [rec("edge", { firstDetectedMs: now - minAge })], 1, ["edge"]],
    ["a big image covers the target alone", [rec("big", { sizeBytes: 5 * GiB }), rec("small", { lastUsedMs: 1 })], GiB, ["big"]],
    ["not enough eligible: plan all eligible", [rec("a"), rec("b")], 10_000, ["a", "b"]],
  ] as const)("%s", (_name, records, bytesToFree, want) => {
    const plan = planImageGC(records, bytesToFree, now, minAge);
    expect(plan.delete.map((r) => r.id)).toEqual([...want]);
    expect(plan.plannedBytes).toBe(plan.delete.reduce((s, r) => s + r.sizeBytes, 0));
  });

  test("reports images kept only for their age", () => {
    const plan = planImageGC([rec("young", { firstDetectedMs: now })], 100, now, minAge);
    expect(plan.tooYoung.map((r) => r.id)).toEqual(["young"]);
  });
});

describe("detectImages", () => {
  const u = (id: string, inUse = false) => ({ id, name: id, sizeBytes: 1, inUse, kept: false });
  test("first detection, last use, and forgetting removed images", () => {
    let r = detectImages(new Map(), [u("a"), u("b", true)], 0, 1000);
    expect(r.get("a")).toMatchObject({ firstDetectedMs: 0, lastUsedMs: 0 });
    expect(r.get("b")).toMatchObject({ firstDetectedMs: 0, lastUsedMs: 1000 });
    r = detectImages(r, [u("b"), u("c")], 5000, 5000);
    expect(r.has("a")).toBe(false);
    expect(r.get("b")).toMatchObject({ firstDetectedMs: 0, lastUsedMs: 1000, inUse: false });
    expect(r.get("c")).toMatchObject({ firstDetectedMs: 5000, lastUsedMs: 0 });
  });
});
