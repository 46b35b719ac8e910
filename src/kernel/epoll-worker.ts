// The one thread that blocks: it sits in epoll_wait(-1) on the hub's epoll set and posts the ready
// tokens to the main thread. It never touches the watched fds themselves (entries are
// EPOLLONESHOT, the main thread drains and re-arms them), so an fd closed or reused by the main
// thread can never be read here. Control token 0 (the hub's stop eventfd) ends the loop.
// Built as an extra entrypoint of `bun build --compile` (scripts/build.sh globs src/**/*-worker.ts).
//
// Priority (see thread-priority.ts): at start the thread may set its own nice value (as earlyoom -p
// sets its process's), and on every wake-up it may boost the main thread before posting, so the
// cycle the event triggers runs at that priority too; the main thread lowers itself back after it.
// Not after this thread evicted itself (fast-evict.ts): the main thread then only records it.
// Both are plain syscalls on fds/ids that exist before any event: the wake-up path opens nothing.
import { EPOLL_EVENT_SIZE, epoll_wait } from "../../ffi/libc.ts";
import { preciseNow } from "../clock.ts";
import { tryFastEviction, type FastOutcome } from "./fast-evict.ts";
import { applyThreadPriority, boostThread, type BoostSpec, type PriorityOutcome } from "./thread-priority.ts";

declare const self: Worker;

export interface WorkerStart {
  type: "start";
  epfd: number;
  /** Nice value for this thread, set before the first wait (undefined: inherit the creator's). */
  threadNice?: number;
  /** SCHED_RR priority for this thread, over its nice value (undefined: none). */
  threadRealtime?: number;
  /** Boost the main thread on each wake-up (see thread-priority.ts). */
  boost?: BoostSpec;
  /** A hard memory eviction decided here at the crossing, from the main thread's plan (fast-evict.ts). */
  fastPlan?: { buffer: SharedArrayBuffer; dirs: string[] };
}

export type WorkerMessage =
  /** pairs = [token, events, token, events, …]; wokeAtMs = wall-clock ms (preciseNow) at wake-up. */
  /** fast: what the planned eviction did at this wake-up, when a planned threshold was among the tokens. */
  | { type: "ready"; pairs: number[]; wokeAtMs: number; fast?: FastOutcome }
  /** The outcome of `threadNice` (and the first boost failure, if any): for one log line. */
  | ({ type: "priority" } & PriorityOutcome)
  | { type: "stopped" }
  | { type: "error"; message: string };

const MAX_EVENTS = 64;

function run(start: WorkerStart): void {
  const { epfd, boost } = start;
  const buf = new Uint8Array(MAX_EVENTS * EPOLL_EVENT_SIZE);
  let boostFailed = false;
  for (;;) {
    let events;
    try {
      events = epoll_wait(epfd, MAX_EVENTS, -1, buf);
    } catch (e) {
      self.postMessage({ type: "error", message: (e as Error).message } satisfies WorkerMessage);
      return;
    }
    const wokeAtMs = preciseNow();
    const pairs: number[] = [];
    let stop = false;
    for (const ev of events) {
      if (ev.data === 0) stop = true;
      else pairs.push(ev.data, ev.events);
    }
    // The notifier-thread eviction first, then the boost — and none after it evicted: the main thread
    // then only records the eviction, and boosted (with the early threads) it took cores from this
    // thread's decision and from the victim's SIGTERM handler on two busy cores (reaction bench, 100
    // idle pods: one decision 18 ms, sent → got up to 7 ms; v2's working-set thread found the same).
    let fast: FastOutcome | undefined;
    if (pairs.length > 0 && start.fastPlan) {
      const tokens: number[] = [];
      for (let k = 0; k < pairs.length; k += 2) tokens.push(pairs[k]!);
      fast = tryFastEviction(start.fastPlan.buffer, tokens, start.fastPlan.dirs);
    }
    if (pairs.length > 0 && boost && !boostFailed && !fast?.fired) {
      const err = boostThread(boost);
      if (err) {
        boostFailed = true; // said once; the events still go through, at the main thread's own priority
        self.postMessage({ type: "priority", what: "boost", nice: boost.nice, applied: false, error: err } satisfies WorkerMessage);
      }
    }
    if (pairs.length > 0) self.postMessage({ type: "ready", pairs, wokeAtMs, ...(fast ? { fast } : {}) } satisfies WorkerMessage);
    if (stop) return;
  }
}

self.onmessage = (e: MessageEvent<WorkerStart>) => {
  if (e.data?.type !== "start") return;
  const r = applyThreadPriority({ nice: e.data.threadNice, realtime: e.data.threadRealtime });
  if (r) self.postMessage({ type: "priority", ...r } satisfies WorkerMessage);
  run(e.data);
  self.postMessage({ type: "stopped" } satisfies WorkerMessage);
};
