import { describe, expect, test } from "bun:test";
import {
  cancelPlan,
  newFastPlanBuffer,
  planGeneration,
  planState,
  publishPlan,
  releaseFired,
  rehearseFastEviction,
  tryFastEviction,
  NOT_MET_AT_WAKE_UP,
  PLAN_ARMED,
  PLAN_FIRED,
  PLAN_IDLE,
  type FastEvictIo,
  type FastPlan,
} from "../../src/kernel/fast-evict.ts";
import { awaitSignalsTaken, signalPending } from "../../src/kernel/signals-taken.ts";

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
      {
        usageFd: 22,
        statFd: 23,
        request: 0,
        priority: 0,
        containers: [
          { pidfd: 51, signal: 15, pid: 4001 },
          { pidfd: 52, signal: 3, pid: 4002 },
        ],
      },
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
    // What was sent to whom, for the wait on the victim taking its signals.
    expect(out?.fired && out.sent).toEqual([
      { pid: 4001, signal: 15 },
      { pid: 4002, signal: 3 },
    ]);
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

  test("the victim's containers' working sets are read right after the signals (NaN: no cgroup known or gone)", () => {
    const buf = newFastPlanBuffer();
    const containers = [
      { pidfd: 51, signal: 15, pid: 4001, usageFd: 60, statFd: 61 },
      { pidfd: 52, signal: 3, pid: 4002 },
      { pidfd: 54, signal: 15, pid: 4003, usageFd: 62, statFd: 63 },
    ];
    publishPlan(buf, plan({ pods: [plan().pods[0]!, { ...plan().pods[1]!, containers }, plan().pods[2]!] }));
    const order: string[] = [];
    const { io } = fakeIo({ ...pressure(), 60: `${500 * Mi}\n`, 61: stat(2 * Mi) }, [5, 3, 4]);
    const traced: FastEvictIo = {
      ...io,
      pread: (fd, b) => (fd >= 60 && order.push(`read ${fd}`), io.pread(fd, b)),
      signal: (pidfd, sig) => (order.push(`signal ${pidfd}`), io.signal(pidfd, sig)),
    };
    const out = tryFastEviction(buf, [7], dirs, traced);
    expect(out?.fired && out.containerWorkingSets).toEqual([498 * Mi, Number.NaN, Number.NaN]);
    // The kill never waits on the reads.
    expect(order).toEqual(["signal 51", "signal 52", "signal 54", "read 60", "read 61", "read 62"]);
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
    [
      "the victim has exited",
      { pods: [plan().pods[0]!, { ...plan().pods[1]!, containers: [{ pidfd: 666, signal: 15 }] }, plan().pods[2]!] },
      pressure(),
      [5, 3, 4],
      "the victim's containers have all exited",
    ],
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

describe("tryFastEviction on cgroup v2 (the working-set thread's plan)", () => {
  const v2stat = (anon: number, file: number, inactive: number) =>
    `anon ${anon}\nfile ${file}\nkernel_stack 4096\ninactive_file ${inactive}\nactive_file ${file - inactive}\n`;
  // kubepods (v2: memory.current, inactive_file) with token 2^24; the node at the v2 root (v2-root: memory.stat only, fd 12).
  const v2plan = (): FastPlan =>
    plan({
      cgroupVersion: 2,
      thresholds: [
        { token: 2 ** 24, usageFd: 10, statFd: 11, files: "v2", capacityBytes: 1024 * Mi, valueBytes: 100 * Mi },
        { token: 2 ** 24 + 1, usageFd: 12, statFd: 12, files: "v2-root", capacityBytes: 2048 * Mi, valueBytes: 100 * Mi },
      ],
    });
  const v2files = (kubepodsUsage: number, kubepodsInactive: number, nodeAnon: number): Record<number, string> => ({
    10: `${kubepodsUsage}\n`,
    11: v2stat(kubepodsUsage - 8 * Mi, 8 * Mi, kubepodsInactive),
    12: v2stat(nodeAnon, 64 * Mi, 16 * Mi),
    20: "300000\n",
    21: v2stat(300000, 0, 0),
    22: `${600 * Mi}\n`,
    23: v2stat(600 * Mi - Mi, Mi, Mi),
    24: "310000\n",
    25: v2stat(310000, 0, 0),
  });

  test("kubepods' working set over the line (inactive_file, not total_inactive_file) → the hog's containers signalled", () => {
    const buf = newFastPlanBuffer();
    publishPlan(buf, v2plan());
    const { io, signals } = fakeIo(v2files(950 * Mi, 0, 100 * Mi), [5, 3, 4]);
    expect(tryFastEviction(buf, [2 ** 24], dirs, io)).toMatchObject({
      fired: true,
      threshold: 0,
      victim: 1,
      available: 74 * Mi,
      workingSets: [Number.NaN, 599 * Mi, Number.NaN],
    });
    expect(signals).toEqual([
      [51, 15],
      [52, 3],
    ]);
  });

  test("page cache is not pressure: usage over the line, working set under it → steps aside", () => {
    const buf = newFastPlanBuffer();
    publishPlan(buf, v2plan());
    const { io, signals } = fakeIo(v2files(950 * Mi, 200 * Mi, 100 * Mi), [5, 3, 4]);
    expect(tryFastEviction(buf, [2 ** 24], dirs, io)).toMatchObject({ fired: false, reason: "no hard memory threshold met at the wake-up" });
    expect(signals).toEqual([]);
    expect(planState(buf)).toBe(PLAN_ARMED);
  });

  test("the waking thread's own read of kubepods decides its threshold (no re-read); a node threshold is re-read whatever is passed", () => {
    const buf = newFastPlanBuffer();
    publishPlan(buf, v2plan());
    // The files say kubepods is under its line (500 MiB of 1024, 100 threshold); the watch read 950 MiB.
    const { io, signals } = fakeIo(v2files(500 * Mi, 0, 100 * Mi), [5, 3, 4]);
    expect(tryFastEviction(buf, [2 ** 24], dirs, io, { token: 2 ** 24, usageBytes: 950 * Mi, inactiveFileBytes: 0 })).toMatchObject({
      fired: true,
      threshold: 0,
      available: 74 * Mi,
    });
    expect(signals).toHaveLength(2);
    const buf2 = newFastPlanBuffer();
    publishPlan(buf2, v2plan());
    const node = fakeIo(v2files(500 * Mi, 0, 100 * Mi), [5, 3, 4]);
    expect(tryFastEviction(buf2, [2 ** 24 + 1], dirs, node.io, { token: 2 ** 24 + 1, usageBytes: 2047 * Mi, inactiveFileBytes: 0 })).toMatchObject({
      fired: false,
      reason: NOT_MET_AT_WAKE_UP,
    });
  });

  test("the node at the v2 root: anon + file − inactive_file of the root memory.stat", () => {
    const buf = newFastPlanBuffer();
    publishPlan(buf, v2plan());
    // kubepods far under its line; the node: 1900 + 64 − 16 = 1948 MiB working set of 2048 → 100 MiB available: not met (100 > 100 is false).
    const notMet = fakeIo(v2files(500 * Mi, 0, 1900 * Mi), [5, 3, 4]);
    expect(tryFastEviction(buf, [2 ** 24 + 1], dirs, notMet.io)).toMatchObject({ fired: false });
    const met = fakeIo(v2files(500 * Mi, 0, 1901 * Mi), [5, 3, 4]);
    expect(tryFastEviction(buf, [2 ** 24 + 1], dirs, met.io)).toMatchObject({ fired: true, threshold: 1, available: 99 * Mi, capacity: 2048 * Mi, victim: 1 });
  });

  test("a v1 plan's pods keep total_inactive_file (a v2 stat there is an error, not a guess)", () => {
    const buf = newFastPlanBuffer();
    publishPlan(buf, plan());
    const files = { ...pressure(), 23: v2stat(600 * Mi, Mi, Mi) };
    const { io, signals } = fakeIo(files, [5, 3, 4]);
    expect(tryFastEviction(buf, [7], dirs, io)).toMatchObject({ fired: false, reason: "error: fd 23: no total_inactive_file" });
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

const status = (shd: string, sig = "0000000000000000") => `Name:\tmemhog\nState:\tR (running)\nSigPnd:\t${sig}\nShdPnd:\t${shd}\nSigBlk:\t0000000000000000\n`;

describe("signalPending: /proc/<pid>/status's pending masks", () => {
  test.each([
    ["SIGTERM pending (shared)", status("0000000000004000"), 15, true],
    ["SIGTERM pending (thread)", status("0000000000000000", "0000000000004000"), 15, true],
    ["taken: both clear", status("0000000000000000"), 15, false],
    ["another signal pending only", status("0000000000000100"), 15, false],
    ["SIGQUIT pending", status("0000000000000004"), 3, true],
    ["a real-time signal (64)", status("8000000000000000"), 64, true],
    ["no masks (not a status file)", "Name:\tx\n", 15, undefined],
  ] as const)("%s", (_n, text, sig, want) => {
    expect(signalPending(text, sig)).toBe(want);
  });
});

describe("awaitSignalsTaken: the post waits for the victim's handler, bounded", () => {
  /** Fake clock and /proc: each PID's status per check; sleeps advance the clock. */
  function io(statuses: Record<number, (string | undefined)[]>) {
    let now = 0;
    const sleeps: number[] = [];
    const checks: Record<number, number> = {};
    return {
      sleeps,
      io: {
        procStatus(pid: number) {
          const seq = statuses[pid]!;
          const k = (checks[pid] = (checks[pid] ?? -1) + 1);
          return seq[Math.min(k, seq.length - 1)];
        },
        sleep(ms: number) {
          sleeps.push(ms);
          now += ms;
        },
        now: () => now,
      },
    };
  }
  const opts = { minMs: 2, capMs: 30, firstMs: 2 };
  const pending = status("0000000000004004"); // SIGTERM and SIGQUIT
  const clear = status("0000000000000000");

  test("no check before the first sleep (the victim needs the CPU); then intervals double: taken at the third check, 14 ms on", () => {
    const f = io({ 7: [pending, pending, clear] });
    expect(awaitSignalsTaken([{ pid: 7, signal: 15 }], f.io, opts)).toBe(14);
    expect(f.sleeps).toEqual([2, 4, 8]);
  });
  test("taken by the first check: one sleep of firstMs, no read before it", () => {
    const reads: number[] = [];
    const f = io({ 7: [clear] });
    const spy = { ...f.io, procStatus: (pid: number) => (reads.push(f.sleeps.length), f.io.procStatus(pid)) };
    expect(awaitSignalsTaken([{ pid: 7, signal: 15 }], spy, opts)).toBe(2);
    expect(reads).toEqual([1]); // read once, after one sleep
  });
  test("every signalled process must take its own; a process gone counts as taken", () => {
    const f = io({ 7: [pending, clear], 8: [pending, pending, pending, undefined] });
    expect(
      awaitSignalsTaken(
        [
          { pid: 7, signal: 15 },
          { pid: 8, signal: 3 },
        ],
        f.io,
        opts,
      ),
    ).toBe(30); // 8 gone at its fourth check (2, 6, 14, 30 ms)
  });
  test("never taken: gives up at the cap (undefined), never sleeping past it", () => {
    const f = io({ 7: [pending] });
    expect(awaitSignalsTaken([{ pid: 7, signal: 15 }], f.io, opts)).toBeUndefined();
    expect(f.sleeps).toEqual([2, 4, 8, 16]); // the last one cut to the cap
    expect(f.sleeps.reduce((a, b) => a + b, 0)).toBe(30);
  });
  test("a PID unknown: no check, the minimum wait", () => {
    const f = io({});
    expect(awaitSignalsTaken([{ pid: 0, signal: 15 }], f.io, opts)).toBeUndefined();
    expect(f.sleeps).toEqual([2]);
  });
});

describe("rehearseFastEviction: a dry run of the decision before the first crossing", () => {
  test("every step runs on a copy (the candidates read though no threshold is met), nothing is signalled, and the real plan stays armed as it was", () => {
    const buf = newFastPlanBuffer();
    const gen = publishPlan(buf, plan())!;
    const { io, signals } = fakeIo(pressure(500 * Mi), [5, 3, 4]); // 524 Mi available: not met
    const read: number[] = [];
    const counting: FastEvictIo = { ...io, pread: (fd, b) => (read.push(fd), io.pread(fd, b)) };
    expect(rehearseFastEviction(buf, dirs, counting)).toBe("the victim's containers have all exited");
    expect(read).toEqual(expect.arrayContaining([10, 11, 20, 22, 24, 23]));
    expect(signals).toEqual([]);
    expect(planState(buf)).toBe(PLAN_ARMED);
    expect(planGeneration(buf)).toBe(gen);
    // The real plan still decides on its own threshold: not met at 500 Mi, fired at 950 Mi.
    // A not-met step-aside says how each threshold was judged, for the crossing's log line.
    expect(tryFastEviction(buf, [7], dirs, io)).toMatchObject({
      fired: false,
      reason: NOT_MET_AT_WAKE_UP,
      detail: `token 7 (v1): available ${524 * Mi} > ${100 * Mi} of capacity ${1024 * Mi}`,
    });
    expect(tryFastEviction(buf, [7], dirs, fakeIo(pressure(), [5, 3, 4]).io)).toMatchObject({ fired: true, victim: 1 });
  });

  test("no armed plan: nothing to rehearse", () => {
    const buf = newFastPlanBuffer();
    expect(rehearseFastEviction(buf, dirs, fakeIo(pressure(), [5, 3, 4]).io)).toBeUndefined();
    publishPlan(buf, plan());
    tryFastEviction(buf, [7], dirs, fakeIo(pressure(), [5, 3, 4]).io); // fired: the plan is taken
    expect(rehearseFastEviction(buf, dirs, fakeIo(pressure(), [5, 3, 4]).io)).toBeUndefined();
  });
});
