import { describe, expect, test } from "bun:test";
import type { Container, Image } from "../../src/cri/types.ts";
import { imageUsage } from "../../src/pod/kuberuntime/gc.ts";
import { createImageGCManager, detectImages, imageGCTarget, planImageGC, type ImageRecord } from "../../src/wire/image-gc.ts";
import { createSettlingClock } from "../support/settling-clock.ts";

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

const image = (id: string, tag: string, size: number, pinned = false): Image =>
  ({ id, repoTags: [tag], repoDigests: [], size, uid: null, username: "", spec: null, pinned }) as Image;
const container = (imageRef: string): Container => ({ id: `c-${imageRef}`, imageRef, imageId: imageRef, image: { image: imageRef } }) as unknown as Container;

describe("imageUsage", () => {
  test("in use by id, tag or digest; kept when pinned or named in keep", () => {
    const imgs = [image("sha256:a", "a:1", 1), image("sha256:b", "b:1", 1), image("sha256:p", "pause:3.10", 1), image("sha256:q", "q:1", 1, true)];
    const got = imageUsage(imgs, [container("sha256:a")], ["pause:3.10"]);
    expect(got.map((g) => [g.name, g.inUse, g.kept])).toEqual([
      ["a:1", true, false],
      ["b:1", false, false],
      ["pause:3.10", false, true],
      ["q:1", false, true],
    ]);
  });
});

describe("image GC manager", () => {
  function node(images: Image[], containers: Container[]) {
    const removed: string[] = [];
    const cri = {
      listImages: async () => images.filter((i) => !removed.includes(i.id)),
      listContainers: async () => containers,
      removeImage: async (id: string) => void removed.push(id),
    };
    return { cri, removed };
  }
  const policy = { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 2 * MIN };

  test("every 5 minutes, over the high threshold, frees down to the low one, LRU first, keeping used, pause and young images", async () => {
    const clock = createSettlingClock(Date.UTC(2026, 0, 1));
    const { cri, removed } = node(
      [image("sha256:used", "used:1", 30), image("sha256:old", "old:1", 30), image("sha256:older", "older:1", 30), image("sha256:pause", "pause:3.10", 30)],
      [container("sha256:used")],
    );
    let available = 500; // 50% used: nothing to do
    const gc = createImageGCManager({
      cri,
      clock,
      policy,
      imageFsStats: async () => ({ time: "", capacityBytes: 1000, availableBytes: available }),
      keepImages: async () => ["pause:3.10"],
    });
    await gc.start();
    expect(removed).toEqual([]);

    // A new image appears after start: first detected now, so protected for 2 minutes.
    const late = image("sha256:late", "late:1", 1000);
    (cri as { listImages: () => Promise<Image[]> }).listImages = async () =>
      [
        image("sha256:used", "used:1", 30),
        image("sha256:old", "old:1", 30),
        image("sha256:older", "older:1", 30),
        image("sha256:pause", "pause:3.10", 30),
        late,
      ].filter((i) => !removed.includes(i.id));
    available = 100; // 90% used: free 1000·20% − 100 = 100 bytes
    await clock.advance(5 * MIN);
    // late was first detected at this very cycle → too young; old and older (30 B each) are not enough.
    expect(removed.sort()).toEqual(["sha256:old", "sha256:older"]);

    // Five minutes later the late image is old enough and goes.
    await clock.advance(5 * MIN);
    expect(removed).toContain("sha256:late");
    expect(removed).not.toContain("sha256:used");
    expect(removed).not.toContain("sha256:pause");
  });

  test("garbageCollect reports a shortfall with upstream's message", async () => {
    const clock = createSettlingClock();
    const { cri } = node([image("sha256:a", "a:1", 10)], []);
    const gc = createImageGCManager({
      cri,
      clock,
      policy,
      imageFsStats: async () => ({ time: "", capacityBytes: 1000, availableBytes: 0 }),
      keepImages: async () => [],
    });
    await expect(gc.garbageCollect()).rejects.toThrow(
      "Failed to garbage collect required amount of images. Attempted to free 200 bytes, but only found 10 bytes eligible to free.",
    );
  });

  test("imageGCHighThresholdPercent 100 disables it", async () => {
    const clock = createSettlingClock();
    const { cri, removed } = node([image("sha256:a", "a:1", 10)], []);
    const gc = createImageGCManager({
      cri,
      clock,
      policy: { ...policy, highThresholdPercent: 100 },
      imageFsStats: async () => ({ time: "", capacityBytes: 1000, availableBytes: 0 }),
      keepImages: async () => [],
    });
    await gc.start();
    await clock.advance(10 * MIN);
    expect(removed).toEqual([]);
    expect(clock.pending()).toBe(0);
  });

  test("stop ends the loop", async () => {
    const clock = createSettlingClock();
    const { cri } = node([], []);
    const gc = createImageGCManager({
      cri,
      clock,
      policy,
      imageFsStats: async () => ({ time: "", capacityBytes: 1, availableBytes: 1 }),
      keepImages: async () => [],
    });
    await gc.start();
    expect(clock.pending()).toBe(1);
    gc.stop();
    expect(clock.pending()).toBe(0);
  });
});
