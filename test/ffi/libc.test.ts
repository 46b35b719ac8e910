import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as c from "../../ffi/libc.ts";
import { errnoCode, errnoText, SyscallError } from "../../ffi/errno.ts";
import { O_NOFOLLOW } from "../../ffi/fs.ts";

const opened: number[] = [];
afterEach(() => {
  for (const fd of opened.splice(0)) {
    try {
      c.close(fd);
    } catch {}
  }
});
const track = (fd: number) => (opened.push(fd), fd);

describe("errno table", () => {
  test.each([
    [2, "ENOENT", "No such file or directory"],
    [13, "EACCES", "Permission denied"],
    [11, "EAGAIN", "Resource temporarily unavailable"],
    [22, "EINVAL", "Invalid argument"],
    [9999, "E9999", "Unknown error 9999"],
  ])("%i → %s", (n, code, text) => {
    expect(errnoCode(n)).toBe(code);
    expect(errnoText(n)).toBe(text);
  });
});

describe("libc", () => {
  test("open of a missing path throws ENOENT naming the path", () => {
    const path = `/nonexistent-${process.pid}/x`;
    let err: unknown;
    try {
      c.open(path, c.O_RDONLY);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SyscallError);
    const se = err as SyscallError;
    expect(se.call).toBe("open");
    expect(se.errno).toBe(2);
    expect(se.code).toBe("ENOENT");
    expect(se.path).toBe(path);
    expect(se.message).toContain(path);
    expect(se.message).toContain("No such file or directory");
  });

  test("eventfd + epoll: write is seen, read drains, empty read is EAGAIN", () => {
    const efd = track(c.eventfd(0, c.EFD_NONBLOCK | c.EFD_CLOEXEC));
    const ep = track(c.epoll_create1(c.EPOLL_CLOEXEC));
    c.epoll_ctl(ep, c.EPOLL_CTL_ADD, efd, c.EPOLLIN, 7);
    expect(c.epoll_wait(ep, 4, 0)).toEqual([]);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, 5n, true);
    c.write(efd, b);
    expect(c.epoll_wait(ep, 4, 0)).toEqual([{ events: c.EPOLLIN, data: 7 }]);
    expect(c.read(efd, b)).toBe(8);
    expect(new DataView(b.buffer).getBigUint64(0, true)).toBe(5n);
    expect(() => c.read(efd, b)).toThrow(/EAGAIN/);
  });

  test("epoll_wait returns several events at their offsets, each with its whole 64-bit token", () => {
    // A wrong struct epoll_event layout misreads the second event's fields and a token's high half.
    const tokens = [2 ** 40 + 3, 2 ** 33 + 5, 11];
    const ep = track(c.epoll_create1(c.EPOLL_CLOEXEC));
    const one = new Uint8Array(8);
    new DataView(one.buffer).setBigUint64(0, 1n, true);
    for (const token of tokens) {
      const efd = track(c.eventfd(0, c.EFD_NONBLOCK | c.EFD_CLOEXEC));
      c.epoll_ctl(ep, c.EPOLL_CTL_ADD, efd, c.EPOLLIN, token);
      c.write(efd, one);
    }
    const got = c.epoll_wait(ep, 8, 0);
    expect(got.map((e) => e.events)).toEqual([c.EPOLLIN, c.EPOLLIN, c.EPOLLIN]);
    expect(got.map((e) => e.data).sort((a, b) => a - b)).toEqual([...tokens].sort((a, b) => a - b));
  });

  test("O_DIRECTORY refuses a file (ENOTDIR), O_NOFOLLOW a symlink (ELOOP)", () => {
    const dir = mkdtempSync(join(tmpdir(), "bunlet-ffi-"));
    try {
      writeFileSync(join(dir, "f"), "x");
      symlinkSync("f", join(dir, "l"));
      track(c.open(dir, c.O_RDONLY | c.O_DIRECTORY | c.O_CLOEXEC));
      expect(() => c.open(join(dir, "f"), c.O_RDONLY | c.O_DIRECTORY)).toThrow(/ENOTDIR/);
      expect(() => c.open(join(dir, "l"), c.O_RDONLY | O_NOFOLLOW)).toThrow(/ELOOP/);
      expect(c.read(track(c.open(join(dir, "l"), c.O_RDONLY | c.O_CLOEXEC)), new Uint8Array(4))).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("flock LOCK_NB on a held lock fails with EAGAIN", () => {
    const dir = mkdtempSync(join(tmpdir(), `bunlet-ffi-${process.pid}-`));
    try {
      const p = join(dir, "lock");
      const a = track(c.open(p, c.O_RDWR | c.O_CREAT | c.O_CLOEXEC, 0o600));
      const b = track(c.open(p, c.O_RDWR | c.O_CLOEXEC));
      c.flock(a, c.LOCK_EX | c.LOCK_NB);
      expect(() => c.flock(b, c.LOCK_EX | c.LOCK_NB)).toThrow(expect.objectContaining({ code: "EAGAIN" }));
      c.flock(a, c.LOCK_UN);
      c.flock(b, c.LOCK_EX | c.LOCK_NB);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("inotify sees IN_OPEN on a watched file", () => {
    const dir = mkdtempSync(join(tmpdir(), `bunlet-ffi-${process.pid}-`));
    try {
      const p = join(dir, "f");
      Bun.write(p, "x");
      const ino = track(c.inotify_init1(c.IN_NONBLOCK | c.IN_CLOEXEC));
      const wd = c.inotify_add_watch(ino, p, c.IN_OPEN);
      expect(wd).toBeGreaterThan(0);
      track(c.open(p, c.O_RDONLY | c.O_CLOEXEC));
      const buf = new Uint8Array(256);
      const n = c.read(ino, buf);
      expect(n).toBeGreaterThanOrEqual(16);
      const v = new DataView(buf.buffer);
      expect(v.getInt32(0, true)).toBe(wd);
      expect(v.getUint32(4, true) & c.IN_OPEN).toBe(c.IN_OPEN);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("statfs of / reports a plausible filesystem; missing path names it", () => {
    const s = c.statfs("/");
    expect(s.bsize).toBeGreaterThan(0);
    expect(s.blocks).toBeGreaterThan(0);
    expect(s.bavail).toBeLessThanOrEqual(s.bfree);
    expect(s.bfree).toBeLessThanOrEqual(s.blocks);
    expect(() => c.statfs(`/nonexistent-${process.pid}`)).toThrow(/statfs \/nonexistent-\d+: ENOENT/);
  });

  test("pread reads from an offset", () => {
    const fd = track(c.open("/proc/self/stat", c.O_RDONLY | c.O_CLOEXEC));
    const buf = new Uint8Array(64);
    const n = c.pread(fd, buf, 0);
    expect(n).toBeGreaterThan(0);
    expect(new TextDecoder().decode(buf.subarray(0, n))).toStartWith(`${process.pid} (`);
  });
});

describe("pidfd", () => {
  const children: Bun.Subprocess[] = [];
  afterEach(() => {
    for (const p of children.splice(0)) p.kill("SIGKILL");
  });

  test("pidfd_send_signal delivers to the process the pidfd was opened on; ESRCH once it is gone", async () => {
    const child = Bun.spawn(["sleep", "60"], { stdout: "ignore", stderr: "ignore" });
    children.push(child);
    const fd = track(c.pidfd_open(child.pid));
    c.pidfd_send_signal(fd, 0); // alive
    c.pidfd_send_signal(fd, 15);
    expect(await child.exited).toBe(143);
    expect(child.signalCode).toBe("SIGTERM");
    let err: unknown;
    try {
      c.pidfd_send_signal(fd, 15);
    } catch (e) {
      err = e;
    }
    expect((err as SyscallError).code).toBe("ESRCH");
    expect((err as SyscallError).call).toBe("pidfd_send_signal");
  });

  test("pidfd_open of a pid that cannot exist is refused with a SyscallError", () => {
    let err: unknown;
    try {
      track(c.pidfd_open(2 ** 22 + 1)); // above pid_max's ceiling
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SyscallError);
    expect(["ESRCH", "EINVAL"]).toContain((err as SyscallError).code);
  });
});

describe("priority", () => {
  // Restoring the nice value after raising it needs CAP_SYS_NICE.
  test.skipIf(process.getuid?.() !== 0)("setpriority on the calling thread is read back by getpriority; restored after", () => {
    const before = c.getpriority(c.PRIO_PROCESS, 0);
    try {
      c.setpriority(c.PRIO_PROCESS, 0, before === 5 ? 6 : 5);
      expect(c.getpriority(c.PRIO_PROCESS, 0)).toBe(before === 5 ? 6 : 5);
    } finally {
      // Back to where it was: going down again needs CAP_SYS_NICE (the tests run as root).
      c.setpriority(c.PRIO_PROCESS, 0, before);
    }
    expect(c.getpriority(c.PRIO_PROCESS, 0)).toBe(before);
  });

  test("a missing process is ESRCH, not a value", () => {
    let err: unknown;
    try {
      c.getpriority(c.PRIO_PROCESS, 0x3fffffff);
    } catch (e) {
      err = e;
    }
    expect((err as SyscallError).code).toBe("ESRCH");
    expect(() => c.setpriority(c.PRIO_PROCESS, 0x3fffffff, 0)).toThrow(SyscallError);
  });
});
