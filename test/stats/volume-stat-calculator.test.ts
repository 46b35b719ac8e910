// A pod's persistent and CSI volumes in the summary (upstream volume_stat_calculator.go, MetricsStatFS,
// metrics_csi.go): a local PV by statfs, CSI volumes by NodeGetVolumeStats, the claims' pvcRef, hostPath
// PVs without figures, and the figures computed at most once per volumeStatsAggPeriod.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createManualClock } from "../../src/manual-clock.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";
import type { ClaimedVolume } from "../../src/pod/volumes/index.ts";
import {
  blockFigures,
  createVolumeStatCalculator,
  csiUsageFigures,
  statfsFigures,
  type VolumeStatCalculatorDeps,
} from "../../src/stats/volume-stat-calculator.ts";

const root = mkdtempSync(join(tmpdir(), "volume-stats-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const pod = {
  metadata: { name: "app", namespace: "team", uid: "u1" },
  spec: {
    containers: [],
    volumes: [
      { name: "local", persistentVolumeClaim: { claimName: "c-local" } },
      { name: "host", persistentVolumeClaim: { claimName: "c-host" } },
      { name: "remote", ephemeral: { volumeClaimTemplate: { spec: {} } } },
      { name: "inline", csi: { driver: "d" } },
      { name: "scratch", emptyDir: {} },
    ],
  },
} as unknown as PodLike;
const claims = new Map<string, ClaimedVolume | Error>([
  ["local", { pvName: "pv-local", source: { plugin: "kubernetes.io/local-volume", local: { path: "/mnt/x" } }, mountOptions: [], volumeMode: "Filesystem" }],
  ["host", { pvName: "pv-host", source: { plugin: "kubernetes.io/host-path", hostPath: { path: "/x" } }, mountOptions: [], volumeMode: "Filesystem" }],
  [
    "remote",
    {
      pvName: "pv-csi",
      source: { plugin: "kubernetes.io/csi", csi: { driver: "d", volumeHandle: "h" }, accessModes: ["ReadWriteOnce"] },
      mountOptions: [],
      volumeMode: "Filesystem",
    } as ClaimedVolume,
  ],
]);
const usage = (n: number) => [
  { unit: "BYTES" as const, total: 100 * n, available: 60 * n, used: 40 * n },
  { unit: "INODES" as const, total: 10, available: 7, used: 3 },
];

describe("figures", () => {
  test("NodeGetVolumeStats: BYTES and INODES mapped as upstream; nothing usable, undefined", () => {
    expect(csiUsageFigures(usage(1))).toEqual({ capacityBytes: 100, availableBytes: 60, usedBytes: 40, inodes: 10, inodesFree: 7, inodesUsed: 3 });
    expect(csiUsageFigures([{ unit: "UNKNOWN", total: 1, available: 1, used: 0 }])).toBeUndefined();
  });
  test("statfs: capacity, used below it, inodes used + free", async () => {
    const f = await statfsFigures(root);
    expect(f.capacityBytes!).toBeGreaterThan(0);
    expect(f.usedBytes!).toBeLessThanOrEqual(f.capacityBytes!);
    expect(f.inodesUsed! + f.inodesFree!).toBe(f.inodes!);
  });
});

describe("createVolumeStatCalculator", () => {
  const localDir = join(root, "pods", "u1", "volumes", "kubernetes.io~local-volume", "pv-local");
  mkdirSync(localDir, { recursive: true });

  function calculator() {
    const clock = createManualClock(1_000_000);
    const asked: string[] = [];
    let n = 1;
    let known = true;
    const c = createVolumeStatCalculator({
      rootDir: root,
      clock,
      periodMs: 60_000,
      claims: (uid) => (known && uid === "u1" ? claims : undefined),
      csiVolumeStats: async (uid, specVolID) => (asked.push(`${uid}/${specVolID}`), usage(n)),
    });
    return { c, clock, asked, next: () => n++, forget: () => (known = false) };
  }

  test("a local PV by statfs, a CSI claim and an inline CSI volume by the driver; claims with pvcRef; hostPath and emptyDir none", async () => {
    const { c, asked } = calculator();
    const stats = await c.podVolumeStats(pod, "u1");
    expect(stats.map((s) => [s.name, s.pvcRef])).toEqual([
      ["local", { name: "c-local", namespace: "team" }],
      ["remote", { name: "app-remote", namespace: "team" }],
      ["inline", undefined],
    ]);
    expect(asked).toEqual(["u1/pv-csi", "u1/inline"]);
    expect(stats[1]).toMatchObject({ capacityBytes: 100, usedBytes: 40, inodesUsed: 3 });
    expect(stats[0]!.capacityBytes).toEqual((await statfsFigures(localDir)).capacityBytes);
    expect(c.claimStats().map((s) => s.name)).toEqual(["local", "remote"]);
  });

  test("computed once per period: served from the cache, then refreshed in the background; gone with the pod", async () => {
    const { c, clock, asked, next, forget } = calculator();
    await c.podVolumeStats(pod, "u1");
    next();
    clock.advance(30_000);
    expect((await c.podVolumeStats(pod, "u1"))[1]!.capacityBytes).toBe(100);
    expect(asked.length).toBe(2);
    clock.advance(30_000);
    expect((await c.podVolumeStats(pod, "u1"))[1]!.capacityBytes).toBe(100); // stale, while the refresh runs
    await c.settled();
    expect((await c.podVolumeStats(pod, "u1"))[1]!.capacityBytes).toBe(200);
    forget();
    expect(c.claimStats()).toEqual([]);
  });

  test("a pod's figures no summary asked for in a while (two periods, 5 minutes at least, and one more) are dropped", async () => {
    const { c, clock } = calculator();
    await c.podVolumeStats(pod, "u1");
    clock.advance(6 * 60_000);
    await c.podVolumeStats(pod, "u2");
    expect(c.claimStats().map((s) => s.name)).toEqual(["local", "remote"]);
    clock.advance(1);
    await c.podVolumeStats(pod, "u3");
    expect(c.claimStats()).toEqual([]);
  });

  test("a driver that does not answer holds a summary 250 ms at most, once: its figures come when it answers", async () => {
    let answer: (u: ReturnType<typeof usage>) => void = () => {};
    const c = createVolumeStatCalculator({
      rootDir: root,
      clock: createManualClock(0),
      periodMs: 60_000,
      claims: () => claims,
      csiVolumeStats: (_uid, specVolID) => (specVolID === "inline" ? Promise.resolve(undefined) : new Promise((r) => (answer = r))),
    });
    expect((await c.podVolumeStats(pod, "u1")).map((s) => s.name)).toEqual([]);
    expect((await c.podVolumeStats(pod, "u1")).map((s) => s.name)).toEqual([]);
    answer(usage(1));
    await c.settled();
    expect((await c.podVolumeStats(pod, "u1")).map((s) => s.name)).toEqual(["local", "remote"]);
  });
});

describe("raw block volumes", () => {
  const claimNames = ["disk", "unmapped", "remote", "host"];
  const volumes = claimNames.map((name) => ({ name, persistentVolumeClaim: { claimName: `c-${name}` } }));
  const blockPod = { metadata: { name: "db", namespace: "team", uid: "b1" }, spec: { containers: [], volumes } } as unknown as PodLike;
  const block = (pvName: string, source: ClaimedVolume["source"]): ClaimedVolume => ({ pvName, source, mountOptions: [], volumeMode: "Block" });
  const blockClaims = new Map<string, ClaimedVolume | Error>([
    ["disk", block("pv-disk", { plugin: "kubernetes.io/local-volume", local: { path: "/dev/x" } })],
    ["unmapped", block("pv-unmapped", { plugin: "kubernetes.io/local-volume", local: { path: "/dev/y" } })],
    [
      "remote",
      block("pv-remote", { plugin: "kubernetes.io/csi", csi: { driver: "d", volumeHandle: "h" }, accessModes: ["ReadWriteOnce"] } as ClaimedVolume["source"]),
    ],
    ["host", block("pv-host", { plugin: "kubernetes.io/host-path", hostPath: { path: "/dev/z" } })],
  ]);
  const links = join(root, "pods", "b1", "volumeDevices", "kubernetes.io~local-volume");
  mkdirSync(links, { recursive: true });
  writeFileSync(join(root, "disk.img"), ""); // not a device: the real sizing refuses it
  symlinkSync(join(root, "disk.img"), join(links, "pv-disk"));
  const blockCalculator = (deps: Partial<VolumeStatCalculatorDeps>) =>
    createVolumeStatCalculator({ rootDir: root, clock: createManualClock(0), periodMs: 60_000, claims: () => blockClaims, ...deps });

  test("a local Block PV: its device's size through the pod's link, nothing else; a CSI Block PV by its driver; unmapped and hostPath none", async () => {
    const sized: string[] = [];
    const asked: string[] = [];
    const c = blockCalculator({
      csiVolumeStats: async () => usage(9),
      csiBlockVolumeStats: async (uid, specVolID) => (asked.push(`${uid}/${specVolID}`), [{ unit: "BYTES", total: 4096, available: 0, used: 0 }]),
      blockDeviceBytes: async (path) => {
        sized.push(path);
        if (path.endsWith("pv-disk")) return 1 << 30;
        throw Object.assign(new Error(`ENOENT: ${path}`), { code: "ENOENT" });
      },
    });
    const stats = await c.podVolumeStats(blockPod, "b1");
    expect(stats.map(({ time: _, ...s }) => s)).toEqual([
      { name: "disk", pvcRef: { name: "c-disk", namespace: "team" }, ...blockFigures(1 << 30) },
      { name: "remote", pvcRef: { name: "c-remote", namespace: "team" }, capacityBytes: 4096, availableBytes: 0, usedBytes: 0 },
    ]);
    expect(sized).toEqual([join(links, "pv-disk"), join(links, "pv-unmapped")]);
    expect(asked).toEqual(["b1/pv-remote"]);
    expect(blockFigures(512)).toEqual({ capacityBytes: 512, availableBytes: 0, usedBytes: 0, inodes: 0, inodesFree: 0, inodesUsed: 0 });
  });

  test("a device that cannot be sized is reported, not listed", async () => {
    const errors: string[] = [];
    const c = blockCalculator({ onError: (m) => errors.push(m) });
    expect(await c.podVolumeStats(blockPod, "b1")).toEqual([]);
    expect(errors).toEqual([`volume stats of pod team/db volume disk: unable to detect the size of ${join(links, "pv-disk")}: not a block device`]);
  });
});
