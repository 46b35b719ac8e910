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
// Built as an extra entrypoint of `bun build --compile` (scripts/build.sh globs src/**/*-worker.ts).
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { availableParallelism } from "node:os";
import { sched_yield } from "../../ffi/libc.ts";
import { MonotonicSleeper } from "./monotonic-sleep.ts";
import { preciseNow } from "../clock.ts";
import {
  awaitSignalsTaken,
  NOT_MET_AT_WAKE_UP,
  planGeneration,
  planState,
  PLAN_ARMED,
  rehearseFastEviction,
  tryFastEviction,
  type FastCpuSpan,
  type FastOutcome,
  type SignalsTakenIo,
} from "./fast-evict.ts";
import { parseProcStat } from "./proc-stat.ts";
import { applyThreadPriority, boostThread, type BoostSpec, type PriorityOutcome } from "./thread-priority.ts";

declare const self: Worker;

export interface WorkingSetTarget {
  id: string;
  /** "meminfo" for the node (cgroup v2 has no memory.current at the root), else a cgroup v2 directory. */
  source: "meminfo" | { cgroupDir: string };
  /** Fire when usage − inactive_file ≥ this. */
  lineBytes: number;
  /** The token a fast eviction plan names this target by (fast-evict.ts); none: never decided here. */
  token?: number;
}

export interface WorkingSetPollSettings {
  /** The interval at the line: the latency bound while growth stays under maxGrowthBytesPerSec. */
  minIntervalMs: number;
  /** The interval far from the line. */
  maxIntervalMs: number;
  /** The fastest growth the schedule is made for: next poll after headroom ÷ this, clamped. */
  maxGrowthBytesPerSec: number;
  /** How often inactive_file is re-read while under the line. */
  statRefreshMs: number;
  /**
   * While the working set stays over the line, the crossing is posted again this often: a cycle that
   * read the stats a hair under the line (the usage moves between two reads) is retried this soon
   * instead of at the next periodic synchronize. 0: once per up-crossing only.
   */
  renotifyMs: number;
  /**
   * A fast eviction that steps aside because it finds no hard threshold met (NOT_MET_AT_WAKE_UP: the node's,
   * judged on root memory.stat while /proc/meminfo is over the line) is retried at each read over the line, the
   * crossing not posted, for up to this many ms from the first such step-aside of an up-crossing; then
   * the crossing is posted (and the main thread's cycle decides). 0 or absent: posted at once.
   */
  notMetRetryMs?: number;
  /** Post every read (tests and debugging: a way to know the watch has seen a state). */
  reportReads?: boolean;
  /**
   * An imminent crossing: when the growth between the last two timed reads projects the line within
   * this many ms, the thread polls it without its timer (see the header). 0 or absent: never.
   */
  imminentHorizonMs?: number;
  /** The longest such episode (default 30 ms). */
  imminentCapMs?: number;
  /** At most this many ms of episodes per second (default 60: ≤ 6 % of a CPU however the usage moves). */
  imminentBudgetMsPerSec?: number;
  /** How an episode waits between reads (default: "spin" with more than one CPU, else "sleep" 1 ms). */
  imminentWait?: "spin" | "sleep";
}

export type WorkingSetWorkerIn =
  /** Sent first, and not counted in it: the mailbox and the eventfd signalled after each post (see run()). */
  | { type: "mailbox"; buffer: SharedArrayBuffer; wakeFd: number }
  /** Sent once, before the first "targets": this thread's nice value, the boost on a crossing. */
  | { type: "priority"; threadNice?: number; threadRealtime?: number; boost?: BoostSpec }
  | { type: "targets"; targets: WorkingSetTarget[]; settings: WorkingSetPollSettings }
  /** The main thread's eviction plan (fast-evict.ts) and the QoS directories whose link counts it checks. */
  | { type: "fastPlan"; buffer: SharedArrayBuffer; dirs: string[] }
  | { type: "stop" };

export interface WorkingSetCrossing {
  id: string;
  /** Wall-clock ms (preciseNow) of the read that saw the crossing. */
  atMs: number;
  usageBytes: number;
  inactiveFileBytes: number;
  workingSetBytes: number;
  lineBytes: number;
  /** A re-post while still over the line (renotifyMs), not a new up-crossing. */
  repeat: boolean;
  /** ms since the target's previous read: the most the crossing can have waited to be seen. */
  gapMs?: number;
  /** Seen inside an imminent-crossing episode: its reads so far and ms since it began. */
  imminent?: { reads: number; ms: number };
  /** Posted after silent retries of the fast eviction (notMetRetryMs): how many, over how many ms since the first, and why the first was not met. */
  notMet?: { retries: number; ms: number; first?: string };
  /**
   * Where a long gap went (a timed read): how late this read came after it was due, and how long its
   * syscalls took (the 1.4 s gaps of the Worker-timer days: 1393 ms late, read 0.1 ms).
   */
  timerLateMs?: number;
  readTookMs?: number;
  /** Of a wake-up ≥ 20 ms late: the ms this thread spent runnable, waiting for the CPU, in that sleep. */
  lateRunnableMs?: number;
}

export type WorkingSetWorkerOut =
  /** fast: what the planned eviction did at this crossing, when the target's token is in the armed plan. */
  | { type: "crossed"; crossing: WorkingSetCrossing; fast?: FastOutcome }
  /** timed: a read of the schedule; false: an imminent-crossing episode's. */
  | { type: "read"; id: string; usageBytes: number; workingSetBytes: number; timed: boolean; atMs: number }
  /** A target whose files could not be read (removed cgroup…); it is dropped until the next "targets". */
  | { type: "error"; id: string; message: string }
  /** The outcome of threadNice (and the first boost failure, if any): for one log line. */
  | ({ type: "priority" } & PriorityOutcome)
  | { type: "stopped" };

interface Watched {
  t: WorkingSetTarget;
  usageFd: number;
  statFd: number;
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

const buf = new Uint8Array(16384);
const decoder = new TextDecoder();
const readAt0 = (fd: number) => decoder.decode(buf.subarray(0, readSync(fd, buf, 0, buf.byteLength, 0)));
const meminfoKiB = (text: string, key: string) => Number(new RegExp(`^${key.replace(/[()]/g, "\\$&")}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0) * 1024;

const fresh = () => ({ readMs: Number.NaN, timedMs: Number.NaN, timedUsage: 0, imminent: false, notMetAtMs: Number.NaN, notMetRetries: 0 });

function open(t: WorkingSetTarget): Watched {
  if (t.source === "meminfo") {
    const fd = openSync("/proc/meminfo", "r");
    return { t, usageFd: fd, statFd: fd, inactive: 0, statAtMs: Number.NEGATIVE_INFINITY, above: false, postedMs: 0, dueMs: 0, ...fresh() };
  }
  const usageFd = openSync(`${t.source.cgroupDir}/memory.current`, "r");
  try {
    const statFd = openSync(`${t.source.cgroupDir}/memory.stat`, "r");
    return { t, usageFd, statFd, inactive: 0, statAtMs: Number.NEGATIVE_INFINITY, above: false, postedMs: 0, dueMs: 0, ...fresh() };
  } catch (e) {
    closeSync(usageFd);
    throw e;
  }
}

function close(w: Watched): void {
  closeSync(w.usageFd);
  if (w.statFd !== w.usageFd) closeSync(w.statFd);
}

/** [usage, inactive_file or undefined when only usage was read]. */
function readUsage(w: Watched, withStat: boolean): [number, number | undefined] {
  if (w.t.source === "meminfo") {
    const m = readAt0(w.usageFd);
    return [meminfoKiB(m, "MemTotal") - meminfoKiB(m, "MemFree"), meminfoKiB(m, "Inactive(file)")];
  }
  const usage = Number(readAt0(w.usageFd).trim());
  if (!withStat) return [usage, undefined];
  const inactive = Number(/^inactive_file (\d+)$/m.exec(readAt0(w.statFd))?.[1] ?? 0);
  return [usage, inactive];
}

let watched: Watched[] = [];
let boost: BoostSpec | undefined;
let boostFailed = false;
let fastPlan: { buffer: SharedArrayBuffer; dirs: string[] } | undefined;
/** Sleeps no post cuts short: an episode's waits, the wait for the victim to take its signal. */
const sleeper = new MonotonicSleeper();
/** After signalling: post once the victim took its signal, checked at 2, 6, 14 and 30 ms (2 ms when a PID is unknown). */
const POST_AFTER_SIGNAL = { minMs: 2, capMs: 30, firstMs: 2 };
const takenIo: SignalsTakenIo = {
  procStatus(pid) {
    try {
      return readFileSync(`/proc/${pid}/status`, "latin1");
    } catch {
      return undefined;
    }
  },
  sleep: (ms) => void sleeper.sleep(ms),
  now: () => preciseNow(),
};
/**
 * Main thread → this thread: counter[0] how many messages the main thread has posted (counted after posting
 * each, then the mailbox's eventfd signalled, which ends the poll loop's sleep — sleeper's sleep).
 */
let mailbox: { counter: Int32Array; sleeper: MonotonicSleeper } | undefined;
/** Messages handled (counted before handling, so a handler's run() does not return at once). */
let handled = 0;
const mailPending = () => mailbox !== undefined && Atomics.load(mailbox.counter, 0) > handled;
/**
 * This thread's schedstat (/proc/thread-self/schedstat: ns on the CPU, ns runnable but waiting for it,
 * timeslices), read when it goes to sleep and again when it woke late: a late wake-up whose wait grew by
 * as much was a thread ready but not given the CPU; one whose wait did not, a wake-up that did not come.
 */
let schedstatFd: number | undefined;
/** This thread's CPU accounting at one moment: wall ms (performance.now()), ns on the CPU, ns runnable. */
interface SchedMark {
  atMs: number;
  runNs: number;
  waitNs: number;
}
function schedMark(): SchedMark | undefined {
  try {
    schedstatFd ??= openSync("/proc/thread-self/schedstat", "r");
    const [run, wait] = readAt0(schedstatFd).split(" ");
    const mark: SchedMark = { atMs: performance.now(), runNs: Number(run), waitNs: Number(wait) };
    return Number.isFinite(mark.runNs) && Number.isFinite(mark.waitNs) ? mark : undefined;
  } catch {
    return undefined;
  }
}
/** From mark a to b: wall ms, ms on the CPU, ms runnable but off it. */
function schedSpan(a: SchedMark, b: SchedMark): FastCpuSpan {
  return { ms: us(b.atMs - a.atMs), runMs: us((b.runNs - a.runNs) / 1e6), runnableMs: us((b.waitNs - a.waitNs) / 1e6) };
}
/**
 * Major faults (field 12 of /proc/thread-self/stat, or /proc/self/stat for the whole process), NaN when
 * unreadable: pages of the binary read back from disk while the thread decides or waits for the victim (on
 * the v2 guest's hostfs such a read holds its one CPU). Read only around a fired decision and after each
 * rehearsal, never per poll.
 */
const statFds: { thread?: number; process?: number } = {};
function majflt(of: "thread" | "process"): number {
  try {
    const fd = (statFds[of] ??= openSync(of === "thread" ? "/proc/thread-self/stat" : "/proc/self/stat", "r"));
    return parseProcStat(readAt0(fd)).majorFaults;
  } catch {
    return Number.NaN;
  }
}
const threadMajflt = () => majflt("thread");
/** threadMajflt() after the last rehearsal or fired decision: faults since then are the next decision's. */
let majfltMark = Number.NaN;
/** Taken before each sleep of the poll loop (one schedstat read), and the sleep's length. */
let markAtSleep: SchedMark | undefined;
let sleepMs = 0;
/** Set by tick() when it woke ≥ LATE_MS late: the ms of that sleep this thread spent runnable. */
let lateRunnableMs: number | undefined;
const LATE_MS = 20;
/** ms rounded to the µs, for the posts. */
const us = (ms: number) => Math.round(ms * 1000) / 1000;
let settings: WorkingSetPollSettings = { minIntervalMs: 5, maxIntervalMs: 500, maxGrowthBytesPerSec: 4 * 2 ** 30, statRefreshMs: 1000, renotifyMs: 100 };

/** Far from the line the next read can wait as long as the fastest growth needs to close the gap. */
function nextIntervalMs(headroomBytes: number): number {
  const ms = (headroomBytes / settings.maxGrowthBytesPerSec) * 1000;
  return Math.min(settings.maxIntervalMs, Math.max(settings.minIntervalMs, ms));
}

/** Windows of not-met retries (notMetRetryMs) start at least this far apart, per target. */
const NOT_MET_WINDOWS_APART_MS = 1000;
/** The growth projection's shortest base (see check). */
const RATE_SPAN_MS = 20;
/** The current episode: when it began and its reads (for the crossing it finds). */
let episode: { startMs: number; reads: number } | undefined;
/** Episode ms spent in the current one-second window. */
let budget = { windowMs: 0, usedMs: 0 };

/**
 * One read of a target and what follows from it, step by step. `timed`: a read of the schedule, which
 * updates the growth projection; an episode's reads (µs apart) do not, so an episode lasts until the
 * crossing or its cap. Up to the line the steps allocate nothing beyond the read itself: they run at every poll.
 */
function check(w: Watched, now: number, timed = true): void {
  // Read usage (and inactive_file when statRefreshMs is due), timing the read.
  const lateMs = dueLateMs(w, now);
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
  w.dueMs = now + nextIntervalMs(usage < w.t.lineBytes ? w.t.lineBytes - usage : w.t.lineBytes - ws);
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
  const fast = tryPlannedEviction(w, usage);
  const faultsAtSignal = fast?.fired ? accountDecision(fast, decisionStart) : undefined;
  // Not met at the decision: tried again at the next reads over the line, the crossing not posted yet.
  if (fast && retryNotMet(w, fast, repeat, now)) return;
  // The crossing, posted once the victim took its signal (fired), else with the main thread boosted.
  const crossing = crossingToPost(w, { usage, ws, repeat, gapMs, lateMs, readTookMs, timed }, fast?.fired === true, now);
  if (fast?.fired) awaitVictim(fast, faultsAtSignal!);
  else boostMainThread();
  self.postMessage({ type: "crossed", crossing, ...(fast ? { fast } : {}) } satisfies WorkingSetWorkerOut);
}

/**
 * Growth since the anchor read, projected to the line: usage (not the working set) is what grows.
 * The anchor moves only once RATE_SPAN_MS old: usage grows in charge batches, and two reads a few
 * ms apart around one batch would project a rate the workload does not have (natively, a 10 MiB/s
 * grower started episodes it never needed: +2.4 % of a core with spinning).
 */
function projectGrowth(w: Watched, usage: number, now: number): void {
  const rate = (usage - w.timedUsage) / (now - w.timedMs);
  const horizon = settings.imminentHorizonMs ?? 0;
  w.imminent = horizon > 0 && usage <= w.t.lineBytes && rate > 0 && (w.t.lineBytes - usage) / rate <= horizon;
  if (!(now - w.timedMs < RATE_SPAN_MS)) {
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
  if (now - w.notMetAtMs >= Math.max(settings.notMetRetryMs ?? 0, NOT_MET_WINDOWS_APART_MS)) {
    w.notMetAtMs = Number.NaN;
    w.notMetRetries = 0;
  }
}

/** The armed plan's decision for a target that carries a token (fast-evict.ts tryFastEviction); undefined for one that does not. */
function tryPlannedEviction(w: Watched, usage: number): FastOutcome | undefined {
  if (!fastPlan || w.t.token === undefined) return undefined;
  const read = w.t.source === "meminfo" ? undefined : { token: w.t.token, usageBytes: usage, inactiveFileBytes: w.inactive };
  return tryFastEviction(fastPlan.buffer, [w.t.token], fastPlan.dirs, undefined, read);
}

type FiredOutcome = Extract<FastOutcome, { fired: true }>;

/** Major faults when the victim was signalled: this thread's, and the whole process's. */
interface FaultsAtSignal {
  thread: number;
  process: number;
}

/**
 * A fired decision's accounting: where the thread's time went up to it (on the CPU, runnable, neither — a slow
 * eviction can be a decision of ~1 ms of work that ends 5–20 ms after the wake-up) and its major faults since the
 * last mark. Only a fired decision reads the thread's schedstat (after it): retries and repeats cost no /proc read.
 */
function accountDecision(fast: FiredOutcome, decisionStart: number): FaultsAtSignal {
  const after = schedMark();
  fast.cpu = {
    ...(after && markAtSleep ? { sinceSleep: { ...schedSpan(markAtSleep, after), sleepMs: us(sleepMs) } } : {}),
    decisionMs: us((after?.atMs ?? performance.now()) - decisionStart),
  };
  const atSignal: FaultsAtSignal = { thread: threadMajflt(), process: majflt("process") };
  fast.cpu.majflt = { toSignal: atSignal.thread - majfltMark };
  return atSignal;
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

/**
 * Signalled: what is left on the main thread (recording the eviction, the cycle the crossing queues) is
 * bookkeeping. The victim is a runnable hog, so its SIGTERM handler runs only when it is next
 * scheduled; a main thread raised to nice -20 and woken now would run its whole burst first on a
 * busy CPU (in the one-CPU v2 guest: victim got its signal 10–47 ms after the crossing, with the
 * decision taking ~1 ms). So no boost, and the post waits, this thread asleep between checks (the
 * first 2 ms on: see awaitSignalsTaken), until the victim took its signal (its pending mask in
 * /proc/<pid>/status is clear): woken any earlier, the main thread's bookkeeping and the runtime's
 * stop it starts would compete with it. Then the major faults since the signal, this thread's and the others'.
 */
function awaitVictim(fast: FiredOutcome, atSignal: FaultsAtSignal): void {
  fast.takenAtMs = awaitSignalsTaken(fast.sent, takenIo, POST_AFTER_SIGNAL) ?? null;
  majfltMark = threadMajflt();
  if (fast.cpu?.majflt) {
    fast.cpu.majflt.toTaken = majfltMark - atSignal.thread;
    fast.cpu.majflt.othersToTaken = majflt("process") - atSignal.process - fast.cpu.majflt.toTaken;
  }
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
      close(w);
    } catch {}
    self.postMessage({ type: "error", id: w.t.id, message: (e as Error).message } satisfies WorkingSetWorkerOut);
  }
}

/** How late a read of `w` at `now` comes after it was due (0 for "at once": a new or moved target). */
const dueLateMs = (w: Watched, now: number) => (w.dueMs > 0 ? Math.max(0, now - w.dueMs) : 0);

function tick(now: number): void {
  let lateMs = 0;
  for (const w of watched) if (w.dueMs <= now) lateMs = Math.max(lateMs, dueLateMs(w, now));
  const woke = lateMs >= LATE_MS && markAtSleep ? schedMark() : undefined;
  lateRunnableMs = woke && markAtSleep ? us((woke.waitNs - markAtSleep.waitNs) / 1e6) : undefined;
  for (const w of [...watched]) if (w.dueMs <= now) checkOrDrop(w, now, true);
  if (watched.some((w) => w.imminent)) imminentEpisode();
  else rehearseNewPlan(now);
}

/** The plan generation last rehearsed, and when (at most one rehearsal a second: plans change with pods). */
let rehearsed = { generation: Number.NaN, atMs: Number.NEGATIVE_INFINITY };
const REHEARSE_EVERY_MS = 1000;
/** A new armed plan gets one dry run of the decision on this thread (rehearseFastEviction). */
function rehearseNewPlan(now: number): void {
  if (!fastPlan || now - rehearsed.atMs < REHEARSE_EVERY_MS || planState(fastPlan.buffer) !== PLAN_ARMED) return;
  const generation = planGeneration(fastPlan.buffer);
  if (generation === rehearsed.generation) return;
  rehearsed = { generation, atMs: now };
  try {
    rehearseFastEviction(fastPlan.buffer, fastPlan.dirs);
  } catch {
    // a dry run: whatever failed, the real decision steps aside on it too
  }
  majfltMark = threadMajflt();
}

let waitBetweenReads: "spin" | "sleep" | undefined;
/** This thread runs SCHED_RR (threadRealtime applied). */
let realtime = false;
/** Polls the imminent targets without the timer until they cross, the episode's cap or the second's budget. */
function imminentEpisode(): void {
  const start = performance.now();
  if (start - budget.windowMs >= 1000) budget = { windowMs: start, usedMs: 0 };
  const capMs = Math.min(settings.imminentCapMs ?? 30, (settings.imminentBudgetMsPerSec ?? 60) - budget.usedMs);
  // A real-time thread never spins: it would hold its CPU from every ordinary thread for the episode.
  const wait = realtime ? "sleep" : (settings.imminentWait ?? (waitBetweenReads ??= availableParallelism() > 1 ? "spin" : "sleep"));
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
  for (const w of old.values()) close(w);
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
    fastPlan = { buffer: msg.buffer, dirs: msg.dirs };
  } else if (msg.type === "targets") {
    settings = msg.settings;
    setTargets(msg.targets);
  } else if (msg.type === "stop") {
    for (const w of watched) close(w);
    watched = [];
    mailbox?.sleeper.close();
    sleeper.close();
    self.postMessage({ type: "stopped" } satisfies WorkingSetWorkerOut);
    return;
  }
  run();
};
