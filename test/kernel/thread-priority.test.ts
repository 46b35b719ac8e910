import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { EPOLLIN, getpriority, PRIO_PROCESS } from "../../ffi/libc.ts";
import { Eventfd } from "../../src/kernel/eventfd.ts";
import { createNotifierHub, type NotifierHub } from "../../src/kernel/hub.ts";
import { applyThreadNice, boostThread, currentNices, endBoost, isBoosted, newBoostSpec, processThreads } from "../../src/kernel/thread-priority.ts";
import { pollUntil } from "../support/wait.ts";

/** The nice value of thread `tid` of process `pid`, from /proc (field 19 of stat). */
function niceOf(pid: number, tid = pid): number {
  const st = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
  return Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[16]);
}

const isRoot = process.getuid?.() === 0;

describe("thread priority: boost and end, on another thread", () => {
  let child: ReturnType<typeof Bun.spawn> | undefined;
  afterEach(() => {
    child?.kill("SIGKILL");
    child = undefined;
  });

  // A single-threaded child stands in for the main thread: its TID is its pid.
  test.skipIf(!isRoot)("boostThread raises once, endBoost lowers back to the base and is a no-op when not boosted", () => {
    child = Bun.spawn(["sleep", "30"]);
    const pid = child.pid;
    expect(niceOf(pid)).toBe(0);
    const spec = newBoostSpec(pid, -7);
    expect(isBoosted(spec)).toBe(false);
    expect(boostThread(spec)).toBeUndefined();
    expect(isBoosted(spec)).toBe(true);
    expect(niceOf(pid)).toBe(-7);
    // Already boosted: the flag says so and no syscall is made (a value set meanwhile stays).
    applyThreadNice(-3, pid);
    expect(boostThread(spec)).toBeUndefined();
    expect(niceOf(pid)).toBe(-3);
    expect(endBoost(spec, 0)).toBe(true);
    expect(isBoosted(spec)).toBe(false);
    expect(niceOf(pid)).toBe(0);
    applyThreadNice(2, pid);
    expect(endBoost(spec, 0)).toBe(false);
    expect(niceOf(pid)).toBe(2);
  });

  test.skipIf(!isRoot)("several threads: all raised together, each lowered back to its own base", () => {
    child = Bun.spawn(["sleep", "30"]);
    const other = Bun.spawn(["sleep", "30"]);
    try {
      applyThreadNice(3, other.pid);
      const tids = [child.pid, other.pid];
      const bases = currentNices(tids);
      expect(bases).toEqual([0, 3]);
      const spec = newBoostSpec(tids, -6);
      expect(boostThread(spec)).toBeUndefined();
      expect(tids.map((t) => niceOf(t))).toEqual([-6, -6]);
      expect(endBoost(spec, bases)).toBe(true);
      expect(tids.map((t) => niceOf(t))).toEqual([0, 3]);
    } finally {
      other.kill("SIGKILL");
    }
  });

  test("processThreads lists the process's threads, the main thread (TID = pid) first", () => {
    const tids = processThreads();
    expect(tids[0]).toBe(process.pid);
    expect(tids.length).toBeGreaterThan(1); // Bun's own threads
    expect(new Set(tids).size).toBe(tids.length);
  });

  test("a refused boost clears the flag and returns the errno code", () => {
    child = Bun.spawn(["sleep", "30"]);
    const pid = child.pid;
    child.kill("SIGKILL");
    // Not a thread any more once reaped: ESRCH.
    return child.exited.then(() => {
      const spec = newBoostSpec(pid, 0);
      expect(boostThread(spec)).toBe("ESRCH");
      expect(isBoosted(spec)).toBe(false);
    });
  });

  test("applyThreadNice reports the value in effect, or the errno when refused", () => {
    child = Bun.spawn(["sleep", "30"]);
    expect(applyThreadNice(4, child.pid)).toEqual({ applied: true, effective: 4 });
    expect(applyThreadNice(-21 as number, 999_999_999).applied).toBe(false);
  });
});

describe("NotifierHub priority options", () => {
  let hub: NotifierHub | undefined;
  const owned: Eventfd[] = [];
  afterEach(async () => {
    await hub?.close();
    hub = undefined;
    for (const e of owned.splice(0)) e.close();
  });

  test("the worker sets its own nice value; a wake-up marks the main thread boosted until endBoost()", async () => {
    const priorities: { what: string; applied: boolean; effective?: number }[] = [];
    // The boost value is this thread's own, so the test runner's priority never changes; the flag
    // protocol is what is checked. Raising the worker's nice needs no privilege.
    const own = getpriority(PRIO_PROCESS, 0);
    hub = createNotifierHub({ threadNice: 5, boostMainThreadNice: own, onPriority: (p) => priorities.push(p) });
    await pollUntil(() => priorities.length > 0, "the worker's priority report", 3000, 2);
    expect(priorities[0]).toEqual({ what: "thread", nice: 5, applied: true, effective: 5 } as never);
    // Exactly this process's notifier thread runs at 5 (other threads stay at the runner's value).
    const tids = readdirSync(`/proc/${process.pid}/task`).map(Number);
    expect(tids.filter((t) => niceOf(process.pid, t) === 5).length).toBeGreaterThanOrEqual(1);
    expect(niceOf(process.pid)).toBe(own);

    const e = new Eventfd();
    owned.push(e);
    let boostedInCallback: boolean | undefined;
    const h = hub;
    h.add({ fd: e.fd, events: EPOLLIN, onReady: () => void (e.drain(), (boostedInCallback = h.boosted)) });
    expect(h.boosted).toBe(false);
    e.signal();
    await pollUntil(() => boostedInCallback !== undefined, "the event", 3000, 2);
    expect(boostedInCallback).toBe(true);
    expect(h.endBoost()).toBe(true);
    expect(h.boosted).toBe(false);
    expect(h.endBoost()).toBe(false);
    expect(getpriority(PRIO_PROCESS, 0)).toBe(own);
  });

  test("without the options nothing is boosted and endBoost() is a no-op", async () => {
    hub = createNotifierHub();
    const e = new Eventfd();
    owned.push(e);
    let seen = false;
    hub.add({ fd: e.fd, events: EPOLLIN, onReady: () => void (e.drain(), (seen = true)) });
    e.signal();
    await pollUntil(() => seen, "the event", 3000, 2);
    expect(hub.boosted).toBe(false);
    expect(hub.endBoost()).toBe(false);
  });
});
