// The notifier thread's planned eviction end to end through a real hub, worker and pidfd, on plain
// files standing in for the cgroup files (pread reads them the same way) and a child `sleep` as the
// victim: the worker signals it at the wake-up and the outcome reaches the main thread.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { close, EPOLLIN, O_CLOEXEC, O_RDONLY, open, pidfd_open } from "../../ffi/libc.ts";
import { Eventfd } from "../../src/kernel/eventfd.ts";
import { dirLinks, newFastPlanBuffer, planState, publishPlan, releaseFired, PLAN_FIRED, PLAN_IDLE, type FastOutcome } from "../../src/kernel/fast-evict.ts";
import { createNotifierHub, type NotifierHub } from "../../src/kernel/hub.ts";
import { pollUntil } from "../support/wait.ts";

const Mi = 2 ** 20;
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

test("a planned wake-up: the worker signals the top-ranked pod's process and the outcome reaches the main thread", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bunlet-fast-evict-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const fds: number[] = [];
  cleanups.push(() => {
    for (const fd of fds) close(fd);
  });
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    const fd = open(join(dir, name), O_RDONLY | O_CLOEXEC);
    fds.push(fd);
    return fd;
  };
  const victim = Bun.spawn(["sleep", "30"]);
  cleanups.push(() => victim.kill(9));
  const bystander = Bun.spawn(["sleep", "30"]);
  cleanups.push(() => bystander.kill(9));
  const victimFd = pidfd_open(victim.pid);
  const bystanderFd = pidfd_open(bystander.pid);
  fds.push(victimFd, bystanderFd);

  const buffer = newFastPlanBuffer();
  const outcomes: FastOutcome[] = [];
  const order: string[] = [];
  const hub: NotifierHub = createNotifierHub({ fastPlan: { buffer, dirs: [dir], onOutcome: (o) => (order.push("outcome"), outcomes.push(o)) } });
  cleanups.push(() => hub.close());
  const efd = new Eventfd();
  cleanups.push(() => efd.close());
  const reg = hub.add({ fd: efd.fd, events: EPOLLIN, onReady: () => (order.push("source"), efd.drain()) });
  cleanups.push(() => reg.remove());

  publishPlan(buffer, {
    thresholds: [
      {
        token: reg.token,
        usageFd: file("kubepods.usage", `${950 * Mi}\n`),
        statFd: file("kubepods.stat", "total_inactive_file 0\n"),
        capacityBytes: 1024 * Mi,
        valueBytes: 100 * Mi,
      },
    ],
    pods: [
      {
        usageFd: file("a.usage", "300000\n"),
        statFd: file("a.stat", "total_inactive_file 0\n"),
        request: 0,
        priority: 0,
        containers: [{ pidfd: bystanderFd, signal: 15 }],
      },
      {
        usageFd: file("b.usage", `${600 * Mi}\n`),
        statFd: file("b.stat", "total_inactive_file 0\n"),
        request: 0,
        priority: 0,
        containers: [{ pidfd: victimFd, signal: 15 }],
      },
    ],
    dirLinks: dirLinks([dir]),
  });
  efd.signal();
  await pollUntil(() => outcomes.length > 0, "the planned eviction's outcome", 5000, 2);
  expect(outcomes[0]).toMatchObject({ fired: true, victim: 1, available: 74 * Mi, signalled: 1 });
  expect(order).toEqual(["source", "outcome"]);
  expect(await victim.exited).toBe(143); // SIGTERM
  expect(bystander.exitCode).toBeNull();
  expect(planState(buffer)).toBe(PLAN_FIRED);
  releaseFired(buffer);
  expect(planState(buffer)).toBe(PLAN_IDLE);
});
