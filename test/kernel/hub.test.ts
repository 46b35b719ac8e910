import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { EPOLLIN } from "../../ffi/libc.ts";
import { Epoll } from "../../src/kernel/epoll.ts";
import { Eventfd } from "../../src/kernel/eventfd.ts";
import { createNotifierHub, type NotifierHub } from "../../src/kernel/hub.ts";
import { runFdFixture } from "../support/cgroup.ts";
import type { CloseTwiceResult, HubCloseResult } from "./fixtures/hub-fds.ts";
import { pollUntil } from "../support/wait.ts";

// Exact fd and thread accounting runs in a child process of its own: in this one, Bun's threads
// and other test files' Workers open and close eventfd/epoll fds at any moment.
const HUB_FDS = join(import.meta.dir, "fixtures/hub-fds.ts");

/** Polls every 2 ms, 3 s at most. */
const until = (cond: () => boolean, what: string, timeoutMs = 3000) => pollUntil(cond, what, timeoutMs, 2);

describe("Eventfd / Epoll", () => {
  test("close exactly once: a second close does not touch a reused fd number", async () => {
    const r = await runFdFixture<{ before: object; results: CloseTwiceResult[]; after: object }>(HUB_FDS, ["close-twice"]);
    expect(r.results.map((x) => x.kind)).toEqual(["Eventfd", "Epoll"]);
    for (const x of r.results) {
      // In the quiet child the freed number goes to the next open(); the second close must leave it open.
      expect(x.reusedFd).toBe(x.fd);
      expect(x.readAfterSecondClose).toBeGreaterThan(0);
    }
    expect(r.after).toEqual(r.before);
  }, 15_000);

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
    const r = await runFdFixture<HubCloseResult>(HUB_FDS, ["hub-close"]);
    expect(r.workersInEpollWait).toBe(1);
    // Exactly one new epoll set watches the source: the hub's, watching the source and its control eventfd.
    expect(r.hubEpolls).toHaveLength(1);
    const hubEpoll = r.hubEpolls[0]!;
    expect(r.watched).toHaveLength(2);
    expect(r.watched).toContain(r.sourceFd);
    const control = r.watched.find((fd) => fd !== r.sourceFd)!;
    expect(r.opened[hubEpoll]).toBe("eventpoll");
    expect(r.opened[control]).toBe("eventfd");
    expect(r.opened[r.sourceFd]).toBe("eventfd");
    expect(r.watchedAfterRemove).toEqual([control]);
    // close() (twice) frees the hub's own fds before it resolves ...
    expect(r.hubFdsOpenAfterClose).toEqual([]);
    expect(r.closed).toBe(true);
    expect(r.addAfterClose).toMatch(/closed/);
    // ... and ends the Worker, whose thread takes its runtime's fds with it: nothing is left over.
    expect(r.workersAfter).toBe(0);
    expect(r.after).toEqual(r.before);
  }, 15_000);
});
