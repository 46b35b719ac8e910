import { expect, test } from "bun:test";
import { notifierThreadEvictionFromEnv, runtimeImageFsDir } from "../../src/wire/eviction.ts";

const fsUsage = (mountpoint: string | null) => ({ timestamp: 0, fsId: mountpoint === null ? null : { mountpoint }, usedBytes: null, inodesUsed: null });

test.each([
  [
    "containerd's image store",
    [fsUsage("/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs")],
    "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs",
  ],
  ["first entry without an fsId", [fsUsage(null), fsUsage("/b")], "/b"],
  ["none reported", [], undefined],
] as const)("runtimeImageFsDir: %s", async (_name, imageFilesystems, want) => {
  expect(await runtimeImageFsDir({ imageFsInfo: async () => ({ imageFilesystems: [...imageFilesystems], containerFilesystems: [] }) })).toBe(want);
});

test("runtimeImageFsDir: a failing runtime leaves imagefs unobserved instead of throwing", async () => {
  expect(await runtimeImageFsDir({ imageFsInfo: async () => Promise.reject(new Error("UNAVAILABLE")) })).toBeUndefined();
});

test.each([
  ["unset: on by default", undefined, true],
  ["empty: on by default", "", true],
  ["1", "1", true],
  ["true", "true", true],
  ["ON", "ON", true],
  ["0: the off switch", "0", false],
  ["false", "false", false],
  [" off ", " off ", false],
  ["a typo keeps the default (with a warning)", "yes please", true],
] as const)("the notifier-thread eviction switch (BUNLET_NOTIFIER_THREAD_EVICTION): %s", (_name, value, on) => {
  expect(notifierThreadEvictionFromEnv({ BUNLET_NOTIFIER_THREAD_EVICTION: value })).toBe(on);
});
