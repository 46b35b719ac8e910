// The shutdown manager's whole sequence against a fake logind and a manual clock: inhibit delay
// raised, delay lock held, PrepareForShutdown(true) → regular pods killed with their bounded grace,
// critical pods after the regular group finished or timed out, lock released; cancellation re-locks.
import { describe, expect, test } from "bun:test";
import { createManualClock } from "../../../src/manual-clock.ts";
import { createShutdownManager, type Logind } from "../../../src/node/shutdown/manager.ts";
import { shutdownGroupsFromConfig } from "../../../src/node/shutdown/priority-groups.ts";
import type { PodLike } from "../../../src/pod/pod-like.ts";
import type { KillPodRequest } from "../../../src/pod/lifecycle-types.ts";

const pod = (name: string, priority?: number, terminationGracePeriodSeconds?: number): PodLike => ({
  metadata: { name, namespace: "default", uid: name },
  spec: { containers: [], priority, terminationGracePeriodSeconds },
});
const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function fakeLogind(opts: { delayMs?: number; reloadTakes?: boolean } = {}) {
  const calls: string[] = [];
  let delayMs = opts.delayMs ?? 5000;
  let written = 0;
  let held = 0;
  let emit: ((s: boolean) => void) | undefined;
  let end: ((e: Error) => void) | undefined;
  const logind: Logind = {
    async currentInhibitDelayMs() {
      return delayMs;
    },
    async overrideInhibitDelay(ms) {
      calls.push(`override ${ms}`);
      written = ms;
    },
    async reloadLogindConf() {
      calls.push("reload");
      if (opts.reloadTakes !== false) delayMs = written;
    },
    async inhibitShutdown() {
      calls.push("inhibit");
      held++;
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          held--;
          calls.push("release");
        },
      };
    },
    async monitorShutdown(onEvent, onEnd) {
      calls.push("monitor");
      emit = onEvent;
      end = onEnd;
    },
    close() {
      calls.push("close");
    },
  };
  return { logind, calls, held: () => held, emit: (s: boolean) => emit!(s), end: (e: Error) => end!(e) };
}

function setup(pods: PodLike[], config: Parameters<typeof shutdownGroupsFromConfig>[0], lg = fakeLogind()) {
  const clock = createManualClock(0);
  const kills: { pod: string; grace: number; atMs: number; req: KillPodRequest }[] = [];
  const finish = new Map<string, () => void>();
  const events: string[] = [];
  let statusSyncs = 0;
  const recorded: string[] = [];
  const m = createShutdownManager({
    groups: shutdownGroupsFromConfig(config),
    logind: () => lg.logind,
    activePods: () => pods,
    killPod: (p, grace, req) => {
      kills.push({ pod: p.metadata.name, grace, atMs: clock.now(), req });
      return new Promise<void>((r) => finish.set(p.metadata.name, r));
    },
    clock,
    nodeName: "n1",
    recorder: { event: (_ref, type, reason, message) => void events.push(`${type} ${reason} ${message}`) },
    onStatusChange: () => void statusSyncs++,
    reloadPollMs: 100,
    record: { start: (ms) => void recorded.push(`start ${ms}`), end: (ms) => void recorded.push(`end ${ms}`) },
  });
  return { m, lg, clock, kills, finish, events, recorded, statusSyncs: () => statusSyncs };
}

describe("node shutdown manager", () => {
  test("regular pods first with (total − critical) as their bound, critical pods after the timeout, then the lock goes", async () => {
    const s = setup([pod("app"), pod("critical", 2_000_001_000), pod("quick", 0, 3)], { shutdownGracePeriod: "30s", shutdownGracePeriodCriticalPods: "10s" });
    await s.m.start();
    expect(s.lg.calls).toEqual(["override 30000", "reload", "inhibit", "monitor"]);
    expect(s.lg.held()).toBe(1);
    expect(s.m.admit(pod("new")).admit).toBe(true);
    expect(s.m.shutdownStatus()).toBeUndefined();

    s.lg.emit(true);
    await flush();
    expect(s.m.shutdownStatus()).toBe("node is shutting down");
    expect(s.m.admit(pod("new"))).toEqual({ admit: false, reason: "NodeShutdown", message: "Pod was rejected as the node is shutting down." });
    expect(s.events).toEqual(["Normal Shutdown Shutdown manager detected shutdown event"]);
    expect(s.statusSyncs()).toBe(1);
    expect(s.kills.map((k) => [k.pod, k.grace, k.atMs])).toEqual([
      ["app", 20, 0],
      ["quick", 3, 0],
    ]);
    expect(s.kills[0]!.req).toEqual({ reason: "Terminated", message: "Pod was terminated in response to imminent node shutdown." });

    // The regular group's pods never finish: the critical group starts when its 20 s are up.
    s.clock.advance(19_999);
    await flush();
    expect(s.kills.length).toBe(2);
    s.clock.advance(1);
    await flush();
    expect(s.kills.map((k) => [k.pod, k.grace, k.atMs])).toContainEqual(["critical", 10, 20_000]);
    expect(s.lg.held()).toBe(1);

    s.clock.advance(2_000);
    s.finish.get("critical")!();
    await s.m.idle();
    expect(s.lg.held()).toBe(0);
    expect(s.lg.calls.at(-1)).toBe("release");
    expect(s.recorded).toEqual(["start 0", "end 22000"]);
    // Still shutting down (not Ready, no admission) until logind says otherwise.
    expect(s.m.shutdownStatus()).toBe("node is shutting down");
    s.m.stop();
  });

  test("a group whose pods all stopped lets the next start at once", async () => {
    const s = setup([pod("app"), pod("critical", 2_000_000_000)], { shutdownGracePeriod: "30s", shutdownGracePeriodCriticalPods: "10s" });
    await s.m.start();
    s.lg.emit(true);
    await flush();
    s.clock.advance(1500);
    s.finish.get("app")!();
    await flush();
    expect(s.kills.map((k) => [k.pod, k.atMs])).toEqual([
      ["app", 0],
      ["critical", 1500],
    ]);
    s.finish.get("critical")!();
    await s.m.idle();
    expect(s.lg.held()).toBe(0);
    s.m.stop();
  });

  test("shutdown cancelled: the lock is taken again and pods are admitted", async () => {
    const s = setup([], { shutdownGracePeriod: "10s" });
    await s.m.start();
    s.lg.emit(true);
    await s.m.idle();
    expect(s.lg.held()).toBe(0);
    s.lg.emit(false);
    await s.m.idle();
    expect(s.lg.held()).toBe(1);
    expect(s.m.shutdownStatus()).toBeUndefined();
    expect(s.m.admit(pod("new")).admit).toBe(true);
    expect(s.events).toEqual(["Normal Shutdown Shutdown manager detected shutdown event", "Normal Shutdown Shutdown manager detected shutdown cancellation"]);
    s.m.stop();
    expect(s.lg.held()).toBe(0);
  });

  test("logind's delay already long enough: no drop-in, no reload", async () => {
    const s = setup([], { shutdownGracePeriod: "30s" }, fakeLogind({ delayMs: 60_000 }));
    await s.m.start();
    expect(s.lg.calls).toEqual(["inhibit", "monitor"]);
    s.m.stop();
  });

  test("logind keeps a shorter delay: start fails with upstream's message and holds no lock", async () => {
    const s = setup([], { shutdownGracePeriod: "30s" }, fakeLogind({ reloadTakes: false }));
    const started = s.m.start();
    for (let i = 0; i < 25; i++) {
      await flush();
      s.clock.advance(100);
    }
    await expect(started).rejects.toThrow(
      "node shutdown manager was timed out after 20 attempts waiting for logind InhibitDelayMaxSec to update to 30s (ShutdownGracePeriod), current value is 5s",
    );
    expect(s.lg.held()).toBe(0);
  });

  test("graceful shutdown off: logind is never asked", async () => {
    let asked = false;
    const clock = createManualClock(0);
    const m = createShutdownManager({
      groups: [],
      logind: () => ((asked = true), fakeLogind().logind),
      activePods: () => [],
      killPod: async () => {},
      clock,
      nodeName: "n1",
    });
    await m.start();
    expect(asked).toBe(false);
    expect(m.admit(pod("p")).admit).toBe(true);
  });

  test("the bus goes away: a new connection takes a lock again after 1 s", async () => {
    const s = setup([], { shutdownGracePeriod: "10s" }, fakeLogind({ delayMs: 60_000 }));
    await s.m.start();
    s.lg.end(new Error("connection closed"));
    expect(s.lg.calls.at(-1)).toBe("close");
    s.clock.advance(1000);
    await flush();
    expect(s.lg.calls.slice(-3)).toEqual(["inhibit", "release", "monitor"]);
    expect(s.lg.held()).toBe(1);
    s.m.stop();
  });
});
