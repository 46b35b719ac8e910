// The main thread's plan for the notifier-thread eviction (wire/fast-eviction.ts), on cgroup v2 files
// laid out in a temporary directory and real processes standing in for container inits: what the
// working-set thread would do with the plan is asked of tryFastEviction itself (signals recorded, not sent).
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { close, pidfd_open, pread } from "../../ffi/libc.ts";
import { parseQuantity } from "../../src/config/quantity.ts";
import type { EvictionConfig, EvictionManager } from "../../src/eviction/index.ts";
import type { Threshold } from "../../src/eviction/threshold.ts";
import { dirLinks, planGeneration, tryFastEviction, type FastEvictIo } from "../../src/kernel/fast-evict.ts";
import type { ArmedThreshold } from "../../src/kernel/memory-notifiers.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";
import type { PodStatus } from "../../src/pod/types.ts";
import type { Summary } from "../../src/stats/summary.ts";
import { createFastEvictionPlanner, type FastEvictionPlanner, type FastEvictionPlannerInput } from "../../src/wire/fast-eviction.ts";

const MiB = 2 ** 20;
const TOKEN = 1 << 24;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function node() {
  const root = mkdtempSync(join(tmpdir(), "fast-plan-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const kubepods = join(root, "kubepods");
  for (const d of [kubepods, join(kubepods, "burstable"), join(kubepods, "besteffort")]) mkdirSync(d, { recursive: true });
  const cgroup = (dir: string, usageBytes: number) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "memory.current"), `${usageBytes}\n`);
    writeFileSync(join(dir, "memory.stat"), "anon 0\nfile 0\ninactive_file 0\n");
  };
  // kubepods over its line: capacity 256 MiB, threshold 100 MiB available, working set 200 MiB.
  cgroup(kubepods, 200 * MiB);
  return { root, kubepods, cgroup };
}

/** A process standing in for a container's init: its PID and the signaller's own pidfd on it. */
function init(): { pid: number; pidfd: number } {
  const child = Bun.spawn(["sleep", "60"], { stdout: "ignore", stderr: "ignore" });
  const pidfd = pidfd_open(child.pid);
  cleanups.push(() => {
    child.kill("SIGKILL");
    close(pidfd);
  });
  return { pid: child.pid, pidfd };
}

const burstable = (name: string): PodLike => ({
  metadata: { name, namespace: "default", uid: `uid-${name}` },
  spec: { containers: [{ name: "c", resources: { requests: { memory: "1Mi" } } }] },
});

const running = (id: string): PodStatus =>
  ({ phase: "Running", containerStatuses: [{ name: "c", containerID: `containerd://${id}`, state: { running: { startedAt: "" } } }] }) as unknown as PodStatus;

function setup() {
  const n = node();
  const threshold: Threshold = { signal: "allocatableMemory.available", operator: "LessThan", value: { quantity: parseQuantity("100Mi") }, gracePeriodMs: 0 };
  const summary = {
    node: {
      nodeName: "n",
      systemContainers: [{ name: "pods", memory: { time: new Date().toISOString(), availableBytes: 100 * MiB, workingSetBytes: 156 * MiB } }],
    },
    pods: [],
  } as unknown as Summary;
  const state = { initialized: true, lastSummary: summary, inFlight: new Map(), thresholdsMet: [], thresholds: [threshold] };
  const pods: PodLike[] = [];
  const statuses = new Map<string, PodStatus>();
  const known = new Map<string, { containerId: string; pid: number; pidfd: number; stopSignal: number }[]>();
  const knownListeners = new Set<(uid: string) => void>();
  const removedListeners = new Set<(uid: string) => void>();
  const clock = { ms: 1_000_000 };
  const planner = createFastEvictionPlanner({
    now: () => clock.ms,
    config: { thresholds: [threshold], evictStaticPods: false } as unknown as EvictionConfig,
    manager: () => ({ state: () => state }) as unknown as EvictionManager,
    lifecycle: { activePods: () => [...pods], getPodStatus: (uid: string) => statuses.get(uid) } as unknown as FastEvictionPlannerInput["lifecycle"],
    memoryRoot: n.root,
    cgroupVersion: 2,
    podCgroupPath: (p) => `kubepods/${p.spec.containers[0]?.resources?.requests ? "burstable/" : "besteffort/"}pod${p.metadata.uid}`,
    armedThresholds: (): ArmedThreshold[] => [{ signal: "allocatableMemory.available", hard: true, token: TOKEN, cgroupPath: n.kubepods, files: "v2" }],
    signaller: {
      knownContainers: (uid) => known.get(uid) ?? [],
      onKnown(fn) {
        knownListeners.add(fn);
        return () => knownListeners.delete(fn);
      },
    },
    onPodCgroupRemoved(fn) {
      removedListeners.add(fn);
      return () => removedListeners.delete(fn);
    },
  });
  cleanups.push(() => planner.stop());
  /** A pod whose container runs, using `usageBytes`; `learnt`: the signaller knows its init already. */
  const addPod = (name: string, usageBytes: number, learnt: boolean) => {
    const pod = burstable(name);
    const uid = pod.metadata.uid!;
    n.cgroup(join(n.root, planner_path(pod)), usageBytes);
    pods.push(pod);
    statuses.set(uid, running(`ctr-${name}`));
    const p = init();
    const learn = () => {
      known.set(uid, [{ containerId: `ctr-${name}`, pid: p.pid, pidfd: p.pidfd, stopSignal: 15 }]);
      for (const fn of knownListeners) fn(uid);
    };
    if (learnt) known.set(uid, [{ containerId: `ctr-${name}`, pid: p.pid, pidfd: p.pidfd, stopSignal: 15 }]);
    return { pod, pid: p.pid, learn };
  };
  const planner_path = (p: PodLike) => `kubepods/burstable/pod${p.metadata.uid}`;
  const dirs = planner.dirs;
  /** What the working-set thread would do at a crossing now (signals recorded, not sent). */
  const crossing = (p: FastEvictionPlanner) => {
    const signalled: number[] = [];
    const io: FastEvictIo = { pread: (fd, buf) => pread(fd, buf, 0), signal: (pidfd) => void signalled.push(pidfd), dirLinks, now: () => Date.now() };
    const out = tryFastEviction(p.buffer, [TOKEN], dirs, io);
    return { out, signalled };
  };
  /** Time passes (the planner's clock only: no timer fires). */
  const later = (ms = 1000) => void (clock.ms += ms);
  /** The pod cgroup manager's word that it removed a pod's cgroup. */
  const removed = (uid: string) => {
    for (const fn of removedListeners) fn(uid);
  };
  /** The pod cgroup manager removes a pod's cgroup (as at housekeeping) and says so. */
  const removeCgroup = (pod: PodLike) => {
    const dir = join(n.root, planner_path(pod));
    for (const f of ["memory.current", "memory.stat"]) rmSync(join(dir, f));
    rmdirSync(dir);
    removed(pod.metadata.uid!);
  };
  return { n, planner, addPod, crossing, later, removed, removeCgroup, pods };
}

/** Lets queued microtasks run (no timer: what the planner does "at once"). */
const microtasks = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe("fast eviction planner", () => {
  test("a pod started after the last plan is in the next one as soon as its init is known, without a timer", async () => {
    const { planner, addPod, crossing, later } = setup();
    addPod("idle", 10 * MiB, true);
    planner.refresh();
    expect(planner.why).toBeUndefined();

    // The ramp pod: admitted, its container running (a status change), its init not learnt yet.
    later();
    const ramp = addPod("ramp", 150 * MiB, false);
    planner.invalidate();
    await microtasks();
    const before = crossing(planner);
    expect(before.out).toMatchObject({ fired: false, reason: "the victim's containers are not all known to the direct signaller yet" });

    // The signaller learns its init: the plan names it at once.
    later();
    ramp.learn();
    await microtasks();
    const after = crossing(planner);
    expect(after.out).toMatchObject({ fired: true, signalled: 1, sent: [{ pid: ramp.pid, signal: 15 }] });
  });

  test("a pod change re-plans right away, not after a timer", async () => {
    const { planner, addPod, crossing, later } = setup();
    addPod("idle", 10 * MiB, true);
    planner.refresh();
    later();
    const ramp = addPod("ramp", 150 * MiB, true);
    planner.invalidate();
    await microtasks();
    expect(planner.why).toBeUndefined();
    expect(crossing(planner).out).toMatchObject({ fired: true, sent: [{ pid: ramp.pid }] });
  });

  test("a pod cgroup removed by the agent with no pod change (housekeeping) re-plans at once, without a timer", async () => {
    const { planner, addPod, crossing, later, removeCgroup, pods } = setup();
    const gone = addPod("gone", 1 * MiB, true);
    const ramp = addPod("ramp", 150 * MiB, true);
    planner.refresh();
    const generation = planGeneration(planner.buffer);
    // The first pod left the active list earlier; its cgroup goes now, and only the cgroup manager says so.
    pods.splice(pods.indexOf(gone.pod), 1);
    later();
    removeCgroup(gone.pod);
    await microtasks();
    expect(planGeneration(planner.buffer)).toBeGreaterThan(generation);
    expect(planner.why).toBeUndefined();
    expect(crossing(planner).out).toMatchObject({ fired: true, sent: [{ pid: ramp.pid }] });
  });

  test("a pod cgroup removal that leaves the plan's link counts as they were does not re-plan", async () => {
    const { planner, addPod, later, removed } = setup();
    addPod("idle", 10 * MiB, true);
    planner.refresh();
    const generation = planGeneration(planner.buffer);
    later();
    // A terminated pod's removePod that found no cgroup of its (never made, or gone already).
    removed("uid-never-started");
    await microtasks();
    expect(planGeneration(planner.buffer)).toBe(generation);
    expect(planner.why).toBeUndefined();
  });
});
