import { describe, expect, test } from "bun:test";
import type { Container, Image } from "../../../src/cri/types.ts";
import { createImageGCManager } from "../../../src/pod/images/image-gc-manager.ts";
import { imageUsage } from "../../../src/pod/kuberuntime/gc.ts";
import { createSettlingClock } from "../../support/settling-clock.ts";

const MIN = 60_000;

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
