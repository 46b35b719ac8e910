import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { EPOLLIN, O_CLOEXEC, O_RDONLY, open, close as closeFd, read } from "../../ffi/libc.ts";
import { Epoll } from "../../src/kernel/epoll.ts";
import { Eventfd } from "../../src/kernel/eventfd.ts";
import { createNotifierHub, type NotifierHub } from "../../src/kernel/hub.ts";
import { notifierFds } from "../support/cgroup.ts";

const fdCount = notifierFds;
/** Threads blocked in epoll_wait that are Bun Workers (our notifier thread). */
const epollWorkers = () =>
  readdirSync("/proc/self/task").filter((t) => {
    try {
      return readFileSync(`/proc/self/task/${t}/comm`, "utf8").trim() === "Worker" && readFileSync(`/proc/self/task/${t}/wchan`, "utf8").includes("epoll");
    } catch {
      return false;
    }
  }).length;

async function until(cond: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

describe("Eventfd / Epoll", () => {
  test("close exactly once: a second close does not touch a reused fd number", () => {
    const before = fdCount();
    // Other threads of the runtime may grab the freed number first; retry until we get it.
    for (let attempt = 0; attempt < 50; attempt++) {
      const e = new Eventfd();
      const n = e.fd;
      e.close();
      const reused = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
      try {
        if (reused !== n) continue;
        e.close();
        expect(read(reused, new Uint8Array(16))).toBeGreaterThan(0);
        expect(fdCount()).toBe(before);
        return;
      } finally {
        closeFd(reused);
      }
    }
    throw new Error("the freed eventfd number was never reused in 50 attempts");
  });

  test("signal/drain counts; drain of an empty counter is 0; use after close throws", () => {
    const e = new Eventfd();
    try {
      expect(e.drain()).toBe(0);
      e.signal(2);
      e.signal(3);
      expect(e.drain()).toBe(5);
      expect(e.drain()).toBe(0);
    } finally {
      e.close();
    }
    expect(() => e.signal()).toThrow(/after close/);
  });

  test("epoll add/poll/remove; remove of an unknown fd is false", () => {
    const ep = new Epoll();
    const e = new Eventfd();
    try {
      ep.add(e.fd, EPOLLIN, 99);
      expect(ep.poll()).toEqual([]);
      e.signal();
      expect(ep.poll()).toEqual([{ events: EPOLLIN, data: 99 }]);
      expect(ep.remove(e.fd)).toBe(true);
      expect(ep.remove(e.fd)).toBe(false);
      expect(ep.poll()).toEqual([]);
    } finally {
      e.close();
      ep.close();
      ep.close();
    }
  });
});

describe("NotifierHub", () => {
  let hub: NotifierHub | undefined;
  const owned: Eventfd[] = [];
  afterEach(async () => {
    await hub?.close();
    hub = undefined;
    for (const e of owned.splice(0)) e.close();
  });

  test("delivers each source's events on the main thread; removed sources stay silent", async () => {
    hub = createNotifierHub();
    const a = new Eventfd();
    const b = new Eventfd();
    owned.push(a, b);
    const seen: string[] = [];
    const ra = hub.add({ fd: a.fd, events: EPOLLIN, onReady: () => a.drain() && seen.push("a") });
    hub.add({ fd: b.fd, events: EPOLLIN, onReady: () => b.drain() && seen.push("b") });
    expect(hub.size).toBe(2);
    a.signal();
    await until(() => seen.includes("a"), "a");
    b.signal();
    await until(() => seen.includes("b"), "b");
    // Re-armed after each event (EPOLLONESHOT + MOD): a fires again.
    a.signal();
    await until(() => seen.filter((s) => s === "a").length === 2, "a twice");
    ra.remove();
    ra.remove();
    expect(hub.size).toBe(1);
    a.signal();
    b.signal();
    await until(() => seen.filter((s) => s === "b").length === 2, "b twice");
    expect(seen.filter((s) => s === "a").length).toBe(2);
  });

  test("a throwing callback is reported and the hub keeps delivering", async () => {
    const errors: string[] = [];
    hub = createNotifierHub({ onError: (e) => errors.push(e.message) });
    const a = new Eventfd();
    owned.push(a);
    let calls = 0;
    hub.add({
      fd: a.fd,
      events: EPOLLIN,
      onReady() {
        a.drain();
        calls++;
        if (calls === 1) throw new Error("boom");
      },
    });
    a.signal();
    await until(() => calls === 1, "first call");
    a.signal();
    await until(() => calls === 2, "second call");
    expect(errors).toEqual(["boom"]);
  });

  test("close() stops the worker thread and frees the epoll and control fds", async () => {
    const fdsBefore = fdCount();
    const workersBefore = epollWorkers();
    const h = createNotifierHub();
    const a = new Eventfd();
    const r = h.add({ fd: a.fd, events: EPOLLIN, onReady: () => a.drain() });
    await until(() => epollWorkers() === workersBefore + 1, "worker in epoll_wait");
    expect(fdCount()).toBe(fdsBefore + 3);
    r.remove();
    a.close();
    await h.close();
    await h.close();
    expect(h.closed).toBe(true);
    expect(() => h.add({ fd: 0, events: EPOLLIN, onReady() {} })).toThrow(/closed/);
    await until(() => epollWorkers() === workersBefore, "worker gone");
    expect(fdCount()).toBe(fdsBefore);
  });
});
