import { describe, expect, test } from "bun:test";
import type { PodLike } from "../../src/pod/pod-like.ts";
import { fsStatsToMeasure, rankDiskPressure, rankFuncFor, rankMemoryPressure, rankPIDPressure, type StatsFunc } from "../../src/eviction/rank.ts";
import type { PodStats } from "../../src/stats/summary.ts";
import { Mi, pod, podStats, type PodStatOpts } from "./helpers.ts";

function setup(rows: [PodLike, PodStatOpts | undefined][]): { pods: PodLike[]; stats: StatsFunc } {
  const m = new Map<string, PodStats>();
  for (const [p, s] of rows) if (s) m.set(p.metadata.uid!, podStats(p, s));
  return { pods: rows.map(([p]) => p), stats: (p) => m.get(p.metadata.uid!) };
}
const names = (r: { pod: PodLike }[]) => r.map((x) => x.pod.metadata.name);

describe("rankMemoryPressure", () => {
  test("exceeds-request first, then priority, then overage; QoS is not consulted", () => {
    const { pods, stats } = setup([
      [pod("guaranteed-low-prio", { priority: -10, requests: { memory: "500Mi", cpu: "1" }, limits: { memory: "500Mi", cpu: "1" } }), { memory: 400 * Mi }],
      [pod("burstable-over", { requests: { memory: "100Mi" } }), { memory: 300 * Mi }],
      [pod("besteffort-small", {}), { memory: 10 * Mi }],
      [pod("besteffort-big", {}), { memory: 200 * Mi }],
      [pod("besteffort-high-prio", { priority: 1000 }), { memory: 900 * Mi }],
      [pod("burstable-under", { requests: { memory: "1Gi" } }), { memory: 100 * Mi }],
    ]);
    expect(names(rankMemoryPressure(pods, stats))).toEqual([
      "burstable-over", // exceeds by 200Mi, priority 0
      "besteffort-big", // exceeds by 200Mi: tie with burstable-over keeps input order
      "besteffort-small",
      "besteffort-high-prio", // exceeds, but priority 1000
      "guaranteed-low-prio", // not exceeding; priority -10 first
      "burstable-under",
    ]);
  });
  test("pods without stats go first, even above higher priority (trap 11)", () => {
    const { pods, stats } = setup([
      [pod("hog", { priority: 0 }), { memory: 900 * Mi }],
      [pod("no-stats", { priority: 1_000_000 }), undefined],
    ]);
    expect(names(rankMemoryPressure(pods, stats))).toEqual(["no-stats", "hog"]);
  });
});

describe("rankDiskPressure", () => {
  const rows = (): [PodLike, PodStatOpts][] => [
    [pod("logs-heavy", { requests: { "ephemeral-storage": "100Mi" } }), { rootfs: 10 * Mi, logs: 500 * Mi, rootfsInodes: 5, logsInodes: 2 }],
    [pod("rootfs-heavy", {}), { rootfs: 800 * Mi, logs: 1 * Mi, rootfsInodes: 900, logsInodes: 1 }],
    [
      pod("volume-heavy", {
        volumes: [
          { name: "scratch", emptyDir: {} },
          { name: "ram", emptyDir: { medium: "Memory" } },
        ],
      }),
      {
        rootfs: 1 * Mi,
        logs: 1 * Mi,
        volumes: [
          { name: "scratch", used: 700 * Mi, inodes: 50 },
          { name: "ram", used: 5000 * Mi, inodes: 5000 },
          { name: "not-in-spec", used: 9000 * Mi },
        ],
      },
    ],
  ];
  test("single fs nodefs: rootfs + logs + local volumes (memory emptyDir and unknown volumes ignored)", () => {
    const { pods, stats } = setup(rows());
    const r = rankDiskPressure(fsStatsToMeasure("nodefs.available", { dedicatedImageFs: false, splitContainerImageFs: false }), false)(pods, stats);
    expect(names(r)).toEqual(["rootfs-heavy", "volume-heavy", "logs-heavy"]);
    expect(r.find((x) => x.pod.metadata.name === "volume-heavy")!.usage).toBe(702 * Mi);
  });
  test("dedicated imagefs: nodefs sees logs + volumes only; imagefs sees rootfs", () => {
    const { pods, stats } = setup(rows());
    const layout = { dedicatedImageFs: true, splitContainerImageFs: false };
    expect(names(rankFuncFor("nodefs.available", layout)(pods, stats))).toEqual(["volume-heavy", "logs-heavy", "rootfs-heavy"]);
    // logs-heavy's 10Mi rootfs is under its 100Mi request; volume-heavy's 1Mi exceeds its 0 request.
    expect(names(rankFuncFor("imagefs.available", layout)(pods, stats))).toEqual(["rootfs-heavy", "volume-heavy", "logs-heavy"]);
    // containerfs follows imagefs in this layout
    expect(fsStatsToMeasure("containerfs.available", layout)).toEqual(fsStatsToMeasure("imagefs.available", layout));
  });
  test("split layout: imagefs ranks everyone at 0 usage → priority, then smaller ephemeral request", () => {
    const { pods, stats } = setup([
      [pod("big-request", { requests: { "ephemeral-storage": "1Gi" } }), { rootfs: 900 * Mi, logs: 0 }],
      [pod("small-request", { requests: { "ephemeral-storage": "1Mi" } }), { rootfs: 1 * Mi, logs: 0 }],
    ]);
    const r = rankFuncFor("imagefs.available", { dedicatedImageFs: true, splitContainerImageFs: true })(pods, stats);
    expect(names(r)).toEqual(["small-request", "big-request"]);
    expect(r.every((x) => x.usage === 0)).toBe(true);
  });
  test("inodes: every pod using inodes exceeds (request 0); overage subtracts the byte request (quirk, trap 16)", () => {
    const { pods, stats } = setup([
      [pod("many-inodes-big-request", { requests: { "ephemeral-storage": "1Mi" } }), { rootfs: 0, logs: 0, rootfsInodes: 1000 }],
      [pod("few-inodes", {}), { rootfs: 0, logs: 0, rootfsInodes: 10 }],
    ]);
    // 1000 inodes − 1048576 "bytes" is far below 10 − 0, so the few-inodes pod ranks first.
    const r = rankDiskPressure(fsStatsToMeasure("nodefs.inodesFree", { dedicatedImageFs: false, splitContainerImageFs: false }), true)(pods, stats);
    expect(names(r)).toEqual(["few-inodes", "many-inodes-big-request"]);
    expect(r.every((x) => x.exceedsRequest)).toBe(true);
  });
});

describe("rankPIDPressure", () => {
  test("priority first, then process count; missing stats first within a priority", () => {
    const { pods, stats } = setup([
      [pod("few", {}), { processes: 5 }],
      [pod("many", {}), { processes: 500 }],
      [pod("many-high-prio", { priority: 100 }), { processes: 5000 }],
      [pod("unknown", {}), undefined],
      [pod("low-prio", { priority: -5 }), { processes: 1 }],
    ]);
    expect(names(rankPIDPressure(pods, stats))).toEqual(["low-prio", "unknown", "many", "few", "many-high-prio"]);
  });
});
