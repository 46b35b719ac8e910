import { expect, test } from "bun:test";
import { admitPod } from "../../src/eviction/index.ts";
import { admissionView, notifierThreadEvictionFromEnv, runtimeImageFsDir, sandboxImages } from "../../src/wire/eviction.ts";
import { pod } from "../eviction/helpers.ts";

const staticBE = pod("s", { annotations: { "kubernetes.io/config.source": "file", "kubernetes.io/config.hash": "x" } });
const staticCritical = { ...staticBE, spec: { ...staticBE.spec, priority: 2_000_000_000 } };
const apiBE = pod("a", { annotations: { "kubernetes.io/config.source": "api" } });

test.each([
  ["static BestEffort, evictStaticPods off: admitted as upstream", staticBE, false, true],
  ["static BestEffort, evictStaticPods on: rejected like any pod", staticBE, true, false],
  ["static with critical priority, evictStaticPods on: still admitted", staticCritical, true, true],
  ["API BestEffort: rejected either way", apiBE, true, false],
] as const)("admission under MemoryPressure: %s", (_name, p, evictStaticPods, admitted) => {
  expect(admitPod(admissionView(p, evictStaticPods), ["MemoryPressure"]).admit).toBe(admitted);
});

test("the admission view keeps the pod's other annotations and leaves the pod untouched", () => {
  const v = admissionView(staticBE, true);
  expect(v.metadata.annotations).toEqual({ "kubernetes.io/config.hash": "x" });
  expect(staticBE.metadata.annotations!["kubernetes.io/config.source"]).toBe("file");
});

test.each([
  ["containerd's CRI config", { config: JSON.stringify({ sandboxImage: "bunlet.local/pause:1" }) }, ["bunlet.local/pause:1"]],
  ["no config", {}, []],
  ["not JSON", { config: "{" }, []],
] as const)("sandboxImages: %s", async (_name, info, want) => {
  expect(await sandboxImages({ status: async () => ({ status: null, info: { ...info } }) })).toEqual([...want]);
});

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
