// Real cgroup v1 memory thresholds: test cgroups under /sys/fs/cgroup/memory (each with a 512 MiB
// limit so the host is never at risk), children charged into them, events awaited with bounds.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SyscallError } from "../../../ffi/libc.ts";
import { armCgroupThreshold, type ThresholdEvent } from "../../../src/kernel/cgroup-threshold.ts";
import { createNotifierHub, type NotifierHub } from "../../../src/kernel/hub.ts";
import { createMemcgNotifierSet, createMemoryThresholdNotifier, MemcgThresholdError, type MemcgNotifierEvent } from "../../../src/kernel/memory-threshold.ts";
import type { Summary } from "../../../src/stats/summary.ts";
import { cgroupMemoryStats } from "../../../src/stats/cgroup.ts";
import { parseFlatKeyed } from "../../../src/kernel/cgroup-parse.ts";
import { canManageMemoryCgroups, makeMemoryCgroup, runFdFixture, spawnMemoryHog, waitFor, type TestCgroup } from "../../support/cgroup.ts";
import type { ThresholdFdsResult } from "./fixtures/threshold-fds.ts";
import type { KillPathFdsResult } from "./fixtures/kill-path-fds.ts";

const MiB = 1024 * 1024;
const enabled = canManageMemoryCgroups();
if (!enabled) console.warn("skipping memcg threshold tests: needs root and the cgroup v1 memory controller at /sys/fs/cgroup/memory");

const usage = (cg: TestCgroup) => Number(cg.read("memory.usage_in_bytes").trim());

describe.skipIf(!enabled)("cgroup v1 memory threshold notifier", () => {
  let hub: NotifierHub;
  const cgroups: TestCgroup[] = [];
  const children: Bun.Subprocess[] = [];

  beforeEach(() => {
    hub = createNotifierHub();
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      c.kill("SIGKILL");
      await c.exited;
    }
    await hub.close();
    for (const cg of cgroups.splice(0)) await cg.remove();
  });

  const cgroup = (limitBytes?: number) => {
    const cg = makeMemoryCgroup({ limitBytes });
    cgroups.push(cg);
    return cg;
  };
  const hog = async (cg: TestCgroup, mb: number) => {
    const child = spawnMemoryHog(cg, mb);
    children.push(child);
    const reader = child.stdout.getReader();
    const { value } = await Promise.race([
      reader.read(),
      Bun.sleep(15_000).then(() => {
        throw new Error(`memory hog (${mb} MiB) did not start within 15 s`);
      }),
    ]);
    reader.releaseLock();
    expect(new TextDecoder().decode(value)).toContain("ready");
    return child;
  };

  test("crossing the threshold upward fires an event on the main thread", async () => {
    const cg = cgroup();
    const threshold = usage(cg) + 48 * MiB;
    const events: ThresholdEvent[] = [];
    const n = await armCgroupThreshold(hub, { cgroupPath: cg.path, thresholdBytes: threshold, onEvent: (e) => events.push(e) });
    await hog(cg, 96);
    await waitFor(() => events.length > 0, "threshold event", 10_000);
    expect(events[0]!.cgroupPath).toBe(cg.path);
    expect(events[0]!.thresholdBytes).toBe(threshold);
    expect(events[0]!.count).toBeGreaterThanOrEqual(1);
    expect(events[0]!.usageBytes).toBeGreaterThanOrEqual(threshold - 4 * MiB);
    n.stop();
    expect(n.stopped).toBe(true);
    expect(hub.size).toBe(0);
  }, 30_000);

  test("no event while usage stays below the threshold", async () => {
    const cg = cgroup();
    const events: ThresholdEvent[] = [];
    await armCgroupThreshold(hub, { cgroupPath: cg.path, thresholdBytes: 400 * MiB, onEvent: (e) => events.push(e) });
    await hog(cg, 16);
    await Bun.sleep(300); // bounded negative wait: the event would arrive in < 1 ms
    expect(usage(cg)).toBeLessThan(400 * MiB);
    expect(events).toEqual([]);
  }, 30_000);

  test("several notifiers share one epoll set and each fires for its own cgroup", async () => {
    const a = cgroup();
    const b = cgroup();
    const seen: string[] = [];
    await armCgroupThreshold(hub, { cgroupPath: a.path, thresholdBytes: usage(a) + 32 * MiB, onEvent: (e) => seen.push(e.cgroupPath) });
    await armCgroupThreshold(hub, { cgroupPath: b.path, thresholdBytes: usage(b) + 32 * MiB, onEvent: (e) => seen.push(e.cgroupPath) });
    await armCgroupThreshold(hub, { cgroupPath: b.path, thresholdBytes: 450 * MiB, onEvent: (e) => seen.push(`${e.cgroupPath}@450`) });
    expect(hub.size).toBe(3);
    await hog(a, 64);
    await waitFor(() => seen.includes(a.path), "cgroup a event", 10_000);
    expect(seen).not.toContain(b.path);
    await hog(b, 64);
    await waitFor(() => seen.includes(b.path), "cgroup b event", 10_000);
    expect(seen.filter((s) => s.endsWith("@450"))).toEqual([]);
  }, 30_000);

  test("removing a watched cgroup is reported as removal, not a threshold event", async () => {
    const cg = cgroup();
    const events: ThresholdEvent[] = [];
    let removed: string | undefined;
    const n = await armCgroupThreshold(hub, {
      cgroupPath: cg.path,
      thresholdBytes: 300 * MiB,
      onEvent: (e) => events.push(e),
      onRemoved: (p) => (removed = p),
    });
    await cg.remove();
    await waitFor(() => removed !== undefined, "removal report", 5000);
    expect(removed).toBe(cg.path);
    expect(events).toEqual([]);
    expect(n.stopped).toBe(true);
    expect(hub.size).toBe(0);
  }, 30_000);

  test("armCgroupThreshold registers off the event loop: timers keep running during the kernel's wait, then it fires", async () => {
    // The registration write waits for an RCU grace period, usually milliseconds: a blocking write
    // would let no timer run before it returns. A grace period can also end in well under a timer
    // tick, when nothing can be observed either way, so the check uses the first registration that
    // took long enough (≥ 3 ms) for a free event loop to run a 0 ms interval.
    const cg = cgroup();
    const events: ThresholdEvent[] = [];
    let observed: { ticks: number; ms: number } | undefined;
    let n: Awaited<ReturnType<typeof armCgroupThreshold>> | undefined;
    for (let attempt = 0; attempt < 20 && observed === undefined; attempt++) {
      n?.stop();
      let ticks = 0;
      const tick = setInterval(() => ticks++, 0);
      const t0 = performance.now();
      try {
        n = await armCgroupThreshold(hub, { cgroupPath: cg.path, thresholdBytes: usage(cg) + 32 * MiB, onEvent: (e) => events.push(e) });
      } finally {
        clearInterval(tick);
      }
      const ms = performance.now() - t0;
      if (ms >= 3) observed = { ticks, ms };
    }
    if (observed === undefined) console.warn("every registration ended in < 3 ms: the event-loop check could not be observed on this host");
    else expect(observed.ticks).toBeGreaterThan(0);
    expect(hub.size).toBe(1);
    await hog(cg, 48);
    await waitFor(() => events.length > 0, "threshold event", 10_000);
    n!.stop();
    expect(hub.size).toBe(0);
  }, 30_000);

  test("armCgroupThreshold on a missing cgroup rejects with ENOENT naming the file", async () => {
    const path = `/sys/fs/cgroup/memory/bunlet-missing-${process.pid}`;
    const err = await armCgroupThreshold(hub, { cgroupPath: path, thresholdBytes: 1, onEvent() {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SyscallError);
    expect((err as SyscallError).code).toBe("ENOENT");
    expect((err as SyscallError).path).toBe(join(path, "memory.usage_in_bytes"));
    expect(hub.size).toBe(0);
  });

  test("overlapping re-arms end on the last value; a stop during arming leaves nothing armed", async () => {
    const cg = cgroup();
    const n = createMemoryThresholdNotifier({
      hub,
      cgroupPath: cg.path,
      signal: "memory.available",
      hard: true,
      description: "hard memory eviction threshold",
      onEvent() {},
    });
    const first = n.updateThreshold(300 * MiB);
    const second = n.updateThreshold(310 * MiB);
    await Promise.all([first, second]);
    expect(n.armedBytes).toBe(310 * MiB);
    expect(hub.size).toBe(1); // the 300 MiB registration was replaced, not kept next to it
    const pending = n.updateThreshold(320 * MiB);
    n.stop();
    await pending;
    expect(n.armedBytes).toBeUndefined();
    expect(hub.size).toBe(0);
  }, 30_000);

  test("the kill path under an fd flood: the wake-up reads usage and stats and signals the victim without opening a file", async () => {
    // Its own process: it lowers RLIMIT_NOFILE and fills its fd table before the cgroup crosses.
    const cg = cgroup();
    const r = await runFdFixture<KillPathFdsResult>(join(import.meta.dir, "fixtures/kill-path-fds.ts"), [cg.path], 30_000);
    expect(r.floodErrno).toBe("EMFILE");
    expect(r.floodFds).toBeGreaterThan(0);
    expect(r.eventUsageBytes).toBeGreaterThanOrEqual(r.thresholdBytes);
    expect(r.statReadUnderFlood).toBe(true);
    expect(r.boostedOnEvent).toBe(true);
    expect(r.signalled).toBe(true);
    expect(r.victimSignal).toBe("SIGTERM");
  }, 40_000);

  test("stop and hub close free every fd", async () => {
    // Exact fd accounting runs in a child process of its own: in this one, Bun's threads and other
    // test files' Workers open and close eventfd/epoll fds at any moment.
    const cg = cgroup();
    const r = await runFdFixture<ThresholdFdsResult>(join(import.meta.dir, "fixtures/threshold-fds.ts"), [cg.path]);
    // One eventfd per notifier, all in the hub's one epoll set next to its control eventfd.
    expect(r.addedByStart.map((t) => Object.values(t))).toEqual([["eventfd"], ["eventfd"], ["eventfd"]]);
    const efds = r.addedByStart.map((t) => Number(Object.keys(t)[0]));
    expect(r.sizeAfterStart).toBe(3);
    expect(r.hubEpolls).toHaveLength(1);
    const hubEpoll = r.hubEpolls[0]!;
    expect(r.hubOpened[hubEpoll]).toBe("eventpoll");
    expect(r.watched).toHaveLength(4);
    const control = r.watched.find((fd) => !efds.includes(fd))!;
    expect(r.hubOpened[control]).toBe("eventfd");
    // Each stop() closes exactly its own eventfd and leaves the epoll set with the control fd only.
    expect(r.closedByStop).toEqual(efds.map((fd) => [fd]));
    expect(r.watchedAfterStops).toEqual([control]);
    expect(r.sizeAfterStops).toBe(0);
    // hub.close() frees the epoll and control fds; once its Worker has exited nothing is left over.
    expect(r.hubFdsOpenAfterClose).toEqual([]);
    expect(r.workersAfter).toBe(0);
    expect(r.after).toEqual(r.before);
  }, 30_000);

  test("memcg notifier set (eviction manager hook) arms, re-arms on a new value, fires, and stops", async () => {
    const root = cgroup();
    const pods = makeMemoryCgroup({ root: root.path, prefix: "kubepods" });
    cgroups.unshift(pods); // removed before its parent
    const events: MemcgNotifierEvent[] = [];
    const set = createMemcgNotifierSet({ hub, memoryCgroupRoot: root.path, podsCgroup: pods.path.slice(root.path.length + 1), onEvent: (e) => events.push(e) });
    const target = (bytes: number) => ({
      signal: "allocatableMemory.available" as const,
      cgroup: "pods" as const,
      hard: true,
      description: "hard allocatable memory eviction threshold",
      thresholdBytes: bytes,
    });
    expect(await set.apply([target(450 * MiB)])).toEqual([]);
    const n = [...set.notifiers.values()][0]!;
    expect(n.cgroupPath).toBe(pods.path);
    expect(n.armedBytes).toBe(450 * MiB);
    expect(hub.size).toBe(1);
    await set.apply([target(Number(pods.read("memory.usage_in_bytes")) + 32 * MiB)]);
    expect(hub.size).toBe(1); // replaced, not added
    await hog(pods, 64);
    await waitFor(() => events.length > 0, "allocatable threshold event", 10_000);
    expect(events[0]!.description).toBe("hard allocatable memory eviction threshold");
    expect(events[0]!.signal).toBe("allocatableMemory.available");
    await set.apply([]);
    expect(set.notifiers.size).toBe(0);
    expect(hub.size).toBe(0);
    // Two thresholds with the same signal and description (hard 300Mi and 100Mi copied onto
    // allocatable) are two notifiers, each armed at its own value — not one overwriting the other.
    expect(
      await set.apply([
        { ...target(400 * MiB), id: "allocatableMemory.available#0" },
        { ...target(450 * MiB), id: "allocatableMemory.available#1" },
      ]),
    ).toEqual([]);
    expect([...set.notifiers.values()].map((x) => x.armedBytes).sort()).toEqual([400 * MiB, 450 * MiB]);
    expect(hub.size).toBe(2);
    await set.apply([]);
    expect(hub.size).toBe(0);
  }, 30_000);

  test("updateFromSummary arms capacity − threshold + inactive_file from the node stats (upstream UpdateThreshold)", async () => {
    const cg = cgroup();
    const events: MemcgNotifierEvent[] = [];
    const n = createMemoryThresholdNotifier({
      hub,
      cgroupPath: cg.path,
      signal: "memory.available",
      hard: true,
      description: "hard memory eviction threshold",
      threshold: { quantity: 400 * MiB },
      onEvent: (e) => events.push(e),
    });
    // A node of 512 MiB capacity with this cgroup's usage; inactive_file is usage − workingSet.
    const u = usage(cg);
    const mem = { time: "T", usageBytes: u, workingSetBytes: u, availableBytes: 512 * MiB - u };
    const summary: Summary = { node: { nodeName: "n", memory: mem }, pods: [] };
    expect(await n.updateFromSummary(summary)).toBe(112 * MiB);
    expect(n.armedBytes).toBe(112 * MiB);
    const noStats: Summary = { node: { nodeName: "n" }, pods: [] };
    await expect(n.updateFromSummary(noStats)).rejects.toThrow(MemcgThresholdError);
    expect(n.armedBytes).toBe(112 * MiB); // the old registration stays when stats are missing
    await hog(cg, 144);
    await waitFor(() => events.length > 0, "threshold event", 10_000);
    expect(events[0]!.thresholdBytes).toBe(112 * MiB);
    n.stop();
    expect(hub.size).toBe(0);
  }, 30_000);

  test("cgroupMemoryStats: working set = usage − total_inactive_file of the cgroup's files", async () => {
    const cg = cgroup();
    await hog(cg, 32);
    const stats = cgroupMemoryStats(cg.path, "T");
    const fileUsage = usage(cg);
    const stat = parseFlatKeyed(cg.read("memory.stat"));
    expect(stats.usageBytes).toBeGreaterThan(32 * MiB);
    // An idle child: the files barely move between our two reads.
    expect(Math.abs(stats.usageBytes! - fileUsage)).toBeLessThan(MiB);
    expect(Math.abs(stats.workingSetBytes! - Math.max(0, fileUsage - stat.total_inactive_file!))).toBeLessThan(MiB);
    expect(Math.abs(stats.rssBytes! - stat.total_rss!)).toBeLessThan(MiB);
    expect(stats.availableBytes).toBe(512 * MiB - stats.workingSetBytes!);
  }, 30_000);

  test("the main thread keeps serving HTTP while the notifier waits and fires", async () => {
    const cg = cgroup();
    const events: ThresholdEvent[] = [];
    await armCgroupThreshold(hub, { cgroupPath: cg.path, thresholdBytes: usage(cg) + 32 * MiB, onEvent: (e) => events.push(e) });
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });
    try {
      const url = `http://127.0.0.1:${server.port}/`;
      expect(await (await fetch(url)).text()).toBe("ok");
      await hog(cg, 64);
      await waitFor(() => events.length > 0, "threshold event", 10_000);
      expect(await (await fetch(url)).text()).toBe("ok");
    } finally {
      server.stop(true);
    }
  }, 30_000);

  test("node memory from the root cgroup agrees with its files", () => {
    const stats = cgroupMemoryStats("/sys/fs/cgroup/memory", "T");
    const u = Number(readFileSync("/sys/fs/cgroup/memory/memory.usage_in_bytes", "utf8"));
    expect(Math.abs(stats.usageBytes! - u)).toBeLessThan(256 * MiB);
    expect(stats.workingSetBytes).toBeLessThanOrEqual(stats.usageBytes!);
  });
});
