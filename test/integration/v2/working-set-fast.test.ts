// The cgroup v2 fast path on a real kernel: startMemoryNotifiers (as the agent calls it) picks the
// working-set watch on a cgroup2 node, arms it from the eviction manager's targets, and calls onTrigger
// when a process's anonymous memory takes the cgroup's working set over the line — while page cache
// that takes memory.current far over the same line does not count. Runs where /sys/fs/cgroup is a
// cgroup2 mount and we are root — the v2 guest (in-guest.test.ts); skips on a v1 host.
import { afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startMemoryNotifiers, type MemoryNotifiers } from "../../../src/kernel/memory-notifiers.ts";
import { startWorkingSetWatch } from "../../../src/kernel/working-set-watch.ts";
import { removeCgroupDir } from "../../../src/pod/cm/cgroup-manager.ts";
import { until } from "../../support/wait.ts";
import { guestGate, MOUNT } from "../../support/guest-node.ts";

const onV2 = guestGate("cgroup2", "the cgroup v2 fast-path test");

const MiB = 2 ** 20;

describe.skipIf(!onV2)("cgroup v2 fast path: the working-set watch (real kernel)", () => {
  let kn: MemoryNotifiers | undefined;
  const procs: Bun.Subprocess[] = [];
  let dir: string | undefined;
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      p.kill("SIGKILL");
      await p.exited;
    }
    await kn?.close();
    kn = undefined;
    if (dir) await removeCgroupDir(dir);
    dir = undefined;
  });

  const inCgroup = (d: string, script: string) => {
    const p = Bun.spawn(["sh", "-c", `echo $$ > ${d}/cgroup.procs && ${script}`], { stdout: "ignore", stderr: "ignore" });
    procs.push(p);
    return p;
  };
  const stat = (d: string) => {
    const current = Number(readFileSync(join(d, "memory.current"), "utf8"));
    const inactive = Number(/^inactive_file (\d+)$/m.exec(readFileSync(join(d, "memory.stat"), "utf8"))?.[1] ?? 0);
    return { current, inactive, workingSet: current - inactive };
  };

  test("page cache over the line is not a crossing; anonymous memory over it triggers the eviction manager", async () => {
    writeFileSync(join(MOUNT, "cgroup.subtree_control"), "+memory");
    const name = `bunlet-v2-wsfast-${process.pid}`;
    dir = join(MOUNT, name);
    mkdirSync(dir);
    writeFileSync(join(dir, "memory.max"), String(768 * MiB));
    const lines: string[] = [];
    const reasons: string[] = [];
    kn = startMemoryNotifiers({
      podsCgroup: name,
      psiTrigger: false,
      onTrigger: (r) => reasons.push(r),
      logger: { info: (m) => lines.push(m), warn: (m) => lines.push(m), debug: (m) => lines.push(m) },
    });
    expect(kn.memcgSupported).toBe(false);
    expect(kn.workingSet).toBeDefined();

    const before = stat(dir);
    const line = before.workingSet + 48 * MiB;
    await kn.apply([
      {
        id: "allocatableMemory.available#0",
        signal: "allocatableMemory.available",
        cgroup: "pods",
        hard: true,
        description: "hard allocatable memory eviction threshold",
        thresholdBytes: line + before.inactive,
        workingSetBytes: line,
      },
    ]);
    // 96 MiB of page cache (a file on the guest's hostfs root): memory.current goes ~48 MiB over the line.
    await inCgroup(dir, `head -c ${96 * MiB} ${process.execPath} > /dev/null`).exited;
    const cached = stat(dir);
    expect(cached.current).toBeGreaterThan(line);
    expect(cached.workingSet).toBeLessThan(line);
    // The watch read it many times meanwhile (every ~12 ms this close to the line): no trigger.
    expect(reasons).toEqual([]);

    // Anonymous memory (tail buffers /dev/zero, which has no newline) until the watch tells.
    inCgroup(dir, "exec tail /dev/zero");
    await until("the working-set trigger", () => reasons[0], 60_000, { intervalMs: 10 });
    expect(reasons[0]).toBe("hard allocatable memory eviction threshold");
    // The line is logged after the trigger (the cycle first).
    const crossed = await until("the crossed line", () => lines.find((l) => l.includes("hard allocatable memory eviction threshold crossed")), 10_000, {
      intervalMs: 10,
    });
    expect(crossed).toContain(`source=${dir}`);
    const field = (k: string) => Number(new RegExp(`${k}=(\\d+)`).exec(crossed!)?.[1]);
    // Judged on the working set: over the line, with the page cache still there and left out.
    expect(field("workingSetBytes")).toBeGreaterThanOrEqual(line);
    expect(field("inactiveFileBytes")).toBeGreaterThan(32 * MiB);
    expect(field("usageBytes") - field("inactiveFileBytes")).toBe(field("workingSetBytes"));
  }, 120_000);

  test("a wall clock stepped back does not stall the thread's reads (its sleeps are on the monotonic clock)", async () => {
    // The guest's clock is its own: stepping it back touches nothing of the host's.
    writeFileSync(join(MOUNT, "cgroup.subtree_control"), "+memory");
    dir = join(MOUNT, `bunlet-v2-wsclock-${process.pid}`);
    mkdirSync(dir);
    let reads = 0;
    let waiter: { n: number; done(): void } | undefined;
    const readsReach = (n: number) => new Promise<true>((resolve) => (waiter = { n, done: () => resolve(true) }));
    const onRead = () => {
      reads++;
      if (waiter && reads >= waiter.n) waiter.done();
    };
    const watch = startWorkingSetWatch({ poll: { minIntervalMs: 5, maxIntervalMs: 5, imminentHorizonMs: 0, reportReads: true }, onCrossing: () => {}, onRead });
    const setClock = (ms: number) => {
      const r = spawnSync("date", ["-u", "-s", `@${(ms / 1000).toFixed(3)}`]);
      if (r.status !== 0) throw new Error(`date -s: ${r.stderr}`);
    };
    const STEP_MS = 60_000;
    let stepped = false;
    try {
      watch.set([{ id: "t", source: { cgroupDir: dir }, lineBytes: 2 ** 40 }]);
      await readsReach(5);
      // Back a minute while the thread sleeps its 5 ms: on a wall-clock deadline (Atomics.wait) it
      // would not read again for that minute.
      setClock(Date.now() - STEP_MS);
      stepped = true;
      // 20 more reads (~100 ms), or the thread is stuck: 20 s, a third of the step.
      expect(await Promise.race([readsReach(reads + 20), Bun.sleep(20_000).then(() => false)])).toBe(true);
    } finally {
      if (stepped) setClock(Date.now() + STEP_MS);
      await watch.stop();
    }
  }, 60_000);
});
