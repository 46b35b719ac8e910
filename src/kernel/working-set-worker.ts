// The cgroup v2 fast path's thread (see working-set-watch.ts): it reads each target's usage
// (memory.current, or /proc/meminfo for the node) and posts only when the working set
// (usage − inactive_file) reaches the target's line — so the main thread sleeps through the polling.
// The next read of a target is due after headroom ÷ maxGrowthBytesPerSec, clamped to
// [minIntervalMs, maxIntervalMs]: at the line every 5 ms, 1 GiB away every 250 ms (at 4 GiB/s).
// The cheap check is usage ≥ line (the working set is never more than usage); only then is
// memory.stat (or meminfo) read for the exact inactive_file, so page cache never counts as pressure.
// Not usage ≥ line + the last inactive_file seen: that hides a crossing for up to statRefreshMs when
// the inactive file shrank since the last stat read. inactive_file is also refreshed every
// statRefreshMs.
// Priority (as the epoll worker, thread-priority.ts): the thread may run at its own nice value, and a
// crossing boosts the main thread (and the threads the hub listed) before it is posted, so the cycle it
// triggers runs at that priority too; the eviction manager lowers them back once the cycle is done.
// Eviction on this thread (fast-evict.ts): with a plan published by the main thread, a crossing of a
// target that carries a token (a hard memory threshold's) is decided here — the threshold judged on the
// read that saw the line (kubepods'; the node's is re-read from root memory.stat, as the summary has it), the
// pods ranked, the victim signalled through its pidfds — before the crossing is even posted; the
// outcome rides on the "crossed" message for the main thread to record (wire/fast-eviction.ts), so the
// victim does not wait for the main thread to pick the crossing up (0.3–20 ms in the v2 test guest)
// and run a cycle. When the decision finds the threshold not met (the node's root memory.stat under the line
// /proc/meminfo is over), the crossing is not posted: the next read over the line tries again, for at
// most notMetRetryMs (see check).
// Imminent crossings: a timed read is only as punctual as the timer — in the UML test guest a 5 ms
// sleep lasts p50 5.7 ms but p90 17 ms (its ticks are host signals). So when the last two timed
// reads show the usage rising fast enough to reach the line within imminentHorizonMs, the thread stays
// on it without going back to its sleep: it reads, waits the least it can, reads again — until the
// crossing, for at most imminentCapMs per episode and imminentBudgetMsPerSec per second, so a node that
// hovers near its line costs a bounded share of a CPU and an idle or slowly-growing one costs nothing
// (no episode starts: the projection is far). How it waits: with more than one CPU, sched_yield (a spin
// that lets anything runnable go first: the victim runs on another CPU); with one CPU, a 1 ms
// sleep — spinning there would starve the very victim that must cross (at nice -20, CFS gives
// the yielding thread the CPU straight back), and a spinner at nice 0 only gets the CPU back at the
// next tick (10 ms at HZ=100), later than a high-resolution timer wakes a nice -20 thread.
// Its messages: working-set-protocol.ts; the schedule's arithmetic: working-set-schedule.ts; the files it
// reads: working-set-read.ts; the planned eviction it carries out: working-set-evict.ts. Built as an extra entrypoint of `bun build --compile` (scripts/build.sh globs
// src/**/*-worker.ts); the modules it imports are bundled with it.
import { availableParallelism } from "node:os";
import { sched_yield } from "../../ffi/libc.ts";
import { preciseNow } from "../clock.ts";
import { type FastOutcome, NOT_MET_AT_WAKE_UP } from "./fast-evict.ts";
import { MonotonicSleeper } from "./monotonic-sleep.ts";
import { applyThreadPriority, type BoostSpec, boostThread } from "./thread-priority.ts";
import type { WorkingSetCrossing, WorkingSetPollSettings, WorkingSetTarget, WorkingSetWorkerIn, WorkingSetWorkerOut } from "./working-set-protocol.ts";
import { createThreadEviction } from "./working-set-evict.ts";
import { closeTargetFiles, openTargetFiles, readUsage, type SchedMark, schedMark, type TargetFiles, us } from "./working-set-read.ts";
import {
  anchorMoves,
  budgetAt,
  dueLateMs,
  type EpisodeBudget,
  episodeCapMs,
  episodeWait,
  DEFAULT_WORKING_SET_POLL,
  nextIntervalMs,
  notMetWindowOver,
  projectsLineWithin,
} from "./working-set-schedule.ts";

declare const self: Worker;

/** A watched target: its open files and what its reads so far decided. */
interface Watched extends TargetFiles {
  inactive: number;
  statAtMs: number;
  /** Over the line at the last read; an up-crossing is a read that finds it over when it was not. */
  above: boolean;
  /** performance.now() of the last post while above. */
  postedMs: number;
  /** performance.now() of the next read. */
  dueMs: number;
  /** The last read (any), and the last timed one with its usage (the growth projection's base). */
  readMs: number;
  timedMs: number;
  timedUsage: number;
  /** The last timed read projected the line within imminentHorizonMs. */
  imminent: boolean;
  /** performance.now() of the first fast-path step-aside of the current silent retries (NaN: none), and their count. */
  notMetAtMs: number;
  notMetRetries: number;
  /** The first step-aside's detail (each threshold as judged), for the crossing's log line. */
  notMetFirst?: string;
}

const fresh = () => ({ readMs: Number.NaN, timedMs: Number.NaN, timedUsage: 0, imminent: false, notMetAtMs: Number.NaN, notMetRetries: 0 });

/** A new target watched: its files open, read at once. */
function open(t: WorkingSetTarget): Watched {
  return { ...openTargetFiles(t), inactive: 0, statAtMs: Number.NEGATIVE_INFINITY, above: false, postedMs: 0, dueMs: 0, ...fresh() };
}

let watched: Watched[] = [];
let boost: BoostSpec | undefined;
let boostFailed = false;
/** Sleeps no post cuts short: an episode's waits, the wait for the victim to take its signal. */
const sleeper = new MonotonicSleeper();
/** The planned eviction on this thread (working-set-evict.ts). */
const eviction = createThreadEviction(sleeper);
/**
 * Main thread → this thread: counter[0] how many messages the main thread has posted (counted after posting
 * each, then the mailbox's eventfd signalled, which ends the poll loop's sleep — sleeper's sleep).
 */
let mailbox: { counter: Int32Array; sleeper: MonotonicSleeper } | undefined;
/** Messages handled (counted before handling, so a handler's run() does not return at once). */
let handled = 0;
const mailPending = () => mailbox !== undefined && Atomics.load(mailbox.counter, 0) > handled;
/** Taken before each sleep of the poll loop (one schedstat read), and the sleep's length. */
let markAtSleep: SchedMark | undefined;
let sleepMs = 0;
/** Set by tick() when it woke ≥ LATE_MS late: the ms of that sleep this thread spent runnable. */
let lateRunnableMs: number | undefined;
const LATE_MS = 20;
/** The schedule, replaced by each "targets" message before any target is read. */
let settings: WorkingSetPollSettings = DEFAULT_WORKING_SET_POLL;

/** The current episode: when it began and its reads (for the crossing it finds). */
let episode: { startMs: number; reads: number } | undefined;
/** Episode ms spent in the current one-second window. */
let budget: EpisodeBudget = { windowMs: 0, usedMs: 0 };

/**
 * One read of a target and what follows from it, step by step. `timed`: a read of the schedule, which
 * updates the growth projection; an episode's reads (µs apart) do not, so an episode lasts until the
 * crossing or its cap. Up to the line the steps allocate nothing beyond the read itself: they run at every poll.
 */
function check(w: Watched, now: number, timed = true): void {
  // Read usage (and inactive_file when statRefreshMs is due), timing the read.
  const lateMs = dueLateMs(w.dueMs, now);
  const readStart = performance.now();
  const [readBytes, inactive] = readUsage(w, now - w.statAtMs >= settings.statRefreshMs);
  const readTookMs = performance.now() - readStart;
  const gapMs = now - w.readMs;
  w.readMs = now;
  // An unreadable usage: read again at the shortest interval.
  if (!Number.isFinite(readBytes)) {
    w.dueMs = now + settings.minIntervalMs;
    return;
  }
  // A timed read moves the growth projection that starts imminent-crossing episodes.
  if (timed) projectGrowth(w, readBytes, now);
  // The working set: usage less inactive_file, read afresh when usage is over the line.
  const usage = withInactiveFile(w, readBytes, inactive, now);
  const ws = Math.max(0, usage - w.inactive);
  // Under the line in usage, the working set is under it whatever inactive_file does next; the
  // headroom assumes the page cache may go (line − usage), over it the fresh working set's.
  w.dueMs = now + nextIntervalMs(usage < w.t.lineBytes ? w.t.lineBytes - usage : w.t.lineBytes - ws, settings);
  if (settings.reportReads)
    self.postMessage({
      type: "read",
      id: w.t.id,
      usageBytes: usage,
      workingSetBytes: usage - w.inactive,
      timed,
      atMs: preciseNow(now),
    } satisfies WorkingSetWorkerOut);
  // At or under the line: no crossing.
  if (ws <= w.t.lineBytes) {
    underLine(w, now);
    return;
  }
  // Over it: an up-crossing, or a repeat once renotifyMs has passed since the last post.
  w.imminent = false; // over the line: the episode, if any, is done
  const repeat = w.above;
  if (repeat && (settings.renotifyMs <= 0 || now - w.postedMs < settings.renotifyMs)) return;
  // The victim first: the planned eviction decided here, before the boost's syscalls and the post.
  const decisionStart = performance.now();
  const fast = eviction.decide(w.t, usage, w.inactive);
  const faultsAtSignal = fast?.fired ? eviction.account(fast, decisionStart, markAtSleep, sleepMs) : undefined;
  // Not met at the decision: tried again at the next reads over the line, the crossing not posted yet.
  if (fast && retryNotMet(w, fast, repeat, now)) return;
  // The crossing, posted once the victim took its signal (fired), else with the main thread boosted.
  const crossing = crossingToPost(w, { usage, ws, repeat, gapMs, lateMs, readTookMs, timed }, fast?.fired === true, now);
  if (fast?.fired) eviction.awaitVictim(fast, faultsAtSignal!);
  else boostMainThread();
  self.postMessage({ type: "crossed", crossing, ...(fast ? { fast } : {}) } satisfies WorkingSetWorkerOut);
}

/** Growth since the anchor read, projected to the line (working-set-schedule.ts); the anchor moves once RATE_SPAN_MS old. */
function projectGrowth(w: Watched, usage: number, now: number): void {
  w.imminent = projectsLineWithin(usage, w.timedUsage, w.timedMs, now, w.t.lineBytes, settings.imminentHorizonMs ?? 0);
  if (anchorMoves(w.timedMs, now)) {
    w.timedMs = now;
    w.timedUsage = usage;
  }
}

/**
 * Keeps the inactive_file just read; with none read and usage over the line, reads both again: the working
 * set may be over the line, and only a fresh inactive_file tells (page cache is not pressure) — an old one
 * can hide the crossing, page cache that left since the last read. Returns the usage to judge by.
 */
function withInactiveFile(w: Watched, usage: number, inactive: number | undefined, now: number): number {
  if (inactive !== undefined) {
    w.inactive = inactive;
    w.statAtMs = now;
    return usage;
  }
  if (usage <= w.t.lineBytes) return usage;
  const [fresh, freshInactive] = readUsage(w, true);
  w.inactive = freshInactive!;
  w.statAtMs = now;
  return fresh;
}

/**
 * At or under the line. Over the line means past it: at the line, available equals the threshold, which
 * upstream does not count as met (threshold > available), and neither does the decision (memoryThresholdAt) —
 * a crossing read at the line would only step aside (`notMetFirst="… available 104857600 > 104857600 …"`, then
 * retries).
 */
function underLine(w: Watched, now: number): void {
  w.above = false;
  // One window of retries per NOT_MET_WINDOWS_APART_MS at most: a working set that hovers at the line
  // (or the node's /proc/meminfo over it while root memory.stat, which decides, is under) costs the
  // thread ≤ imminentCapMs of reads a second, not an episode at every up-crossing.
  if (notMetWindowOver(w.notMetAtMs, now, settings)) {
    w.notMetAtMs = Number.NaN;
    w.notMetRetries = 0;
  }
}

/**
 * Over the line here, not met at the decision (NOT_MET_AT_WAKE_UP): the node's threshold (judged on root
 * memory.stat, not the /proc/meminfo polled here), or a plan whose line differs from this target's. Posted now,
 * the crossing would wake the main thread for a cycle that reads it under too, and the next try would wait
 * renotifyMs (~100 ms); instead the next read over the line tries again, for at most notMetRetryMs of the
 * up-crossing — an imminent-crossing episode's reads (1 ms apart, within its cap and budget). True: not posted.
 */
function retryNotMet(w: Watched, fast: FastOutcome, repeat: boolean, now: number): boolean {
  const retryMs = settings.notMetRetryMs ?? 0;
  if (fast.fired || fast.reason !== NOT_MET_AT_WAKE_UP || repeat || retryMs <= 0) return false;
  if (Number.isNaN(w.notMetAtMs)) {
    w.notMetAtMs = now;
    w.notMetFirst = fast.detail;
  }
  if (now - w.notMetAtMs >= retryMs) return false;
  w.notMetRetries++;
  w.imminent = (settings.imminentHorizonMs ?? 0) > 0;
  return true;
}

/** What check() read on the way to a crossing. */
interface CrossingRead {
  usage: number;
  ws: number;
  repeat: boolean;
  gapMs: number;
  lateMs: number;
  readTookMs: number;
  timed: boolean;
}

/** The crossing as posted, with the silent retries it ends (notMet); the target marked above and posted now. */
function crossingToPost(w: Watched, r: CrossingRead, fired: boolean, now: number): WorkingSetCrossing {
  w.above = true;
  w.postedMs = now;
  const notMet = w.notMetRetries > 0 ? { retries: w.notMetRetries, ms: us(now - w.notMetAtMs), ...(w.notMetFirst ? { first: w.notMetFirst } : {}) } : undefined;
  w.notMetRetries = 0;
  if (fired) w.notMetAtMs = Number.NaN;
  return {
    id: w.t.id,
    atMs: preciseNow(now),
    usageBytes: r.usage,
    inactiveFileBytes: w.inactive,
    workingSetBytes: r.ws,
    lineBytes: w.t.lineBytes,
    repeat: r.repeat,
    ...(Number.isFinite(r.gapMs) ? { gapMs: us(r.gapMs) } : {}),
    ...(episode && !r.timed ? { imminent: { reads: episode.reads, ms: us(now - episode.startMs) } } : {}),
    ...(notMet ? { notMet } : {}),
    ...(r.timed ? { timerLateMs: us(r.lateMs), readTookMs: us(r.readTookMs) } : {}),
    ...(r.timed && lateRunnableMs !== undefined ? { lateRunnableMs } : {}),
  };
}

/** The boost (the main thread and the threads the hub listed), so the cycle the crossing triggers runs at its priority. */
function boostMainThread(): void {
  if (!boost || boostFailed) return;
  const err = boostThread(boost);
  if (err) {
    boostFailed = true; // said once; crossings still go through, at the main thread's own priority
    self.postMessage({ type: "priority", what: "boost", nice: boost.nice, applied: false, error: err } satisfies WorkingSetWorkerOut);
  }
}

/** check(), dropping a target whose files fail (removed cgroup…). */
function checkOrDrop(w: Watched, now: number, timed: boolean): void {
  try {
    check(w, now, timed);
  } catch (e) {
    w.imminent = false;
    watched = watched.filter((x) => x !== w);
    try {
      closeTargetFiles(w);
    } catch {}
    self.postMessage({ type: "error", id: w.t.id, message: (e as Error).message } satisfies WorkingSetWorkerOut);
  }
}

function tick(now: number): void {
  let lateMs = 0;
  for (const w of watched) if (w.dueMs <= now) lateMs = Math.max(lateMs, dueLateMs(w.dueMs, now));
  const woke = lateMs >= LATE_MS && markAtSleep ? schedMark() : undefined;
  lateRunnableMs = woke && markAtSleep ? us((woke.waitNs - markAtSleep.waitNs) / 1e6) : undefined;
  for (const w of [...watched]) if (w.dueMs <= now) checkOrDrop(w, now, true);
  if (watched.some((w) => w.imminent)) imminentEpisode();
  else eviction.rehearseNewPlan(now);
}

/** The CPUs this thread may run on, read once. */
let cpus: number | undefined;
const cpuCount = () => (cpus ??= availableParallelism());
/** This thread runs SCHED_RR (threadRealtime applied). */
let realtime = false;
/** Polls the imminent targets without the timer until they cross, the episode's cap or the second's budget. */
function imminentEpisode(): void {
  const start = performance.now();
  budget = budgetAt(budget, start);
  const capMs = episodeCapMs(budget, settings);
  const wait = episodeWait(realtime, settings.imminentWait, cpuCount);
  episode = { startMs: start, reads: 0 };
  try {
    while (capMs > 0) {
      if (wait === "spin") sched_yield();
      else sleeper.sleep(1);
      const now = performance.now();
      const hot = watched.filter((w) => w.imminent);
      if (hot.length === 0 || now - start >= capMs) break;
      episode.reads++;
      for (const w of hot) checkOrDrop(w, now, false);
    }
  } finally {
    for (const w of watched) w.imminent = false; // the next timed read projects again
    episode = undefined;
    budget.usedMs += performance.now() - start;
  }
}

/**
 * The poll loop: read what is due, sleep until the next is — epoll_wait on the mailbox's eventfd, with
 * the kernel's own monotonic timeout (monotonic-sleep.ts), not this Worker's event-loop timer nor
 * Atomics.wait: a setTimeout can fire ~1.4 s late in a busy guest, and Atomics.wait's deadline is on
 * the wall clock, which a step back lengthens (docs/adr/0004-monotonic-sleep.md). The loop returns to the
 * event loop only when a message is posted (the main thread counts it and signals the eventfd; every
 * handler but stop's calls run() again) or when nothing is watched.
 */
function run(): void {
  while (mailbox && !mailPending() && watched.length > 0) {
    const now = performance.now();
    const due = Math.min(...watched.map((w) => w.dueMs));
    if (due <= now) {
      tick(now);
      continue;
    }
    markAtSleep = schedMark();
    sleepMs = due - now;
    mailbox.sleeper.sleep(sleepMs);
  }
}

function setTargets(targets: WorkingSetTarget[]): void {
  // Keep the state (fds, above) of a target whose source did not change; its line may move.
  const key = (t: WorkingSetTarget) => `${t.id}\0${t.source === "meminfo" ? "meminfo" : t.source.cgroupDir}`;
  const old = new Map(watched.map((w) => [key(w.t), w]));
  const next: Watched[] = [];
  for (const t of targets) {
    const kept = old.get(key(t));
    if (kept) {
      old.delete(key(t));
      if (kept.t.lineBytes !== t.lineBytes) {
        kept.above = false;
        kept.dueMs = 0;
        kept.notMetAtMs = Number.NaN;
        kept.notMetRetries = 0;
      }
      kept.t = t;
      kept.imminent = false;
      next.push(kept);
      continue;
    }
    try {
      next.push(open(t));
    } catch (e) {
      self.postMessage({ type: "error", id: t.id, message: (e as Error).message } satisfies WorkingSetWorkerOut);
    }
  }
  for (const w of old.values()) closeTargetFiles(w);
  watched = next;
}

self.onmessage = (e: MessageEvent<WorkingSetWorkerIn>) => {
  const msg = e.data;
  if (msg.type === "mailbox") {
    mailbox = { counter: new Int32Array(msg.buffer), sleeper: new MonotonicSleeper(msg.wakeFd) };
    return;
  }
  handled++;
  if (msg.type === "priority") {
    boost = msg.boost;
    const r = applyThreadPriority({ nice: msg.threadNice, realtime: msg.threadRealtime });
    if (r?.realtime?.applied) realtime = true;
    if (r) self.postMessage({ type: "priority", ...r } satisfies WorkingSetWorkerOut);
  } else if (msg.type === "fastPlan") {
    eviction.setPlan({ buffer: msg.buffer, dirs: msg.dirs });
  } else if (msg.type === "targets") {
    settings = msg.settings;
    setTargets(msg.targets);
  } else if (msg.type === "stop") {
    for (const w of watched) closeTargetFiles(w);
    watched = [];
    mailbox?.sleeper.close();
    sleeper.close();
    self.postMessage({ type: "stopped" } satisfies WorkingSetWorkerOut);
    return;
  }
  run();
};
