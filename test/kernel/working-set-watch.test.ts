// The cgroup v2 working-set watch against a stand-in cgroup directory (regular memory.current and
// memory.stat files the test rewrites): crossings are judged on usage − inactive_file, reported once
// per up-crossing, and a target whose files vanish is reported as an error. The watch reports every
// read here (reportReads), so each step waits until the worker has seen the state it set. The
// real-kernel run is test/integration/v2/working-set-fast.test.ts (in the guest).
import { afterEach, describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMemoryNotifiers, WORKING_SET_TOKEN_BASE, type MemoryNotifiers } from "../../src/kernel/memory-notifiers.ts";
import { dirLinks, newFastPlanBuffer, NOT_MET_AT_WAKE_UP, planState, publishPlan, PLAN_FIRED, type FastOutcome } from "../../src/kernel/fast-evict.ts";
import { startWorkingSetWatch, type WorkingSetCrossing, type WorkingSetWatch } from "../../src/kernel/working-set-watch.ts";
import { close, getpriority, O_CLOEXEC, O_RDONLY, open, pidfd_open, PRIO_PROCESS } from "../../ffi/libc.ts";
import { until } from "../support/wait.ts";

const MiB = 2 ** 20;
// Every read also re-reads memory.stat, and every read is reported.
const poll = { minIntervalMs: 2, maxIntervalMs: 5, statRefreshMs: 0, reportReads: true, renotifyMs: 0 };

/** Stand-in memory.current and memory.stat in `d`; the returned setter rewrites them (MiB). */
function fakeMemoryFiles(d: string): (currentMiB: number, inactiveFileMiB: number) => void {
  // The worker keeps its fds open, as on kernfs: each file is rewritten in place in one write of
  // the same length (numbers zero-padded), never truncated, so no read sees it half-written.
  const n = (mib: number) => String(mib * MiB).padStart(16, "0");
  const put = (file: string, text: string) => {
    const fd = openSync(join(d, file), existsSync(join(d, file)) ? "r+" : "w");
    writeSync(fd, text, 0);
    closeSync(fd);
  };
  return (current, inactive) => {
    put("memory.stat", `anon ${n(current - inactive)}\nfile ${n(inactive)}\ninactive_file ${n(inactive)}\nactive_file 0\n`);
    put("memory.current", `${n(current)}\n`);
  };
}

describe("startWorkingSetWatch", () => {
  let w: WorkingSetWatch | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await w?.stop();
    w = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  function fakeCgroup(): (currentMiB: number, inactiveFileMiB: number) => void {
    dir = mkdtempSync(join(tmpdir(), "bunlet-wss-"));
    return fakeMemoryFiles(dir);
  }
  function watch(pollOverride: Partial<typeof poll> & Record<string, unknown> = {}) {
    const crossings: WorkingSetCrossing[] = [];
    const errors: string[] = [];
    const reads: Array<{ id: string; usage: number; ws: number }> = [];
    w = startWorkingSetWatch({
      poll: { ...poll, ...pollOverride },
      onCrossing: (c) => crossings.push(c),
      onError: (id) => errors.push(id),
      onRead: (id, usage, ws) => reads.push({ id, usage: usage / MiB, ws: ws / MiB }),
    });
    /** Resolves once the worker read this state (usage and working set, MiB). */
    const seen = (usage: number, ws: number) =>
      until(`a read of usage ${usage} MiB, working set ${ws} MiB`, () => reads.some((r) => r.usage === usage && r.ws === ws), 5_000, { intervalMs: 2 });
    return { crossings, errors, seen };
  }

  test("page cache is not pressure; a working-set up-crossing is reported once, again after going back under", async () => {
    const set = fakeCgroup();
    const { crossings, errors, seen } = watch();
    // 900 MiB used, 500 of it inactive page cache: usage is over the 700 MiB line, the working set (400) is not.
    set(900, 500);
    w!.set([{ id: "pods", source: { cgroupDir: dir! }, lineBytes: 700 * MiB }]);
    await seen(900, 400);
    expect(crossings).toEqual([]);
    // The same usage, most of the cache turned into anonymous memory: working set 800 ≥ 700.
    set(900, 100);
    const first = await until("the crossing", () => crossings[0], 5_000, { intervalMs: 2 });
    expect(first).toMatchObject({ id: "pods", usageBytes: 900 * MiB, inactiveFileBytes: 100 * MiB, workingSetBytes: 800 * MiB, lineBytes: 700 * MiB });
    // A timed read's crossing says where its gap went: the timer's lateness and the read's own time.
    expect(first.timerLateMs).toBeGreaterThanOrEqual(0);
    expect(first.readTookMs).toBeGreaterThan(0);
    // Still above: no second report.
    set(950, 100);
    await seen(950, 850);
    expect(crossings).toHaveLength(1);
    set(600, 100);
    await seen(600, 500);
    set(1000, 0);
    await until("the second up-crossing", () => crossings[1], 5_000, { intervalMs: 2 });
    expect(crossings[1]!.workingSetBytes).toBe(1000 * MiB);
    expect(errors).toEqual([]);
  });

  test("a working set exactly at the line is not over it (available = threshold is not met, as upstream); one page past it is", async () => {
    const set = fakeCgroup();
    const { crossings, seen } = watch();
    set(700, 0);
    w!.set([{ id: "pods", source: { cgroupDir: dir! }, lineBytes: 700 * MiB }]);
    await seen(700, 700);
    set(701, 1); // usage past the line, the working set still at it
    await seen(701, 700);
    expect(crossings).toEqual([]);
    set(701, 0);
    const c = await until("the crossing", () => crossings[0], 5_000, { intervalMs: 2 });
    expect(c.workingSetBytes).toBe(701 * MiB);
  });

  test("page cache that left since the last memory.stat read does not hide a crossing (usage over the line reads it afresh)", async () => {
    const set = fakeCgroup();
    const crossings: WorkingSetCrossing[] = [];
    const reads: number[] = [];
    // memory.stat re-read only once a minute on its own: the crossing must not wait for that.
    w = startWorkingSetWatch({
      poll: { ...poll, statRefreshMs: 60_000 },
      onCrossing: (c) => crossings.push(c),
      onRead: (_id, usage) => reads.push(usage / MiB),
    });
    set(600, 500); // usage under the 700 MiB line: memory.stat read once, at the start
    w.set([{ id: "pods", source: { cgroupDir: dir! }, lineBytes: 700 * MiB }]);
    await until("a read", () => reads.includes(600), 5_000, { intervalMs: 2 });
    set(750, 0); // the cache went, anonymous memory came: working set 750 over the line
    const c = await until("the crossing", () => crossings[0], 5_000, { intervalMs: 2 });
    expect(c).toMatchObject({ usageBytes: 750 * MiB, inactiveFileBytes: 0, workingSetBytes: 750 * MiB });
  });

  // The thread sleeps in epoll_wait between reads, not in its event loop: a message (new targets, stop)
  // must wake it (the mailbox's eventfd). Here its next read is 60 s away; the moved line is still read at once.
  test("new targets are taken while the thread sleeps until its next read; stop too", async () => {
    const set = fakeCgroup();
    set(500, 0);
    const { crossings, seen } = watch({ minIntervalMs: 60_000, maxIntervalMs: 60_000 });
    w!.set([{ id: "pods", source: { cgroupDir: dir! }, lineBytes: 800 * MiB }]);
    await seen(500, 500);
    set(700, 0);
    w!.set([{ id: "pods", source: { cgroupDir: dir! }, lineBytes: 600 * MiB }]);
    const c = await until("the crossing of the moved line", () => crossings[0], 5_000, { intervalMs: 2 });
    expect(c.lineBytes).toBe(600 * MiB);
    const stopped = performance.now();
    await w!.stop();
    // stop() gives up on the worker after 2 s; woken, it answers at once.
    expect(performance.now() - stopped).toBeLessThan(1_500);
    w = undefined;
  });

  test("a moved line re-arms; a vanished cgroup is an error for that target only", async () => {
    const set = fakeCgroup();
    set(500, 0);
    const { crossings, errors } = watch();
    w!.set([
      { id: "pods", source: { cgroupDir: dir! }, lineBytes: 400 * MiB },
      { id: "gone", source: { cgroupDir: join(dir!, "no-such") }, lineBytes: MiB },
    ]);
    await until("the crossing and the error", () => crossings.length === 1 && errors.length === 1, 5_000, { intervalMs: 2 });
    expect(errors).toEqual(["gone"]);
    w!.set([{ id: "pods", source: { cgroupDir: dir! }, lineBytes: 450 * MiB }]);
    await until("the crossing of the moved line", () => crossings[1], 5_000, { intervalMs: 2 });
    expect(crossings[1]!.lineBytes).toBe(450 * MiB);
  });

  test("while it stays over the line, the crossing is posted again every renotifyMs (a cycle that read it under is retried)", async () => {
    const set = fakeCgroup();
    set(500, 0);
    const crossings: WorkingSetCrossing[] = [];
    w = startWorkingSetWatch({ poll: { ...poll, reportReads: false, renotifyMs: 20 }, onCrossing: (c) => crossings.push(c) });
    w.set([{ id: "pods", source: { cgroupDir: dir! }, lineBytes: 400 * MiB }]);
    await until("a repeat", () => crossings.length >= 2, 5_000, { intervalMs: 2 });
    expect(crossings[0]!.repeat).toBe(false);
    expect(crossings[1]!.repeat).toBe(true);
    expect(crossings[1]!.atMs - crossings[0]!.atMs).toBeGreaterThanOrEqual(20);
  });

  /**
   * A fast plan on one hard threshold whose decision reads its own stand-in files (`threshold`, under
   * the 400 MiB line while not met: capacity 500, threshold 100), and one pod, a child `sleep`. "v2-root"
   * (default): as the node's threshold, judged on a memory.stat the watch does not poll; "v2": a cgroup's
   * memory.current and memory.stat, as kubepods' (then the watch's own read is the observation).
   */
  function fastPlanOnOwnFiles(files: "v2" | "v2-root" = "v2-root") {
    const root = mkdtempSync(join(tmpdir(), "bunlet-wsf-"));
    const fds: number[] = [];
    const ro = (f: string) => {
      const fd = open(f, O_RDONLY | O_CLOEXEC);
      fds.push(fd);
      return fd;
    };
    for (const d of ["watched", "threshold", "pod"]) mkdirSync(join(root, d));
    const watched = fakeMemoryFiles(join(root, "watched"));
    const threshold = fakeMemoryFiles(join(root, "threshold"));
    fakeMemoryFiles(join(root, "pod"))(300, 0);
    watched(300, 0);
    threshold(390, 0);
    const victim = Bun.spawn(["sleep", "30"]);
    const buffer = newFastPlanBuffer();
    publishPlan(buffer, {
      cgroupVersion: 2,
      thresholds: [
        {
          token: 7,
          usageFd: ro(join(root, "threshold/memory.current")),
          statFd: ro(join(root, "threshold/memory.stat")),
          files,
          capacityBytes: 500 * MiB,
          valueBytes: 100 * MiB,
        },
      ],
      pods: [
        {
          usageFd: ro(join(root, "pod/memory.current")),
          statFd: ro(join(root, "pod/memory.stat")),
          request: 0,
          priority: 0,
          containers: [{ pidfd: pidfd_open(victim.pid), signal: 15 }],
        },
      ],
      dirLinks: dirLinks([root]),
    });
    const target = { id: "pods", source: { cgroupDir: join(root, "watched") }, lineBytes: 400 * MiB, token: 7 };
    const cleanup = () => {
      victim.kill(9);
      for (const fd of fds) close(fd);
      rmSync(root, { recursive: true, force: true });
    };
    return { buffer, dirs: [root], watched, threshold, victim, target, cleanup };
  }

  test("a fast eviction that finds the threshold not met (the node's, on root memory.stat) is tried again at the next read over the line, the crossing not posted meanwhile", async () => {
    const f = fastPlanOnOwnFiles();
    try {
      const crossings: WorkingSetCrossing[] = [];
      const outcomes: FastOutcome[] = [];
      let reads = 0;
      // No repeat for a minute: only the retry can evict before then.
      w = startWorkingSetWatch({
        poll: { ...poll, renotifyMs: 60_000, notMetRetryMs: 60_000 },
        fastPlan: { buffer: f.buffer, dirs: f.dirs, onOutcome: (o) => outcomes.push(o) },
        onCrossing: (c) => crossings.push(c),
        onRead: () => reads++,
      });
      // The thread re-reads 390 MiB used: 110 MiB available, the threshold (100) not met; the watch reads
      f.watched(450, 20); // a working set of 430, over the 400 MiB line: working set 430 over the 400 MiB line
      w.set([f.target]);
      await until("reads over the line", () => reads >= 6, 5_000, { intervalMs: 2 });
      expect(crossings).toEqual([]);
      expect(outcomes).toEqual([]);
      f.threshold(450, 20); // the re-read now finds it met
      expect(await f.victim.exited).toBe(143);
      const c = await until("the crossing", () => crossings[0], 5_000, { intervalMs: 2 });
      expect(c.repeat).toBe(false);
      expect(c.notMet!.retries).toBeGreaterThanOrEqual(5);
      expect(c.notMet!.first).toMatch(/^token \d+ \(v2-root\): available \d+ > \d+ of capacity \d+$/);
      await until("the outcome", () => outcomes[0], 5_000, { intervalMs: 2 });
      expect(outcomes[0]).toMatchObject({ fired: true, victim: 0, signalled: 1 });
      expect(crossings).toHaveLength(1);
    } finally {
      f.cleanup();
    }
  });

  test("a threshold on the watched cgroup is judged on the watch's own read, not a re-read that may land under the line", async () => {
    const f = fastPlanOnOwnFiles("v2");
    try {
      const crossings: WorkingSetCrossing[] = [];
      const outcomes: FastOutcome[] = [];
      w = startWorkingSetWatch({
        poll: { ...poll, reportReads: false, renotifyMs: 60_000, notMetRetryMs: 60_000 },
        fastPlan: { buffer: f.buffer, dirs: f.dirs, onOutcome: (o) => outcomes.push(o) },
        onCrossing: (c) => crossings.push(c),
      });
      // The plan's own files stay at 390 MiB (not met); the watch reads 450 − 20 = 430 over the line.
      f.watched(450, 20);
      w.set([f.target]);
      expect(await f.victim.exited).toBe(143);
      const c = await until("the crossing", () => crossings[0], 5_000, { intervalMs: 2 });
      expect(c.notMet).toBeUndefined();
      await until("the outcome", () => outcomes[0], 5_000, { intervalMs: 2 });
      expect(outcomes[0]).toMatchObject({ fired: true, available: 70 * MiB, capacity: 500 * MiB });
      // Where the deciding thread's time went: the decision's wall time, and, from the thread's own
      // schedstat, the span since the poll loop last slept (the kernel updates the CPU time of a running
      // thread at ticks and switches only: no finer check holds). This read came at once on set(),
      // before the loop first slept, so there is no such span.
      const cpu = (outcomes[0] as Extract<FastOutcome, { fired: true }>).cpu!;
      expect(cpu.decisionMs).toBeGreaterThan(0);
      expect(cpu.sinceSleep).toBeUndefined();
    } finally {
      f.cleanup();
    }
  });

  test("with imminent-crossing episodes on, the retries are an episode's reads (1 ms apart), not the next timed read", async () => {
    const f = fastPlanOnOwnFiles();
    try {
      const crossings: WorkingSetCrossing[] = [];
      const reads: { ws: number; timed: boolean }[] = [];
      // Timed reads 300 ms apart; an episode may last 1.5 s.
      w = startWorkingSetWatch({
        poll: {
          ...poll,
          minIntervalMs: 300,
          maxIntervalMs: 300,
          renotifyMs: 60_000,
          notMetRetryMs: 60_000,
          imminentHorizonMs: 25,
          imminentCapMs: 1_500,
          imminentBudgetMsPerSec: 1_500,
          imminentWait: "sleep",
        },
        fastPlan: { buffer: f.buffer, dirs: f.dirs, onOutcome: () => {} },
        onCrossing: (c) => crossings.push(c),
        onRead: (_id, _usage, ws, timed) => reads.push({ ws: ws / MiB, timed }),
      });
      f.watched(450, 20);
      w.set([f.target]);
      // The timed read over the line stepped aside (not met) once an episode's read follows it.
      await until("an episode's read over the line", () => reads.some((r) => !r.timed && r.ws === 430), 5_000, { intervalMs: 2 });
      f.threshold(450, 20);
      expect(await f.victim.exited).toBe(143);
      const c = await until("the crossing", () => crossings[0], 5_000, { intervalMs: 2 });
      expect(c.imminent?.reads).toBeGreaterThan(0);
      expect(reads.filter((r) => r.timed)).toEqual([{ ws: 430, timed: true }]);
    } finally {
      f.cleanup();
    }
  });

  test("the retries last notMetRetryMs at most: then the crossing is posted with the step-aside, for the cycle to decide; one window a second", async () => {
    const f = fastPlanOnOwnFiles();
    try {
      const crossings: WorkingSetCrossing[] = [];
      const outcomes: FastOutcome[] = [];
      const reads: string[] = [];
      w = startWorkingSetWatch({
        poll: { ...poll, renotifyMs: 60_000, notMetRetryMs: 30 },
        fastPlan: { buffer: f.buffer, dirs: f.dirs, onOutcome: (o) => outcomes.push(o) },
        onCrossing: (c) => crossings.push(c),
        onRead: (_id, usage, ws) => reads.push(`${usage / MiB}/${ws / MiB}`),
      });
      const seen = (usage: number, ws: number) => until(`a read of ${usage}/${ws} MiB`, () => reads.includes(`${usage}/${ws}`), 5_000, { intervalMs: 2 });
      f.watched(450, 20);
      w.set([f.target]);
      const c = await until("the crossing", () => crossings[0], 5_000, { intervalMs: 2 });
      expect(c.notMet!.retries).toBeGreaterThan(0);
      expect(c.notMet!.ms).toBeGreaterThanOrEqual(30);
      await until("the outcome", () => outcomes[0], 5_000, { intervalMs: 2 });
      expect(outcomes[0]).toMatchObject({ fired: false, reason: NOT_MET_AT_WAKE_UP });
      expect(f.victim.exitCode).toBeNull();
      // Under the line and over it again within the second: no second window, the crossing is posted at once.
      f.watched(350, 20);
      await seen(350, 330);
      f.watched(450, 20);
      const again = await until("the second crossing", () => crossings[1], 5_000, { intervalMs: 2 });
      expect(again.notMet).toBeUndefined();
    } finally {
      f.cleanup();
    }
  });

  // Timed reads 300 ms apart; the test moves the usage only after the worker read the last state, so
  // where a crossing is seen — inside an imminent-crossing episode or at a timed read — is the test's.
  const slow = { minIntervalMs: 300, maxIntervalMs: 300, imminentHorizonMs: 2_000, imminentCapMs: 1_500, imminentBudgetMsPerSec: 1_500, imminentWait: "sleep" };

  // Each case: usage at `start`, then at `near` (each read by the worker), then over the 700 MiB line at
  // 710; `episode`: whether the crossing is seen inside an imminent-crossing episode or at a timed read.
  test.each([
    // +90 MiB in ~300 ms: 10 MiB left, projected well within the horizon; the episode starts.
    { name: "usage rising toward the line is polled off the timer: the crossing is seen inside an episode", opts: slow, start: 600, near: 690, episode: true },
    { name: "flat or falling usage near the line starts no episode: the crossing is a timed read's", opts: slow, start: 695, near: 690, episode: false },
    {
      name: "without a horizon there are no episodes (the default of the bench's own ruler)",
      opts: { ...slow, imminentHorizonMs: 0 },
      start: 600,
      near: 690,
      episode: false,
    },
  ])("$name", async ({ opts, start, near, episode }) => {
    const set = fakeCgroup();
    const { crossings, seen } = watch(opts);
    set(start, 0);
    w!.set([{ id: "pods", source: { cgroupDir: dir! }, lineBytes: 700 * MiB }]);
    await seen(start, start);
    set(near, 0);
    await seen(near, near);
    set(710, 0);
    const c = await until("the crossing", () => crossings[0], 5_000, { intervalMs: 2 });
    expect(c).toMatchObject({ workingSetBytes: 710 * MiB });
    if (episode) expect(c.imminent?.reads).toBeGreaterThan(0);
    else expect(c.imminent).toBeUndefined();
  });
});

describe("startMemoryNotifiers on a cgroup v2 node", () => {
  let kn: MemoryNotifiers | undefined;
  let mount: string | undefined;
  afterEach(async () => {
    await kn?.close();
    kn = undefined;
    if (mount) rmSync(mount, { recursive: true, force: true });
    mount = undefined;
  });

  /** A stand-in cgroup2 mount: cgroup.controllers at its root, kubepods' memory files under it (300 MiB, 100 inactive). */
  function fakeV2Mount(): string {
    const dir = mkdtempSync(join(tmpdir(), "bunlet-wsn-"));
    writeFileSync(join(dir, "cgroup.controllers"), "cpuset cpu io memory pids\n");
    mkdirSync(join(dir, "kubepods"));
    fakeMemoryFiles(join(dir, "kubepods"))(300, 100);
    return dir;
  }
  /** startMemoryNotifiers on that mount only: no v1 memory controller, no PSI, kubepods as the pods' cgroup. */
  const onFakeV2Mount = (dir: string) => ({
    memoryCgroupRoot: join(dir, "no-v1-memory"),
    unifiedMountRoot: dir,
    psiTrigger: false as const,
    podsCgroup: "kubepods",
  });
  const podsTarget = {
    id: "allocatableMemory.available#0",
    signal: "allocatableMemory.available",
    cgroup: "pods",
    hard: true,
    description: "hard allocatable memory eviction threshold",
    thresholdBytes: 500 * MiB,
    workingSetBytes: 400 * MiB,
  } as const;

  test("no memcg thresholds but a v2 memory controller: the eviction manager's targets go to the working-set watch", async () => {
    mount = fakeV2Mount();
    const set = fakeMemoryFiles(join(mount, "kubepods"));
    const lines: string[] = [];
    const reasons: string[] = [];
    kn = startMemoryNotifiers({
      ...onFakeV2Mount(mount),
      pressureFile: join(mount, "no-memory.pressure"),
      workingSetPoll: { minIntervalMs: 2, maxIntervalMs: 5, renotifyMs: 0 },
      onTrigger: (r) => reasons.push(r),
      logger: { info: (m) => lines.push(m), warn: (m) => lines.push(m), debug: (m) => lines.push(m) },
    });
    expect(kn.memcgSupported).toBe(false);
    expect(kn.workingSet).toBeDefined();
    await kn.apply([podsTarget]);
    expect(kn.workingSet!.targets).toEqual([
      { id: "allocatableMemory.available#0", source: { cgroupDir: join(mount, "kubepods") }, lineBytes: 400 * MiB, token: WORKING_SET_TOKEN_BASE },
    ]);
    set(450, 20);
    await until("onTrigger", () => reasons[0], 5_000, { intervalMs: 2 });
    expect(reasons).toEqual(["hard allocatable memory eviction threshold"]);
    // The line is written after the trigger (the cycle first).
    await until("the crossed line", () => lines.find((l) => l.includes("crossed")), 5_000, { intervalMs: 2 });
    expect(lines.find((l) => l.includes("crossed"))).toContain(
      `eviction manager: hard allocatable memory eviction threshold crossed source=${join(mount, "kubepods")} workingSetBytes=${430 * MiB} lineBytes=${400 * MiB}`,
    );
  });

  test("the working-set thread runs at threadNice, and a crossing boosts the main thread with the hub's spec until endBoost()", async () => {
    mount = fakeV2Mount();
    const set = fakeMemoryFiles(join(mount, "kubepods"));
    const lines: string[] = [];
    let boostedInTrigger: boolean | undefined;
    // The boost value is this thread's own, so the runner's priority never changes: the flag protocol
    // is what is checked. Raising a thread's nice needs no privilege.
    const own = getpriority(PRIO_PROCESS, 0);
    kn = startMemoryNotifiers({
      ...onFakeV2Mount(mount),
      workingSetPoll: { minIntervalMs: 2, maxIntervalMs: 5, renotifyMs: 0 },
      threadNice: 5,
      boostMainThreadNice: own,
      onTrigger: () => (boostedInTrigger ??= kn!.hub.boosted),
      logger: { info: (m) => lines.push(m), warn: (m) => lines.push(m), debug: (m) => lines.push(m) },
    });
    await until("the working-set thread's priority line", () => lines.find((l) => l.includes(`thread="working-set thread"`)), 5_000, { intervalMs: 2 });
    expect(lines.find((l) => l.includes(`thread="working-set thread"`))).toContain("nice=5");
    await kn.apply([
      {
        id: "pods#0",
        signal: "allocatableMemory.available",
        cgroup: "pods",
        hard: true,
        description: "hard allocatable memory eviction threshold",
        thresholdBytes: 500 * MiB,
        workingSetBytes: 400 * MiB,
      },
    ]);
    expect(kn.hub.boosted).toBe(false);
    set(450, 20);
    await until("onTrigger", () => boostedInTrigger !== undefined, 5_000, { intervalMs: 2 });
    expect(boostedInTrigger).toBe(true);
    expect(kn.endBoost()).toBe(true);
    expect(kn.hub.boosted).toBe(false);
    expect(getpriority(PRIO_PROCESS, 0)).toBe(own);
  });

  // SCHED_RR needs CAP_SYS_NICE.
  test.skipIf(process.getuid?.() !== 0)(
    "with threadRealtime the working-set thread runs SCHED_RR over its nice value; a priority the kernel refuses is said, and the nice value stays",
    async () => {
      mount = fakeV2Mount();
      fakeMemoryFiles(join(mount, "kubepods"));
      // Each thread's policy; a thread that exits between the listing and its read (another test's worker) is skipped.
      const policies = () =>
        readdirSync("/proc/self/task").flatMap((t) => {
          try {
            const stat = readFileSync(`/proc/self/task/${t}/stat`, "utf8");
            return [Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[38])]; // field 41, policy
          } catch {
            return [];
          }
        });
      const SCHED_RR = 2;
      const before = policies().filter((p) => p === SCHED_RR).length;
      for (const [rt, expected] of [
        [1, "policy=SCHED_RR rtPriority=1"],
        [100, "could not take a real-time policy"],
      ] as const) {
        const lines: string[] = [];
        kn = startMemoryNotifiers({
          ...onFakeV2Mount(mount),
          onTrigger: () => {},
          threadNice: 5,
          threadRealtime: rt,
          logger: { info: (m) => lines.push(m), warn: (m) => lines.push(m), debug: () => {} },
        });
        await kn.apply([podsTarget]);
        // Both notifier threads (this one and the hub's epoll worker) say what they run at.
        const saidBy = (thread: string) => lines.some((l) => l.includes(`thread="${thread}"`) && l.includes(rt === 1 ? "SCHED_RR" : "real-time"));
        const said = await until(
          "both threads' priority lines",
          () => (saidBy("working-set thread") && saidBy("notifier thread") ? lines.join("\n") : undefined),
          5_000,
          { intervalMs: 2 },
        );
        expect(said).toContain(expected);
        expect(said).toContain("nice=5");
        if (rt === 1)
          expect(policies().filter((p) => p === SCHED_RR).length).toBe(before + 2); // this thread and the hub's epoll worker
        else expect(said).toContain("error=EINVAL");
        await kn.close();
        kn = undefined;
      }
    },
  );

  test("a repeated post while still over the line triggers a cycle only when repeatUseful says it can change the decision", async () => {
    mount = fakeV2Mount();
    const set = fakeMemoryFiles(join(mount, "kubepods"));
    let useful = false;
    const asked: string[] = [];
    let triggers = 0;
    kn = startMemoryNotifiers({
      ...onFakeV2Mount(mount),
      workingSetPoll: { minIntervalMs: 2, maxIntervalMs: 5, renotifyMs: 5 },
      repeatUseful: (target) => (asked.push(target.id!), useful),
      onTrigger: () => triggers++,
      logger: { info: () => {}, warn: () => {}, debug: () => {} },
    });
    await kn.apply([podsTarget]);
    set(450, 20);
    await until("the up-crossing's trigger", () => triggers === 1, 5_000, { intervalMs: 2 });
    // Re-posts come every 5 ms and are asked about; none triggers while not useful.
    await until("repeats asked about", () => asked.length >= 5, 5_000, { intervalMs: 2 });
    expect(triggers).toBe(1);
    expect(new Set(asked)).toEqual(new Set(["allocatableMemory.available#0"]));
    useful = true;
    await until("a useful repeat's trigger", () => triggers >= 2, 5_000, { intervalMs: 2 });
  });

  test("with a fast plan, the working-set thread itself signals the top-ranked pod at the crossing; the outcome reaches the main thread after the trigger", async () => {
    mount = fakeV2Mount();
    const kubepods = join(mount, "kubepods");
    const set = fakeMemoryFiles(kubepods);
    // Two pods under kubepods (stand-in v2 files): an idle one and the hog, each a child `sleep` as its container.
    const fds: number[] = [];
    const procs = [Bun.spawn(["sleep", "30"]), Bun.spawn(["sleep", "30"])];
    try {
      const podFiles = (name: string, currentMiB: number) => {
        mkdirSync(join(kubepods, name));
        fakeMemoryFiles(join(kubepods, name))(currentMiB, 0);
        const usageFd = open(join(kubepods, name, "memory.current"), O_RDONLY | O_CLOEXEC);
        const statFd = open(join(kubepods, name, "memory.stat"), O_RDONLY | O_CLOEXEC);
        fds.push(usageFd, statFd);
        return { usageFd, statFd };
      };
      const idle = podFiles("pod-idle", 1);
      const hog = podFiles("pod-hog", 400);
      const pidfds = procs.map((p) => pidfd_open(p.pid));
      fds.push(...pidfds);
      const order: string[] = [];
      const outcomes: FastOutcome[] = [];
      const buffer = newFastPlanBuffer();
      kn = startMemoryNotifiers({
        ...onFakeV2Mount(mount),
        workingSetPoll: { minIntervalMs: 2, maxIntervalMs: 5, renotifyMs: 0 },
        fastPlan: { buffer, dirs: [kubepods], onOutcome: (o) => (order.push("outcome"), outcomes.push(o)) },
        onTrigger: () => order.push("trigger"),
        logger: { info: () => {}, warn: () => {}, debug: () => {} },
      });
      await kn.apply([podsTarget]);
      // The plan names the threshold by the working-set target's token and reads kubepods' v2 files.
      const armed = kn.armedThresholds();
      expect(armed).toEqual([{ signal: "allocatableMemory.available", hard: true, token: WORKING_SET_TOKEN_BASE, cgroupPath: kubepods, files: "v2" }]);
      const kfd = (f: string) => {
        const fd = open(join(kubepods, f), O_RDONLY | O_CLOEXEC);
        fds.push(fd);
        return fd;
      };
      // capacity 500 MiB, threshold 100 MiB: the line is the target's 400 MiB of working set.
      publishPlan(buffer, {
        cgroupVersion: 2,
        thresholds: [
          { token: armed[0]!.token, usageFd: kfd("memory.current"), statFd: kfd("memory.stat"), files: "v2", capacityBytes: 500 * MiB, valueBytes: 100 * MiB },
        ],
        pods: [
          { ...idle, request: 0, priority: 0, containers: [{ pidfd: pidfds[0]!, signal: 15 }] },
          { ...hog, request: 0, priority: 0, containers: [{ pidfd: pidfds[1]!, signal: 15 }] },
        ],
        dirLinks: dirLinks([kubepods]),
      });
      set(450, 20);
      expect(await procs[1]!.exited).toBe(143); // SIGTERM, from the working-set thread
      await until("the outcome", () => outcomes[0], 5_000, { intervalMs: 2 });
      expect(outcomes[0]).toMatchObject({ fired: true, threshold: 0, victim: 1, available: 70 * MiB, capacity: 500 * MiB, signalled: 1 });
      expect(order).toEqual(["trigger", "outcome"]);
      expect(procs[0]!.exitCode).toBeNull();
      expect(planState(buffer)).toBe(PLAN_FIRED);
    } finally {
      for (const p of procs) p.kill(9);
      await kn?.close();
      kn = undefined;
      for (const fd of fds) close(fd);
    }
  });
});
