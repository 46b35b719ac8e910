// The cgroup v2 fast path for memory.available / allocatableMemory.available (beyond upstream, which
// has no kernel notification on v2): a dedicated thread polls usage every intervalMs and reports when
// the working set (usage − inactive_file, as cAdvisor computes it) reaches a threshold's line
// (capacity − threshold amount). Why polling, and not PSI or memory.high (the measured figures are in
// docs/adr/0003-v2-working-set-watch.md): PSI only fires once tasks stall in reclaim, which a fence
// set below memory.max never causes at the crossing; memory.high fires at once but throttles and
// reclaims the pods' page cache to keep under the line, i.e. it changes the workload it measures.
// Polling at a fixed 5 ms costs ~17 % of the one-CPU test guest at idle, so the interval adapts to the
// headroom (working-set-worker.ts): 5 ms at the line, up to 500 ms far from it; and when the usage
// rises fast enough to reach the line within 25 ms, the thread polls it off its timer for ≤ 30 ms.
import type { WorkingSetCrossing, WorkingSetPollSettings, WorkingSetTarget, WorkingSetWorkerIn, WorkingSetWorkerOut } from "./working-set-protocol.ts";
import type { BoostSpec, PriorityOutcome } from "./thread-priority.ts";
import type { FastOutcome } from "./fast-evict.ts";
import { Eventfd } from "./eventfd.ts";
import { workerUrl } from "./worker-url.ts";
import { DEFAULT_WORKING_SET_POLL } from "./working-set-schedule.ts";

export type { WorkingSetCrossing, WorkingSetPollSettings, WorkingSetTarget } from "./working-set-protocol.ts";

export interface WorkingSetWatchOptions {
  onCrossing(c: WorkingSetCrossing): void;
  /** A target could not be read (cgroup removed…); it is dropped until the next set(). */
  onError?(id: string, message: string): void;
  /** Every read (set poll.reportReads): usage and the working set with the inactive_file last read; timed: not an episode's; atMs: when (wall clock). */
  onRead?(id: string, usageBytes: number, workingSetBytes: number, timed: boolean, atMs: number): void;
  /** Overrides of DEFAULT_WORKING_SET_POLL. */
  poll?: Partial<WorkingSetPollSettings>;
  /** Nice value of the polling thread (default: inherited), as the epoll worker's (thread-priority.ts). */
  threadNice?: number;
  /** SCHED_RR priority of the polling thread, over its nice value (thread-priority.ts; default: none). */
  threadRealtime?: number;
  /** Raise these threads on each crossing, before it is posted (the hub's spec: its endBoost() lowers them). */
  boost?: BoostSpec;
  /**
   * A plan for the thread to evict on a hard memory threshold itself (fast-evict.ts; targets name it by
   * their token), and where its outcome goes: on the main thread, after onCrossing.
   */
  fastPlan?: { buffer: SharedArrayBuffer; dirs: string[]; onOutcome(outcome: FastOutcome, crossedAtMs: number): void };
  /** The outcome of threadNice and threadRealtime, and a refused boost (once): for one log line. */
  onPriority?(p: PriorityOutcome): void;
}

export interface WorkingSetWatch {
  /** Replaces the watched targets (same id and source: state kept, line updated). */
  set(targets: readonly WorkingSetTarget[]): void;
  readonly targets: readonly WorkingSetTarget[];
  stop(): Promise<void>;
}

export function startWorkingSetWatch(opts: WorkingSetWatchOptions): WorkingSetWatch {
  const settings: WorkingSetPollSettings = { ...DEFAULT_WORKING_SET_POLL, ...opts.poll };
  const worker = new Worker(workerUrl("working-set-worker", import.meta.url));
  (worker as Worker & { unref(): void }).unref();
  // The worker sleeps in epoll_wait between reads, not in its event loop: each message is counted in
  // [0] and the eventfd signalled, so it goes back to its loop to take it (working-set-worker.ts run()).
  const mailbox = new Int32Array(new SharedArrayBuffer(4));
  const wake = new Eventfd();
  worker.postMessage({ type: "mailbox", buffer: mailbox.buffer as SharedArrayBuffer, wakeFd: wake.fd } satisfies WorkingSetWorkerIn);
  const post = (msg: WorkingSetWorkerIn) => {
    worker.postMessage(msg);
    Atomics.add(mailbox, 0, 1);
    wake.signal();
  };
  if (opts.threadNice !== undefined || opts.threadRealtime !== undefined || opts.boost)
    post({ type: "priority", threadNice: opts.threadNice, threadRealtime: opts.threadRealtime, boost: opts.boost } satisfies WorkingSetWorkerIn);
  if (opts.fastPlan) post({ type: "fastPlan", buffer: opts.fastPlan.buffer, dirs: opts.fastPlan.dirs } satisfies WorkingSetWorkerIn);
  let current: readonly WorkingSetTarget[] = [];
  let stopping: Promise<void> | undefined;
  let stopped: () => void = () => {};
  worker.onmessage = (e: MessageEvent<WorkingSetWorkerOut>) => {
    const msg = e.data;
    if (msg.type === "crossed") {
      // The crossing first (its cycle is queued and the event traced), then the thread's eviction is recorded.
      try {
        opts.onCrossing(msg.crossing);
      } finally {
        if (msg.fast && opts.fastPlan && !stopping) opts.fastPlan.onOutcome(msg.fast, msg.crossing.atMs);
      }
    } else if (msg.type === "read") opts.onRead?.(msg.id, msg.usageBytes, msg.workingSetBytes, msg.timed, msg.atMs);
    else if (msg.type === "error") opts.onError?.(msg.id, msg.message);
    else if (msg.type === "priority") {
      const { type: _t, ...p } = msg;
      opts.onPriority?.(p);
    } else if (msg.type === "stopped") stopped();
  };
  worker.onerror = (e: ErrorEvent) => {
    opts.onError?.("*", `working-set worker failed: ${e.message}`);
    stopped();
  };
  return {
    set(targets) {
      if (stopping) return;
      current = targets.map((t) => ({ ...t }));
      post({ type: "targets", targets: [...current], settings } satisfies WorkingSetWorkerIn);
    },
    get targets() {
      return current;
    },
    stop() {
      if (stopping) return stopping;
      stopping = new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), 2000);
        stopped = () => {
          clearTimeout(t);
          resolve(true);
        };
        post({ type: "stop" } satisfies WorkingSetWorkerIn);
      }).then((clean) => {
        worker.terminate();
        // A thread that never answered may still be in a sleep on the eventfd: its number must not be
        // reused under it (a read there would take another fd's bytes), so it is left open then.
        if (clean) wake.close();
      });
      return stopping;
    },
  };
}
