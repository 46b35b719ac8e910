// A hard memory eviction decided and signalled on the kernel notifier thread itself, from a plan
// the main thread keeps ready (wire/fast-eviction.ts builds it; eviction/fast-adopt.ts records the
// eviction afterwards). Why: with 100 idle pods beside the hog, the crossing waited for the main
// thread (PLEG relist, summary building, syncs) — notifier woke → cycle started p99 97–270 ms in the
// reaction benchmark — although everything the decision needs can be read through fds held open.
//
// The plan, in one SharedArrayBuffer both threads see: the hard memory thresholds (the epoll token of
// their memcg notifier, kept fds of their cgroup's memory.usage_in_bytes and memory.stat, capacity and
// threshold bytes), every candidate pod in active-pods order (kept usage/stat fds, memory request,
// priority, the pidfds and stop signals of its running containers, or none when one is not known yet),
// and the link counts of the QoS cgroup directories (a pod cgroup created or removed changes them).
// The same plan serves cgroup v2, where the waker is the working-set thread (working-set-worker.ts)
// and the token is its working-set target's: the files differ (memory.current and memory.stat's
// inactive_file; at the v2 root, where there is no memory.current, anon + file of the root memory.stat
// as the node summary computes it), the decision does not.
//
// At a wake-up for one of those tokens the worker, at nice -20: checks the link counts (changed ⇒ the
// pod set changed since the plan: it steps aside), reads each threshold's cgroup (pread, no open) and
// stops unless one is met now, ranks with kernel/fast-rank.ts (the same victim as the main thread's
// ranking from the same fresh stats), signals the victim's containers through the pidfds, reads their
// working sets (kept fds: after the signals, before the victim's exit frees them; the eviction message's
// figures), and reports.
// Anything unusual — a read failing, a victim whose containers are not all known — steps aside: the
// main thread's cycle then decides as before.
//
// Ownership, one Int32 state word: IDLE (no plan) → ARMED (main published) → BUSY (worker reading) →
// FIRED (worker signalled; main records it, then goes back to IDLE) or back to ARMED (stepped aside).
// The main thread writes the plan and closes its fds only after moving ARMED → IDLE itself (a CAS the
// worker's ARMED → BUSY excludes), so the worker never reads an fd the main thread closed; and the main
// thread's own cycles cancel the plan the same way before they evict, so one pod per cycle holds.
import { statSync } from "node:fs";
import { pidfd_send_signal, pread } from "../../ffi/libc.ts";
import { preciseNow } from "../clock.ts";
import { chooseMemoryVictim, inactiveFileFromStat, memoryThresholdAt, statValue, type FastCandidate } from "./fast-rank.ts";

export const FAST_PLAN_MAX_THRESHOLDS = 4;
export const FAST_PLAN_MAX_PODS = 1024;
export const FAST_PLAN_MAX_CONTAINERS = 4096;
export const FAST_PLAN_MAX_DIRS = 4;

export const PLAN_IDLE = 0;
export const PLAN_ARMED = 1;
export const PLAN_BUSY = 2;
export const PLAN_FIRED = 3;

// Int32 layout.
const H_STATE = 0;
const H_GEN = 1;
const H_THRESHOLDS = 2;
const H_PODS = 3;
const H_DIRS = 4;
const H_CGROUP_VERSION = 5; // of the pods' files: 1 or 2 (0, an old plan: 1)
const THR_BASE = 8; // token, usageFd, statFd, files (THRESHOLD_FILES)
const POD_BASE = THR_BASE + 4 * FAST_PLAN_MAX_THRESHOLDS; // usageFd, statFd, first container, count (-1: not signallable)
const CONT_BASE = POD_BASE + 4 * FAST_PLAN_MAX_PODS;
const CONT_STRIDE = 5; // pidfd, signal, pid, usageFd, statFd (-1: no memory cgroup known)
const INT_COUNT = CONT_BASE + CONT_STRIDE * FAST_PLAN_MAX_CONTAINERS;
// Float64 layout, after the Int32 words.
const F_OFFSET_BYTES = Math.ceil((INT_COUNT * 4) / 8) * 8;
const FTHR_BASE = 0; // capacity, threshold bytes
const FPOD_BASE = FTHR_BASE + 2 * FAST_PLAN_MAX_THRESHOLDS; // request, priority
const FDIR_BASE = FPOD_BASE + 2 * FAST_PLAN_MAX_PODS; // expected link count
const FLOAT_COUNT = FDIR_BASE + FAST_PLAN_MAX_DIRS;

export const FAST_PLAN_BYTES = F_OFFSET_BYTES + FLOAT_COUNT * 8;

/** How a threshold's cgroup is read: v1 (memory.usage_in_bytes, total_inactive_file), v2 (memory.current, inactive_file), v2-root (memory.stat only: anon + file, inactive_file). */
export type FastThresholdFiles = "v1" | "v2" | "v2-root";
const THRESHOLD_FILES: FastThresholdFiles[] = ["v1", "v2", "v2-root"];

export interface FastPlanThreshold {
  /** Epoll token of this threshold's memcg notifier (hub registration), or the working-set target's token (v2). */
  token: number;
  /** Unused for "v2-root" (the usage is in memory.stat). */
  usageFd: number;
  statFd: number;
  /** Default "v1". */
  files?: FastThresholdFiles;
  capacityBytes: number;
  /** The threshold in bytes for that capacity (thresholdAmount). */
  valueBytes: number;
}

export interface FastPlanPod {
  usageFd: number;
  statFd: number;
  request: number;
  priority: number;
  /**
   * The running containers' pidfds and stop signals (and the PID the pidfd names, 0: unknown, for
   * awaitSignalsTaken), and the kept usage and memory.stat fds of its memory cgroup (absent: not found),
   * read right after the signals for the eviction message; undefined when one is not signallable yet.
   */
  containers?: { pidfd: number; signal: number; pid?: number; usageFd?: number; statFd?: number }[];
}

export interface FastPlan {
  /** In the order the cycle would reclaim them (configuration order: all hard, all memory). */
  thresholds: FastPlanThreshold[];
  /** Candidates in active-pods order, exempt pods left out. */
  pods: FastPlanPod[];
  /** Link counts of the QoS cgroup directories (same order as the worker's `dirs`). */
  dirLinks: number[];
  /** The pods' cgroup files: 1 (memory.usage_in_bytes, total_inactive_file; default) or 2 (memory.current, inactive_file). */
  cgroupVersion?: 1 | 2;
}

/** What the worker reports with its wake-up (the "ready" message). */
export type FastOutcome =
  | {
      fired: true;
      generation: number;
      threshold: number;
      available: number;
      capacity: number;
      victim: number;
      /** Every candidate's memory.usage_in_bytes, and the exact working sets the ranking read (NaN: not needed). */
      usages: number[];
      workingSets: number[];
      /**
       * The victim's planned containers' working sets (NaN: no cgroup known, or unreadable), read right
       * after the signals, before the victim could run its exit: the eviction message's figures.
       */
      containerWorkingSets: number[];
      /** Wall-clock ms: stats read, first signal sent. */
      readAtMs: number;
      sentAtMs: number;
      signalled: number;
      /** The signals sent: to which PID (0: unknown) and which signal. */
      sent: { pid: number; signal: number }[];
      /**
       * Wall-clock ms when the thread saw every signalled process take its signal (awaitSignalsTaken);
       * null: it waited and did not see it; absent: the thread does not wait (the v1 epoll worker).
       */
      takenAtMs?: number | null;
      /** Where the deciding thread's time went (the v2 working-set thread; absent on the v1 epoll worker). */
      cpu?: FastCpu;
    }
  /** detail: with NOT_MET_AT_WAKE_UP, each threshold as judged (for the log: why a crossing was not met). */
  | { fired: false; generation: number; reason: string; detail?: string };

/** A span of the deciding thread's time: wall ms, ms on the CPU, ms runnable but off it. */
export interface FastCpuSpan {
  ms: number;
  runMs: number;
  runnableMs: number;
}

export interface FastCpu {
  /** From the poll loop's last sleep (asked to last sleepMs) to the decision's end: the wake-up, the reads, the decision. */
  sinceSleep?: FastCpuSpan & { sleepMs: number };
  /** Wall ms of tryFastEviction itself: the plan's checks, the candidates' reads, the signals. */
  decisionMs: number;
  /**
   * The thread's major faults: since its last rehearsal or fired decision up to the signal, and from the
   * signal until it saw the victim take it (pages of the binary read back from disk); and the other threads'
   * of the process (the main thread…) over that last span.
   */
  majflt?: { toSignal: number; toTaken?: number; othersToTaken?: number };
}

const views = (buf: SharedArrayBuffer) => ({ i: new Int32Array(buf, 0, INT_COUNT), f: new Float64Array(buf, F_OFFSET_BYTES, FLOAT_COUNT) });

export const newFastPlanBuffer = (): SharedArrayBuffer => new SharedArrayBuffer(FAST_PLAN_BYTES);

export const planState = (buf: SharedArrayBuffer): number => Atomics.load(views(buf).i, H_STATE);
export const planGeneration = (buf: SharedArrayBuffer): number => Atomics.load(views(buf).i, H_GEN);

/** Why a plan cannot be encoded (too many pods, containers or thresholds), or undefined. */
export function fastPlanTooLarge(plan: FastPlan): string | undefined {
  const containers = plan.pods.reduce((s, p) => s + (p.containers?.length ?? 0), 0);
  if (plan.thresholds.length > FAST_PLAN_MAX_THRESHOLDS) return `${plan.thresholds.length} hard memory thresholds (at most ${FAST_PLAN_MAX_THRESHOLDS})`;
  if (plan.pods.length > FAST_PLAN_MAX_PODS) return `${plan.pods.length} candidate pods (at most ${FAST_PLAN_MAX_PODS})`;
  if (containers > FAST_PLAN_MAX_CONTAINERS) return `${containers} containers (at most ${FAST_PLAN_MAX_CONTAINERS})`;
  if (plan.dirLinks.length > FAST_PLAN_MAX_DIRS) return `${plan.dirLinks.length} QoS directories (at most ${FAST_PLAN_MAX_DIRS})`;
  return undefined;
}

/**
 * Main thread: takes the plan back (ARMED → IDLE). Returns the state it found: IDLE/ARMED mean the
 * plan is now IDLE and its fds may be closed; BUSY means the worker is inside it (try again shortly);
 * FIRED means the worker evicted (record it, then `releaseFired`).
 */
export function cancelPlan(buf: SharedArrayBuffer): number {
  const { i } = views(buf);
  const was = Atomics.compareExchange(i, H_STATE, PLAN_ARMED, PLAN_IDLE);
  return was;
}

/** Main thread, after recording a FIRED plan's eviction: back to IDLE. */
export function releaseFired(buf: SharedArrayBuffer): boolean {
  return Atomics.compareExchange(views(buf).i, H_STATE, PLAN_FIRED, PLAN_IDLE) === PLAN_FIRED;
}

/** Main thread: writes `plan` into an IDLE buffer and arms it; returns the new generation (undefined when not IDLE). */
export function publishPlan(buf: SharedArrayBuffer, plan: FastPlan): number | undefined {
  const tooLarge = fastPlanTooLarge(plan);
  if (tooLarge) throw new RangeError(`fast eviction plan: ${tooLarge}`);
  const { i, f } = views(buf);
  if (Atomics.load(i, H_STATE) !== PLAN_IDLE) return undefined;
  plan.thresholds.forEach((t, k) => {
    i[THR_BASE + 4 * k] = t.token;
    i[THR_BASE + 4 * k + 1] = t.usageFd;
    i[THR_BASE + 4 * k + 2] = t.statFd;
    i[THR_BASE + 4 * k + 3] = THRESHOLD_FILES.indexOf(t.files ?? "v1");
    f[FTHR_BASE + 2 * k] = t.capacityBytes;
    f[FTHR_BASE + 2 * k + 1] = t.valueBytes;
  });
  let c = 0;
  plan.pods.forEach((p, k) => {
    i[POD_BASE + 4 * k] = p.usageFd;
    i[POD_BASE + 4 * k + 1] = p.statFd;
    i[POD_BASE + 4 * k + 2] = c;
    i[POD_BASE + 4 * k + 3] = p.containers ? p.containers.length : -1;
    f[FPOD_BASE + 2 * k] = p.request;
    f[FPOD_BASE + 2 * k + 1] = p.priority;
    for (const ct of p.containers ?? []) {
      const at = CONT_BASE + CONT_STRIDE * c++;
      i[at] = ct.pidfd;
      i[at + 1] = ct.signal;
      i[at + 2] = ct.pid ?? 0;
      i[at + 3] = ct.usageFd ?? -1;
      i[at + 4] = ct.statFd ?? -1;
    }
  });
  plan.dirLinks.forEach((n, k) => {
    f[FDIR_BASE + k] = n;
  });
  i[H_THRESHOLDS] = plan.thresholds.length;
  i[H_PODS] = plan.pods.length;
  i[H_DIRS] = plan.dirLinks.length;
  i[H_CGROUP_VERSION] = plan.cgroupVersion ?? 1;
  const gen = (Atomics.load(i, H_GEN) + 1) | 0;
  Atomics.store(i, H_GEN, gen);
  Atomics.store(i, H_STATE, PLAN_ARMED); // publishes every write above (seq-cst)
  return gen;
}

/** Link counts of directories (a cgroup dir's nlink is 2 + its subdirectories); -1 for one missing. */
export function dirLinks(dirs: readonly string[]): number[] {
  return dirs.map((d) => {
    try {
      return statSync(d).nlink;
    } catch {
      return -1;
    }
  });
}

export interface FastEvictIo {
  pread(fd: number, buf: Uint8Array): number;
  signal(pidfd: number, sig: number): void;
  dirLinks(dirs: readonly string[]): number[];
  now(): number;
}

const realIo: FastEvictIo = {
  pread: (fd, buf) => pread(fd, buf, 0),
  signal: (pidfd, sig) => pidfd_send_signal(pidfd, sig),
  dirLinks,
  now: () => preciseNow(),
};

const decoder = new TextDecoder();

/** The step-aside that found every planned threshold among the tokens unmet: the one a caller may retry at its next read. */
export const NOT_MET_AT_WAKE_UP = "no hard memory threshold met at the wake-up";

/**
 * What the waking thread itself just read of a threshold's cgroup (the v2 working-set watch: kubepods'
 * memory.current and memory.stat's inactive_file at the read that saw the line).
 */
export interface FastObservation {
  token: number;
  usageBytes: number;
  inactiveFileBytes: number;
}

/**
 * Worker side, at a wake-up with `tokens` ready: the eviction, when the plan covers one of them and
 * every check holds; undefined when no planned threshold is among the tokens (or no plan is armed).
 * `observed`: a threshold on a v2 cgroup ("v2" files) with this token is judged on it, not re-read —
 * it is the same two files, read by the same formula a few µs before; a re-read can land on the other
 * side of the line when the working set sits at it (kubepods' memory.current moved by up to ~256 KiB
 * between two reads in the v2 guest: the per-CPU charge stock, likely) and the eviction would wait.
 */
export function tryFastEviction(
  buf: SharedArrayBuffer,
  tokens: readonly number[],
  dirs: readonly string[],
  io: FastEvictIo = realIo,
  observed?: FastObservation,
): FastOutcome | undefined {
  const { i, f } = views(buf);
  if (Atomics.load(i, H_STATE) !== PLAN_ARMED) return undefined;
  const nThr = i[H_THRESHOLDS]!;
  let ours = false;
  for (let k = 0; k < nThr && !ours; k++) ours = tokens.includes(i[THR_BASE + 4 * k]!);
  if (!ours) return undefined;
  if (Atomics.compareExchange(i, H_STATE, PLAN_ARMED, PLAN_BUSY) !== PLAN_ARMED) return undefined;
  const generation = Atomics.load(i, H_GEN);
  let fired = false;
  try {
    const out = decide(i, f, generation, dirs, io, observed);
    fired = out.fired;
    return out;
  } catch (e) {
    return { fired: false, generation, reason: `error: ${(e as Error).message}` };
  } finally {
    Atomics.store(i, H_STATE, fired ? PLAN_FIRED : PLAN_ARMED);
  }
}

function decide(
  i: Int32Array,
  f: Float64Array,
  generation: number,
  dirs: readonly string[],
  io: FastEvictIo,
  observed: FastObservation | undefined,
): FastOutcome {
  const stepAside = (reason: string, detail?: string): FastOutcome => ({ fired: false, generation, reason, ...(detail ? { detail } : {}) });
  const nDirs = i[H_DIRS]!;
  const links = io.dirLinks(dirs.slice(0, nDirs));
  for (let k = 0; k < nDirs; k++) if (links[k] !== f[FDIR_BASE + k]) return stepAside("pod cgroups changed since the plan");
  const text = new Uint8Array(8192);
  const readText = (fd: number): string => decoder.decode(text.subarray(0, io.pread(fd, text)));
  const readNumber = (fd: number): number => {
    const v = Number(readText(fd).trim());
    if (!Number.isFinite(v)) throw new Error(`fd ${fd}: not a number`);
    return v;
  };
  const inactiveIn = (text: string, fd: number, key: "total_inactive_file" | "inactive_file"): number => {
    const v = inactiveFileFromStat(text, key);
    if (v === undefined) throw new Error(`fd ${fd}: no ${key}`);
    return v;
  };
  const podKey = i[H_CGROUP_VERSION] === 2 ? "inactive_file" : "total_inactive_file";
  /** How each threshold was read: "observed" (the waking read) or its files. */
  const judged: string[] = [];
  const readInactive = (fd: number): number => inactiveIn(readText(fd), fd, podKey);
  /** A threshold's cgroup: [usage, inactive_file] as the summary computes them for it. */
  const readThreshold = (k: number): [number, number] => {
    const usageFd = i[THR_BASE + 4 * k + 1]!;
    const statFd = i[THR_BASE + 4 * k + 2]!;
    const files = THRESHOLD_FILES[i[THR_BASE + 4 * k + 3]!] ?? "v1";
    if (files === "v2" && observed && observed.token === i[THR_BASE + 4 * k]) {
      judged[k] = "observed";
      return [observed.usageBytes, observed.inactiveFileBytes];
    }
    judged[k] = files;
    if (files === "v2-root") {
      const text = readText(statFd);
      const anon = statValue(text, "anon");
      const file = statValue(text, "file");
      if (anon === undefined || file === undefined) throw new Error(`fd ${statFd}: no anon or file`);
      return [anon + file, inactiveIn(text, statFd, "inactive_file")];
    }
    const usage = readNumber(usageFd);
    return [usage, inactiveIn(readText(statFd), statFd, files === "v2" ? "inactive_file" : "total_inactive_file")];
  };

  let thr = -1;
  let available = 0;
  let capacity = 0;
  const notMet: string[] = [];
  for (let k = 0; k < i[H_THRESHOLDS]! && thr < 0; k++) {
    const [usage, inactive] = readThreshold(k);
    const at = memoryThresholdAt(f[FTHR_BASE + 2 * k + 1]!, f[FTHR_BASE + 2 * k]!, usage, inactive);
    if (!at.met)
      notMet.push(`token ${i[THR_BASE + 4 * k]} (${judged[k]}): available ${at.available} > ${f[FTHR_BASE + 2 * k + 1]} of capacity ${f[FTHR_BASE + 2 * k]}`);
    if (at.met) {
      thr = k;
      available = at.available;
      capacity = f[FTHR_BASE + 2 * k]!;
    }
  }
  if (thr < 0) return stepAside(NOT_MET_AT_WAKE_UP, notMet.join("; "));

  const nPods = i[H_PODS]!;
  const cands: FastCandidate[] = [];
  const usages: number[] = [];
  for (let k = 0; k < nPods; k++) {
    cands.push({ request: f[FPOD_BASE + 2 * k]!, priority: f[FPOD_BASE + 2 * k + 1]! });
    // fd -1: the pod had no memory cgroup at plan time (the summary then reports no memory: 0).
    const fd = i[POD_BASE + 4 * k]!;
    usages.push(fd < 0 ? 0 : readNumber(fd));
  }
  const workingSet = (k: number) => {
    const fd = i[POD_BASE + 4 * k + 1]!;
    return fd < 0 ? 0 : usages[k]! - readInactive(fd);
  };
  const { victim, workingSets } = chooseMemoryVictim(cands, (k) => usages[k]!, workingSet);
  const readAtMs = io.now();
  if (victim < 0) return stepAside("no candidate pod");
  const count = i[POD_BASE + 4 * victim + 3]!;
  if (count <= 0) return stepAside("the victim's containers are not all known to the direct signaller yet");
  const first = i[POD_BASE + 4 * victim + 2]!;
  let signalled = 0;
  let sentAtMs = 0;
  const sent: { pid: number; signal: number }[] = [];
  for (let c = first; c < first + count; c++) {
    const at = io.now();
    const signal = i[CONT_BASE + CONT_STRIDE * c + 1]!;
    try {
      io.signal(i[CONT_BASE + CONT_STRIDE * c]!, signal);
      if (signalled++ === 0) sentAtMs = at;
      sent.push({ pid: i[CONT_BASE + CONT_STRIDE * c + 2]!, signal });
    } catch {
      // exited already (ESRCH): the runtime's stop finds it stopped
    }
  }
  if (signalled === 0) return stepAside("the victim's containers have all exited");
  // Read after the signals (the kill never waits on them), before the victim runs its exit: this thread
  // is at a higher priority, and a read later on the main thread sees the memory being freed.
  const containerWorkingSets = victimContainerWorkingSets(i, first, count, (usageFd, statFd) => readNumber(usageFd) - readInactive(statFd));
  return {
    fired: true,
    generation,
    threshold: thr,
    available,
    capacity,
    victim,
    usages,
    workingSets,
    containerWorkingSets,
    readAtMs,
    sentAtMs,
    signalled,
    sent,
  };
}

/** The working set of each of the victim's planned containers; NaN where no cgroup is known or a read fails (it went away). */
function victimContainerWorkingSets(i: Int32Array, first: number, count: number, read: (usageFd: number, statFd: number) => number): number[] {
  const out: number[] = [];
  for (let c = first; c < first + count; c++) {
    const usageFd = i[CONT_BASE + CONT_STRIDE * c + 3]!;
    const statFd = i[CONT_BASE + CONT_STRIDE * c + 4]!;
    let ws = Number.NaN;
    try {
      if (usageFd >= 0 && statFd >= 0) ws = read(usageFd, statFd);
    } catch {}
    out.push(ws);
  }
  return out;
}

/**
 * A dry run of the decision (worker side) on a private copy of the armed plan, every threshold made met
 * and every signal refused: each step of tryFastEviction runs — the link counts, the threshold's and the
 * candidates' reads, the ranking — so its code is compiled and paged in before the first real crossing
 * needs it. Measured in the v2 test guest without it: the first eviction after a boot took 10–26 ms
 * crossing → signal (its decision 3.6 ms with 22 major faults, against ~1 ms after). The real plan is
 * only read, never taken (a cycle asking for it meanwhile is not told "busy"), and nothing is signalled;
 * a plan republished during the copy can only give the copy stale fds, which are read, not signalled.
 * Returns the step-aside reason ("the victim's containers have all exited" when every step ran), or
 * undefined when no plan is armed.
 */
export function rehearseFastEviction(buf: SharedArrayBuffer, dirs: readonly string[], io: FastEvictIo = realIo): string | undefined {
  if (Atomics.load(views(buf).i, H_STATE) !== PLAN_ARMED) return undefined;
  const copy = new SharedArrayBuffer(buf.byteLength);
  new Uint8Array(copy).set(new Uint8Array(buf));
  const { i, f } = views(copy);
  if (i[H_STATE] !== PLAN_ARMED || i[H_THRESHOLDS]! <= 0) return undefined;
  for (let k = 0; k < i[H_THRESHOLDS]!; k++) f[FTHR_BASE + 2 * k + 1] = f[FTHR_BASE + 2 * k]!; // threshold = capacity: met
  const refuse = () => {
    throw new Error("rehearsal: no signal");
  };
  const out = tryFastEviction(copy, [i[THR_BASE]!], dirs, { ...io, signal: refuse });
  return out?.fired === false ? out.reason : undefined;
}
