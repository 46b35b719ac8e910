// src/lockfile.ts (kept beside the server tests: both are the agent's outward-facing edges).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, openSync, closeSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as libc from "../../ffi/libc.ts";
import {
  acquireLockFile,
  decodeInotifyMask,
  describeMask,
  LockFileError,
  watchLockContention,
  type ContentionWatch,
  type LockFile,
} from "../../src/lockfile.ts";
import { pollUntil } from "../support/wait.ts";
import { canLock } from "../support/lock.ts";

let dir: string;
const held: LockFile[] = [];
const watches: ContentionWatch[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), `bunlet-lock-${process.pid}-`));
});
afterEach(async () => {
  for (const w of watches.splice(0)) await w.close();
  for (const l of held.splice(0)) l.release();
  rmSync(dir, { recursive: true, force: true });
});

describe("acquireLockFile", () => {
  test("creates the file, holds the lock, release frees it", async () => {
    const path = join(dir, "kubelet.lock");
    const lock = await acquireLockFile(path);
    held.push(lock);
    expect(canLock(path)).toBe(false);
    lock.release();
    lock.release(); // idempotent
    expect(canLock(path)).toBe(true);
  });

  test("waits while another holder has it, then acquires once released", async () => {
    const path = join(dir, "kubelet.lock");
    const first = await acquireLockFile(path);
    held.push(first);
    let second: LockFile | undefined;
    const pending = acquireLockFile(path, { pollMs: 10 }).then((l) => (second = l));
    await Bun.sleep(50); // give it a few polls: it must still be waiting
    expect(second).toBeUndefined();
    first.release();
    await pending;
    held.push(second!);
    expect(canLock(path)).toBe(false);
  });

  test("aborting the wait rejects and leaves the holder untouched", async () => {
    const path = join(dir, "kubelet.lock");
    held.push(await acquireLockFile(path));
    const ac = new AbortController();
    const pending = acquireLockFile(path, { pollMs: 10, signal: ac.signal });
    ac.abort(new Error("shutting down"));
    await expect(pending).rejects.toThrow("shutting down");
    expect(canLock(path)).toBe(false);
  });

  test("an unopenable path fails naming it", async () => {
    const path = join(dir, "missing-dir", "kubelet.lock");
    const err = await acquireLockFile(path).catch((e) => e);
    expect(err).toBeInstanceOf(LockFileError);
    expect(String(err.message)).toContain(path);
    expect(String(err.message)).toContain("ENOENT");
  });
});

describe("watchLockContention", () => {
  test("fires once when another process opens the lock file", async () => {
    const path = join(dir, "kubelet.lock");
    held.push(await acquireLockFile(path));
    const events: string[] = [];
    watches.push(watchLockContention(path, (ev) => events.push(ev.kind)));
    closeSync(openSync(path, "r"));
    await pollUntil(() => events.length > 0, "a contention event", 5000, 10);
    expect(events).toEqual(["open"]);
  });

  test("fires when the lock file is deleted", async () => {
    const path = join(dir, "kubelet.lock");
    held.push(await acquireLockFile(path));
    const events: string[] = [];
    watches.push(watchLockContention(path, (ev) => events.push(ev.kind)));
    unlinkSync(path);
    // Deleting an open file only drops its link; DELETE_SELF comes when the inode goes, i.e. after release.
    held.pop()!.release();
    await pollUntil(() => events.length > 0, "a contention event", 5000, 10);
    expect(events[0]).toContain("delete_self");
  });

  test("close() stops the watch without firing", async () => {
    const path = join(dir, "kubelet.lock");
    held.push(await acquireLockFile(path));
    const events: string[] = [];
    const w = watchLockContention(path, (ev) => events.push(ev.kind));
    await w.close();
    closeSync(openSync(path, "r"));
    await Bun.sleep(50);
    expect(events).toEqual([]);
  });

  test("decodes the inotify_event mask", () => {
    const buf = new Uint8Array(16);
    new DataView(buf.buffer).setUint32(4, libc.IN_OPEN, true);
    expect(decodeInotifyMask(buf)).toBe(libc.IN_OPEN);
    expect(decodeInotifyMask(new Uint8Array(4))).toBeUndefined();
    expect(describeMask(libc.IN_DELETE_SELF | libc.IN_IGNORED)).toBe("delete_self|ignored");
  });
});
