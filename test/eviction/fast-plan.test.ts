import { describe, expect, test } from "bun:test";
import { planCandidates, planThreshold, planThresholds, qosDirs, runningContainerIds } from "../../src/eviction/fast-plan.ts";
import type { ArmedThreshold } from "../../src/kernel/memory-notifiers.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";
import type { PodStatus } from "../../src/pod/types.ts";
import { Mi, pod, summary, thresholds } from "./helpers.ts";

const [memHard, allocHard] = thresholds({ evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: ["pods"] });
const [memSoft] = thresholds({ evictionHard: {}, evictionSoft: { "memory.available": "1Gi" }, evictionSoftGracePeriod: { "memory.available": "1m" } });
const [diskHard] = thresholds({ evictionHard: { "nodefs.available": "10%" }, enforceNodeAllocatable: [] });

const calm = { initialized: true, lastSummary: summary(), inFlight: new Map(), thresholdsMet: [], thresholds: [memHard!, diskHard!] };

describe("planThresholds: a plan only from a calm state, for hard memory thresholds", () => {
  test.each([
    ["no cycle yet", { ...calm, initialized: false }, "no cycle has run yet"],
    ["no summary yet", { ...calm, lastSummary: undefined }, "no cycle has run yet"],
    ["an eviction in flight", { ...calm, inFlight: new Map([["uid", {}]]) }, "an eviction is in flight"],
    ["a threshold met", { ...calm, thresholdsMet: [memHard!] }, "a threshold was met at the last cycle"],
    ["only soft or disk thresholds", { ...calm, thresholds: [memSoft!, diskHard!] }, "no hard memory threshold"],
  ])("%s", (_name, st, reason) => {
    expect(planThresholds(st as never)).toEqual({ reason, transient: false });
  });

  test("calm: the hard memory thresholds, in configuration order", () => {
    expect(planThresholds({ ...calm, thresholds: [memSoft!, memHard!, diskHard!, allocHard!] })).toEqual([memHard!, allocHard!]);
  });
});

describe("planThreshold: the armed notifier's token and the threshold in bytes", () => {
  const armed: ArmedThreshold[] = [
    { signal: "memory.available", hard: false, token: 1, cgroupPath: "/sys/fs/cgroup/memory" },
    { signal: "memory.available", hard: true, token: 2, cgroupPath: "/sys/fs/cgroup/memory" },
  ];
  const observations = { "memory.available": { available: 500 * Mi, capacity: 1024 * Mi, timeMs: 0 } };

  test("the hard notifier of its signal; v1 files by default", () => {
    expect(planThreshold(memHard!, armed, observations, 1)).toEqual({
      token: 2,
      cgroupPath: "/sys/fs/cgroup/memory",
      files: "v1",
      capacityBytes: 1024 * Mi,
      valueBytes: 100 * Mi,
    });
  });

  test.each([
    ["no notifier armed yet (v1)", memHard!, [armed[0]!], observations, 1, { reason: "no memcg notifier armed for memory.available", transient: true }],
    ["no working-set target armed yet (v2)", memHard!, [], observations, 2, { reason: "no working-set notifier armed for memory.available", transient: true }],
    ["no observation", memHard!, armed, {}, 1, { reason: "no observation of memory.available", transient: false }],
  ] as const)("%s", (_name, t, a, o, version, want) => {
    expect(planThreshold(t, [...a], o, version)).toEqual(want);
  });
});

describe("planCandidates: the pods the cycle could evict, in order", () => {
  const be = pod("be");
  const critical = pod("critical", { priority: 2_000_000_000 });
  const staticPod = pod("static", { annotations: { "kubernetes.io/config.source": "file" } });
  test.each([
    ["static pods exempt", false, ["be"]],
    ["static pods evictable (evictStaticPods)", true, ["be", "static"]],
  ])("%s", (_name, evictStaticPods, want) => {
    expect(planCandidates([be, critical, staticPod], evictStaticPods).map((p) => p.metadata.name)).toEqual(want);
  });
});

describe("runningContainerIds", () => {
  const running = { running: { startedAt: "" } };
  test.each([
    ["no status", undefined, []],
    [
      "running init containers first, the runtime prefix cut",
      {
        containerStatuses: [{ name: "app", containerID: "containerd://b", state: running }],
        initContainerStatuses: [{ name: "sidecar", containerID: "containerd://a", state: running }],
      },
      ["a", "b"],
    ],
    [
      "not running, or no ID yet: left out",
      {
        containerStatuses: [
          { name: "done", containerID: "containerd://c", state: { terminated: { exitCode: 0 } } },
          { name: "new", state: running },
          { name: "bare", containerID: "d", state: running },
        ],
      },
      ["d"],
    ],
  ])("%s", (_name, status, want) => {
    expect(runningContainerIds(status as PodStatus | undefined)).toEqual(want);
  });
});

describe("qosDirs: the parents of pod cgroups by QoS class", () => {
  test("cgroupfs layout: kubepods (Guaranteed), its burstable and besteffort children", () => {
    const path = (p: PodLike) => {
      const r = p.spec.containers[0]!.resources;
      const qos = r?.limits ? "" : r?.requests ? "burstable/" : "besteffort/";
      return `kubepods/${qos}podprobe`;
    };
    expect(qosDirs("/sys/fs/cgroup/memory", path)).toEqual([
      "/sys/fs/cgroup/memory/kubepods",
      "/sys/fs/cgroup/memory/kubepods/burstable",
      "/sys/fs/cgroup/memory/kubepods/besteffort",
    ]);
  });

  test("no QoS cgroups: none", () => {
    expect(qosDirs("/sys/fs/cgroup/memory", () => undefined)).toEqual([]);
  });
});
