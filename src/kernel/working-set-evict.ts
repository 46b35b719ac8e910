// The planned eviction as the working-set thread carries it out (working-set-worker.ts), over the plan
// the main thread publishes (fast-evict.ts): the decision at a crossing, its accounting — where the
// thread's time went up to it, its major faults — the wait for the victim to take its signal before the
// crossing is posted, and one dry run of each new plan.
import { readFileSync } from "node:fs";
import { preciseNow } from "../clock.ts";
import { type FastOutcome, PLAN_ARMED, planGeneration, planState, rehearseFastEviction, tryFastEviction } from "./fast-evict.ts";
import { awaitSignalsTaken, type SignalsTakenIo } from "./signals-taken.ts";
import type { MonotonicSleeper } from "./monotonic-sleep.ts";
import type { WorkingSetTarget } from "./working-set-protocol.ts";
import { majflt, type SchedMark, schedMark, schedSpan, us } from "./working-set-read.ts";

export type FiredOutcome = Extract<FastOutcome, { fired: true }>;

/** Major faults when the victim was signalled: this thread's, and the whole process's. */
export interface FaultsAtSignal {
  thread: number;
  process: number;
}

/** After signalling: post once the victim took its signal, checked at 2, 6, 14 and 30 ms (2 ms when a PID is unknown). */
const POST_AFTER_SIGNAL = { minMs: 2, capMs: 30, firstMs: 2 };
/** At most one rehearsal a second: plans change with pods. */
const REHEARSE_EVERY_MS = 1000;
const threadMajflt = () => majflt("thread");

export interface ThreadEviction {
  /** The main thread's eviction plan and the QoS directories whose link counts it checks. */
  setPlan(plan: { buffer: SharedArrayBuffer; dirs: string[] }): void;
  /** The armed plan's decision for a target that carries a token (fast-evict.ts tryFastEviction); undefined for one that does not. */
  decide(t: WorkingSetTarget, usageBytes: number, inactiveFileBytes: number): FastOutcome | undefined;
  /**
   * A fired decision's accounting: where the thread's time went up to it since its last sleep (markAtSleep,
   * sleepMs) — on the CPU, runnable, neither: a slow eviction can be a decision of ~1 ms of work that ends 5–20 ms
   * after the wake-up — and its major faults since the last mark. Only a fired decision reads the thread's
   * schedstat (after it): retries and repeats cost no /proc read.
   */
  account(fast: FiredOutcome, decisionStart: number, markAtSleep: SchedMark | undefined, sleepMs: number): FaultsAtSignal;
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
  awaitVictim(fast: FiredOutcome, atSignal: FaultsAtSignal): void;
  /** A new armed plan gets one dry run of the decision on this thread (rehearseFastEviction). */
  rehearseNewPlan(now: number): void;
}

/** The thread's planned eviction; `sleeper` sleeps between the checks of the victim (no post cuts it short). */
export function createThreadEviction(sleeper: MonotonicSleeper): ThreadEviction {
  let plan: { buffer: SharedArrayBuffer; dirs: string[] } | undefined;
  /** threadMajflt() after the last rehearsal or fired decision: faults since then are the next decision's. */
  let majfltMark = Number.NaN;
  /** The plan generation last rehearsed, and when. */
  let rehearsed = { generation: Number.NaN, atMs: Number.NEGATIVE_INFINITY };
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
  return {
    setPlan(p) {
      plan = p;
    },
    decide(t, usageBytes, inactiveFileBytes) {
      if (!plan || t.token === undefined) return undefined;
      const read = t.source === "meminfo" ? undefined : { token: t.token, usageBytes, inactiveFileBytes };
      return tryFastEviction(plan.buffer, [t.token], plan.dirs, undefined, read);
    },
    account(fast, decisionStart, markAtSleep, sleepMs) {
      const after = schedMark();
      fast.cpu = {
        ...(after && markAtSleep ? { sinceSleep: { ...schedSpan(markAtSleep, after), sleepMs: us(sleepMs) } } : {}),
        decisionMs: us((after?.atMs ?? performance.now()) - decisionStart),
      };
      const atSignal: FaultsAtSignal = { thread: threadMajflt(), process: majflt("process") };
      fast.cpu.majflt = { toSignal: atSignal.thread - majfltMark };
      return atSignal;
    },
    awaitVictim(fast, atSignal) {
      fast.takenAtMs = awaitSignalsTaken(fast.sent, takenIo, POST_AFTER_SIGNAL) ?? null;
      majfltMark = threadMajflt();
      if (fast.cpu?.majflt) {
        fast.cpu.majflt.toTaken = majfltMark - atSignal.thread;
        fast.cpu.majflt.othersToTaken = majflt("process") - atSignal.process - fast.cpu.majflt.toTaken;
      }
    },
    rehearseNewPlan(now) {
      if (!plan || now - rehearsed.atMs < REHEARSE_EVERY_MS || planState(plan.buffer) !== PLAN_ARMED) return;
      const generation = planGeneration(plan.buffer);
      if (generation === rehearsed.generation) return;
      rehearsed = { generation, atMs: now };
      try {
        rehearseFastEviction(plan.buffer, plan.dirs);
      } catch {
        // a dry run: whatever failed, the real decision steps aside on it too
      }
      majfltMark = threadMajflt();
    },
  };
}
