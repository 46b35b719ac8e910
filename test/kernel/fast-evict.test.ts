import { describe, expect, test } from "bun:test";
import {
  cancelPlan,
  newFastPlanBuffer,
  planGeneration,
  planState,
  publishPlan,
  releaseFired,
  tryFastEviction,
  PLAN_ARMED,
  PLAN_FIRED,
  PLAN_IDLE,
  type FastEvictIo,
  type FastPlan,
} from "../../src/kernel/fast-evict.ts";

const Mi = 2 ** 20;

/** Fake kernel: fd → file text, pidfd → signals received, dir link counts. */
function fakeIo(files: Record<number, string>, links: number[]) {
  const signals: [number, number][] = [];
  const enc = new TextEncoder();
  const io: FastEvictIo = {
    pread(fd, buf) {
      const t = files[fd];
      if (t === undefined) throw new Error(`EBADF ${fd}`);
      const b = enc.encode(t);
      buf.set(b);
      return b.length;
    },
    signal(pidfd, sig) {
      if (pidfd === 666) throw new Error("ESRCH");
      signals.push([pidfd, sig]);
    },
    dirLinks: () => links,
    now: () => 1000,
  };
  return { io, signals, files };
}

const stat = (inactive: number) => `cache 0\ntotal_inactive_file ${inactive}\n`;

// Threshold 100Mi on kubepods with capacity 1Gi (token 7: fds 10/11); three pods: idle, hog, idle.
function plan(over: Partial<FastPlan> = {}): FastPlan {
  return {
    thresholds: [{ token: 7, usageFd: 10, statFd: 11, capacityBytes: 1024 * Mi, valueBytes: 100 * Mi }],
    pods: [
      { usageFd: 20, statFd: 21, request: 0, priority: 0, containers: [{ pidfd: 50, signal: 15 }] },
      { usageFd: 22, statFd: 23, request: 0, priority: 0, containers: [{ pidfd: 51, signal: 15 }, { pidfd: 52, signal: 3 }] },
      { usageFd: 24, statFd: 25, request: 0, priority: 0, containers: [{ pidfd: 53, signal: 15 }] },
    ],
    dirLinks: [5, 3, 4],
    ...over,
  };
}

const pressure = (kubepodsUsage = 950 * Mi): Record<number, string> => ({
  10: `${kubepodsUsage}\n`,
  11: stat(0),
  20: "300000\n",
  21: stat(0),
  22: `${600 * Mi}\n`,
  23: stat(Mi),
  24: "310000\n",
  25: stat(0),
});

const dirs = ["/k", "/k/burstable", "/k/besteffort"];

describe("tryFastEviction: the plan's checks", () => {
  test("met threshold → the top-ranked pod's containers get their stop signals; state FIRED", () => {
    const buf = newFastPlanBuffer();
    const gen = publishPlan(buf, plan())!;
    const { io, signals } = fakeIo(pressure(), [5, 3, 4]);
    const out = tryFastEviction(buf, [3, 7], dirs, io);
    expect(out).toMatchObject({ fired: true, generation: gen, threshold: 0, victim: 1, available: 74 * Mi, capacity: 1024 * Mi, signalled: 2 });
    expect(signals).toEqual([
      [51, 15],
      [52, 3],
    ]);
    expect(planState(buf)).toBe(PLAN_FIRED);
    // The main thread cannot take a fired plan back; it records the eviction, then releases it.
    expect(cancelPlan(buf)).toBe(PLAN_FIRED);
    expect(releaseFired(buf)).toBe(true);
    expect(planState(buf)).toBe(PLAN_IDLE);
  });

  const stepAside: [string, Partial<FastPlan>, Record<number, string>, number[], string][] = [
    ["a pod cgroup created since the plan", {}, pressure(), [5, 4, 4], "pod cgroups changed since the plan"],
    ["the crossing was downward", {}, pressure(800 * Mi), [5, 3, 4], "no hard memory threshold met at the wake-up"],
    [
      "the victim's containers are not all known yet",
      { pods: [plan().pods[0]!, { ...plan().pods[1]!, containers: undefined }, plan().pods[2]!] },
      pressure(),
      [5, 3, 4],
      "the victim's containers are not all known to the direct signaller yet",
    ],
    ["the victim has exited", { pods: [plan().pods[0]!, { ...plan().pods[1]!, containers: [{ pidfd: 666, signal: 15 }] }, plan().pods[2]!] }, pressure(), [5, 3, 4], "the victim's containers have all exited"],
    ["a read fails (cgroup gone)", {}, { ...pressure(), 22: undefined as unknown as string }, [5, 3, 4], "error: EBADF 22"],
  ];
  test.each(stepAside)("%s → steps aside, plan stays armed", (_n, over, files, links, reason) => {
    const buf = newFastPlanBuffer();
    publishPlan(buf, plan(over));
    const { io, signals } = fakeIo(files, links);
    const out = tryFastEviction(buf, [7], dirs, io);
    expect(out).toMatchObject({ fired: false, reason });
    expect(signals).toEqual([]);
    expect(planState(buf)).toBe(PLAN_ARMED);
  });

  test("a wake-up for another source, or no plan armed: nothing", () => {
    const buf = newFastPlanBuffer();
    const { io, signals } = fakeIo(pressure(), [5, 3, 4]);
    expect(tryFastEviction(buf, [7], dirs, io)).toBeUndefined();
    publishPlan(buf, plan());
    expect(tryFastEviction(buf, [8], dirs, io)).toBeUndefined();
    expect(signals).toEqual([]);
  });
});

describe("plan ownership", () => {
  test("cancelled by the main thread: the worker never reads it", () => {
    const buf = newFastPlanBuffer();
    publishPlan(buf, plan());
    expect(cancelPlan(buf)).toBe(PLAN_ARMED);
    expect(planState(buf)).toBe(PLAN_IDLE);
    const { io, signals } = fakeIo(pressure(), [5, 3, 4]);
    expect(tryFastEviction(buf, [7], dirs, io)).toBeUndefined();
    expect(signals).toEqual([]);
  });

  test("publish needs an idle buffer and bumps the generation", () => {
    const buf = newFastPlanBuffer();
    const g1 = publishPlan(buf, plan())!;
    expect(publishPlan(buf, plan())).toBeUndefined();
    cancelPlan(buf);
    const g2 = publishPlan(buf, plan())!;
    expect(g2).toBe(g1 + 1);
    expect(planGeneration(buf)).toBe(g2);
  });

  test("a plan too large to encode is refused", () => {
    const buf = newFastPlanBuffer();
    const pods = Array.from({ length: 1025 }, () => plan().pods[0]!);
    expect(() => publishPlan(buf, plan({ pods }))).toThrow("1025 candidate pods");
  });
});
