// Scheduling priority of the notifier path, per thread (Linux nice values are per thread:
// setpriority(PRIO_PROCESS, tid) changes that one thread).
//
// Why: under CPU contention (one busy loop per core beside the node's pods), the path from the
// kernel's memcg event to the victim's signal waits for a core twice: the notifier thread's
// wake-up, and the main thread's (the cycle that decides and signals runs there). At nice 0 that
// took the reaction benchmark's victim-got-SIGTERM p99 to 43 ms; the whole agent at nice -10
// (`schedulingNice`) brought it to 6 ms. Renicing the whole agent also favours everything else it
// does (HTTP, PLEG, image pulls…) over the node's pods, all the time. Instead:
//   - the notifier thread runs at NOTIFIER_THREAD_NICE (as earlyoom -p runs at -20); it sleeps in
//     epoll_wait and works only when the kernel reports memory, so the favour costs nothing at idle;
//   - when it wakes, before posting the event, it boosts the main thread to the same value (one
//     setpriority on its TID, which is the process id); the main thread drops back to its own
//     value (`schedulingNice`, 0 by default) once the cycle the event triggered has sent its signal.
// Nothing the cycle decides changes (thresholds, ranking, one pod per cycle, grace periods): only
// when it runs. Both need CAP_SYS_NICE; without it each is said once and the path runs unboosted.
//
// The boost covers the process's other threads that exist when the hub starts too (JSC's heap
// helper and collector threads, Bun's pool): with 100 pods beside the hog, the event sometimes waited
// 200–300 ms for the main thread (reaction benchmark, --idle-pods 100), which a mutator waiting for a
// nice-0 collector thread starved by the busy loops would explain; threads started later keep their own.
//
// The boost flag is one Int32 in a SharedArrayBuffer both threads see: 1 while the main thread is
// boosted. The worker sets it before raising; the main thread clears it before lowering and re-checks
// after, so an event that arrives while the main thread is lowering itself leaves it boosted.
import { readdirSync } from "node:fs";
import { getpriority, PRIO_PROCESS, sched_setscheduler, SCHED_RESET_ON_FORK, SCHED_RR, setpriority } from "../../ffi/libc.ts";

/** The notifier thread's nice value and the main thread's while it handles an event (as earlyoom -p). */
export const NOTIFIER_THREAD_NICE = -20;

/**
 * The notifier threads' real-time priority: SCHED_RR at 1, the lowest, above every SCHED_OTHER thread
 * (as Android's low-memory killer, lmkd, runs SCHED_FIFO). Why beyond nice -20: on cgroup v2 a nice value
 * weighs only among the threads of its own cgroup, and the pods are in another (kubepods) — on a busy
 * CPU the hog's group took its turn in the middle of the thread's ~1 ms decision or before its wake-up
 * (the one-CPU v2 guest: 4 ms runnable per tick lost, 24 ms in one 40 ms wait), whatever the thread's nice.
 * A real-time thread runs as soon as it is runnable. Safe to hold: the threads sleep between reads
 * (futex/epoll waits, never a spin: the v2 watch's imminent-crossing episodes sleep 1 ms between reads
 * when real-time), SCHED_RESET_ON_FORK keeps any thread they start ordinary, and the kernel's RT
 * throttling (sched_rt_runtime_us) bounds a runaway. Where the kernel refuses (no CAP_SYS_NICE, or
 * CONFIG_RT_GROUP_SCHED with no real-time runtime in the thread's cpu cgroup: EPERM) the thread keeps its nice value.
 */
export const NOTIFIER_THREAD_RT_PRIORITY = 1;

export interface BoostSpec {
  /** The threads to boost: the main thread first (its TID is the process id). */
  tids: number[];
  nice: number;
  /** Int32[0]: 1 while boosted. */
  state: SharedArrayBuffer;
}

export interface NiceOutcome {
  applied: boolean;
  effective?: number;
  error?: string;
}

const errCode = (e: unknown) => (e as { code?: string }).code ?? (e as Error).message;

function readNice(who: number): number | undefined {
  try {
    return getpriority(PRIO_PROCESS, who);
  } catch {
    return undefined;
  }
}

/** Sets the calling thread's nice value (or thread `tid`'s); never throws. */
export function applyThreadNice(nice: number, tid = 0): NiceOutcome {
  try {
    setpriority(PRIO_PROCESS, tid, nice);
  } catch (e) {
    return { applied: false, effective: readNice(tid), error: errCode(e) };
  }
  const effective = readNice(tid);
  return { applied: effective === undefined || effective === nice, effective };
}

export interface RealtimeOutcome {
  priority: number;
  applied: boolean;
  error?: string;
}

/** Sets the calling thread to SCHED_RR at `priority` (SCHED_RESET_ON_FORK); never throws. */
export function applyThreadRealtime(priority: number): RealtimeOutcome {
  try {
    sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, priority);
    return { priority, applied: true };
  } catch (e) {
    return { priority, applied: false, error: errCode(e) };
  }
}

/** A notifier thread's priority request, and what the kernel made of it (for one log line). */
export interface ThreadPriority {
  nice?: number;
  /** SCHED_RR priority, on top of the nice value (which stays as the fallback). */
  realtime?: number;
}

export type PriorityOutcome = { what: "thread" | "boost"; nice: number; applied: boolean; effective?: number; error?: string; realtime?: RealtimeOutcome };

/** Worker side, at start: the calling thread's nice value, then its real-time policy; never throws. */
export function applyThreadPriority(p: ThreadPriority): PriorityOutcome | undefined {
  if (p.nice === undefined && p.realtime === undefined) return undefined;
  const nice = p.nice ?? readNice(0) ?? 0;
  const n: NiceOutcome = p.nice === undefined ? { applied: true, effective: nice } : applyThreadNice(p.nice);
  return { what: "thread", nice, ...n, ...(p.realtime !== undefined ? { realtime: applyThreadRealtime(p.realtime) } : {}) };
}

export function newBoostSpec(tids: number | number[], nice: number): BoostSpec {
  return { tids: Array.isArray(tids) ? tids : [tids], nice, state: new SharedArrayBuffer(4) };
}

/** The process's threads now, the calling thread first (for the main thread: its TID is the pid). */
export function processThreads(pid = process.pid): number[] {
  let tids: number[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`)
      .map(Number)
      .filter((t) => Number.isInteger(t) && t > 0);
  } catch {}
  return [pid, ...tids.filter((t) => t !== pid)];
}

/** Each thread's nice value now (the value endBoost restores); 0 when unreadable. */
export const currentNices = (tids: readonly number[]): number[] => tids.map((t) => readNice(t) ?? 0);

function setAll(tids: readonly number[], nice: (i: number) => number): string | undefined {
  let first: string | undefined;
  for (let i = 0; i < tids.length; i++) {
    try {
      setpriority(PRIO_PROCESS, tids[i]!, nice(i));
    } catch (e) {
      // The main thread's refusal is the one that counts; another thread may simply have exited.
      if (i === 0) first = errCode(e);
    }
  }
  return first;
}

/** Worker side: boosts the threads unless already boosted. Returns an error code when the kernel refused the main thread's. */
export function boostThread(spec: BoostSpec): string | undefined {
  const flag = new Int32Array(spec.state);
  if (Atomics.exchange(flag, 0, 1) === 1) return undefined;
  const err = setAll(spec.tids, () => spec.nice);
  if (err) Atomics.store(flag, 0, 0);
  return err;
}

export const isBoosted = (spec: BoostSpec): boolean => Atomics.load(new Int32Array(spec.state), 0) === 1;

/**
 * Main-thread side: every thread back to its base value (`baseNice`: one for all, or one per tid) if
 * boosted (no syscall otherwise). Returns whether it lowered them and they stayed lowered (false too when
 * a new event re-boosted them meanwhile).
 */
export function endBoost(spec: BoostSpec, baseNice: number | readonly number[]): boolean {
  const flag = new Int32Array(spec.state);
  if (Atomics.load(flag, 0) === 0) return false;
  Atomics.store(flag, 0, 0);
  const base = (i: number) => (typeof baseNice === "number" ? baseNice : (baseNice[i] ?? 0));
  if (setAll(spec.tids, base)) return false;
  // The worker may have woken between the store and the setpriority: it saw 0, set 1 and raised us,
  // possibly before our lowering landed. Raise again so the new event's cycle runs boosted.
  if (Atomics.load(flag, 0) === 1) {
    setAll(spec.tids, () => spec.nice);
    return false;
  }
  return true;
}
