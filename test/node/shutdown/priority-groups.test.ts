import { describe, expect, test } from "bun:test";
import {
  groupByPriority,
  periodRequestedSeconds,
  podShutdownGracePeriodSeconds,
  shutdownGroupsFromConfig,
} from "../../../src/node/shutdown/priority-groups.ts";
import type { PodLike } from "../../../src/pod/pod-like.ts";

const pod = (name: string, priority?: number, terminationGracePeriodSeconds?: number): PodLike => ({
  metadata: { name, namespace: "default", uid: name },
  spec: { containers: [], priority, terminationGracePeriodSeconds },
});

describe("shutdownGroupsFromConfig (upstream migrateConfig)", () => {
  test.each([
    ["off: nothing set", {}, []],
    ["off: both zero", { shutdownGracePeriod: "0s", shutdownGracePeriodCriticalPods: "0s" }, []],
    [
      "30s total, 10s critical",
      { shutdownGracePeriod: "30s", shutdownGracePeriodCriticalPods: "10s" },
      [
        { priority: 0, shutdownGracePeriodSeconds: 20 },
        { priority: 2_000_000_000, shutdownGracePeriodSeconds: 10 },
      ],
    ],
    [
      "total only: critical pods get 0 s",
      { shutdownGracePeriod: "1m" },
      [
        { priority: 0, shutdownGracePeriodSeconds: 60 },
        { priority: 2_000_000_000, shutdownGracePeriodSeconds: 0 },
      ],
    ],
    [
      "sub-second parts are dropped as upstream's int64(d / time.Second)",
      { shutdownGracePeriod: "10.9s", shutdownGracePeriodCriticalPods: "2.5s" },
      [
        { priority: 0, shutdownGracePeriodSeconds: 8 },
        { priority: 2_000_000_000, shutdownGracePeriodSeconds: 2 },
      ],
    ],
    [
      "by priority: taken as given, sorted ascending",
      {
        shutdownGracePeriodByPodPriority: [
          { priority: 100000, shutdownGracePeriodSeconds: 20 },
          { priority: 0, shutdownGracePeriodSeconds: 60 },
          { priority: 2_000_000_000, shutdownGracePeriodSeconds: 10 },
        ],
      },
      [
        { priority: 0, shutdownGracePeriodSeconds: 60 },
        { priority: 100000, shutdownGracePeriodSeconds: 20 },
        { priority: 2_000_000_000, shutdownGracePeriodSeconds: 10 },
      ],
    ],
  ] as const)("%s", (_what, config, expected) => {
    expect(shutdownGroupsFromConfig(config)).toEqual(expected.map((g) => ({ ...g })));
  });

  test("periodRequested is the sum of the groups", () => {
    expect(periodRequestedSeconds(shutdownGroupsFromConfig({ shutdownGracePeriod: "30s", shutdownGracePeriodCriticalPods: "10s" }))).toBe(30);
    expect(periodRequestedSeconds([])).toBe(0);
  });
});

describe("groupByPriority", () => {
  const groups = [
    { priority: 1, shutdownGracePeriodSeconds: 10 },
    { priority: 2, shutdownGracePeriodSeconds: 20 },
    { priority: 3, shutdownGracePeriodSeconds: 30 },
    { priority: 4, shutdownGracePeriodSeconds: 40 },
  ];
  // Upstream's cases: below the lowest → lowest; on a boundary → that group; between → the lower; above → highest.
  test.each([
    [0, 1],
    [1, 1],
    [2, 2],
    [3, 3],
    [4, 4],
    [5, 4],
    [-10, 1],
  ])("pod priority %p → group %p", (priority, expectedGroup) => {
    const out = groupByPriority(groups, [pod("p", priority)]);
    expect(out.map((g) => g.pods.length)).toEqual(groups.map((g) => (g.priority === expectedGroup ? 1 : 0)));
  });

  test("gaps between groups: a pod takes the group at or below its priority", () => {
    const gapped = [
      { priority: 0, shutdownGracePeriodSeconds: 20 },
      { priority: 100000, shutdownGracePeriodSeconds: 10 },
      { priority: 2_000_000_000, shutdownGracePeriodSeconds: 5 },
    ];
    const pods = [pod("none"), pod("low", 50), pod("mid", 100000), pod("high", 1_999_999_999), pod("node-critical", 2_000_001_000)];
    expect(groupByPriority(gapped, pods).map((g) => g.pods.map((p) => p.metadata.name))).toEqual([["none", "low"], ["mid", "high"], ["node-critical"]]);
  });

  test("the two migrated groups: regular first, critical (system-cluster/node-critical) second", () => {
    const g = shutdownGroupsFromConfig({ shutdownGracePeriod: "30s", shutdownGracePeriodCriticalPods: "10s" });
    const out = groupByPriority(g, [pod("critical", 2_000_001_000), pod("app"), pod("cluster-critical", 2_000_000_000), pod("negative", -5)]);
    expect(out.map((x) => [x.shutdownGracePeriodSeconds, x.pods.map((p) => p.metadata.name)])).toEqual([
      [20, ["app", "negative"]],
      [10, ["critical", "cluster-critical"]],
    ]);
  });

  test("no groups: nothing", () => expect(groupByPriority([], [pod("a")])).toEqual([]));
});

describe("podShutdownGracePeriodSeconds", () => {
  const group = { priority: 0, shutdownGracePeriodSeconds: 20 };
  test.each([
    ["no terminationGracePeriodSeconds: the group's", undefined, 20],
    ["shorter own period wins", 5, 5],
    ["equal", 20, 20],
    ["longer own period is bounded by the group's", 30, 20],
    ["zero own period", 0, 0],
  ] as const)("%s", (_what, own, expected) => {
    expect(podShutdownGracePeriodSeconds(group, pod("p", 0, own))).toBe(expected);
  });
});
