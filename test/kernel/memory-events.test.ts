// memory.events needs a cgroup v2 memory controller, which this kind of host binds to v1; the
// watcher's inotify path is exercised on a regular file (epoll refuses those with EPERM).
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNotifierHub, type NotifierHub } from "../../src/kernel/hub.ts";
import { watchMemoryEvents, type MemoryEventsEvent } from "../../src/kernel/memory-events.ts";
import { pollUntil } from "../support/wait.ts";

const events = (h: number, oom: number, kill: number) => `low 0\nhigh ${h}\nmax 0\noom ${oom}\noom_kill ${kill}\n`;

/** Polls every 2 ms, 3 s at most. */
const until = (cond: () => boolean, what: string, timeoutMs = 3000) => pollUntil(cond, what, timeoutMs, 2);

describe("watchMemoryEvents", () => {
  let hub: NotifierHub | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await hub?.close();
    hub = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  test("reports the counters that grew, then removal", async () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-mev-${process.pid}-`));
    const path = join(dir, "memory.events");
    writeFileSync(path, events(0, 0, 0));
    hub = createNotifierHub();
    const seen: MemoryEventsEvent[] = [];
    let removed: string | undefined;
    const w = watchMemoryEvents(hub, { path, onEvent: (e) => seen.push(e), onRemoved: (p) => (removed = p), removalCheckMs: 0 });
    expect(w.mode).toBe("inotify");
    expect(w.counters).toEqual({ low: 0, high: 0, max: 0, oom: 0, oom_kill: 0 });
    writeFileSync(path, events(2, 1, 1));
    await until(() => seen.length > 0, "memory.events change");
    expect(seen.at(-1)!.delta).toEqual({ high: 2, oom: 1, oom_kill: 1 });
    expect(w.counters.oom_kill).toBe(1);
    unlinkSync(path);
    await until(() => removed !== undefined, "removal");
    expect(removed).toBe(path);
    expect(w.stopped).toBe(true);
    expect(hub.size).toBe(0);
  });

  test("a malformed file is rejected at start, naming it", () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-mev-${process.pid}-`));
    const path = join(dir, "memory.events");
    writeFileSync(path, "low 0\n");
    hub = createNotifierHub();
    expect(() => watchMemoryEvents(hub!, { path, onEvent() {} })).toThrow(new RegExp(`${path}: missing high`));
    expect(hub.size).toBe(0);
  });
});
