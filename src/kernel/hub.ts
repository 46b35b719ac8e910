// NotifierHub: one epoll set + one Worker for every kernel notification source (memcg threshold
// eventfds, PSI trigger fds, memory.events fds), delivering readiness to callbacks on the main
// thread.
//
// Why a Worker (and not a non-blocking eventfd read through Bun.file(fd).stream(), which wakes the
// main thread about as fast with no extra thread): PSI triggers and kernfs files like
// memory.events signal with EPOLLPRI and have nothing to read(), so a stream cannot wait on them;
// one epoll set covers all three kinds uniformly. epoll_wait on the main thread would stall the
// event loop (HTTP serving), so the wait runs in src/kernel/epoll-worker.ts. Measured on the 2-vCPU
// CI host (scripts/bench/notifier.ts, 120 real memcg crossings): child's 2 MiB write → handler on
// the main thread p50 ≈ 0.55 ms, p99 1.3–5.5 ms (the tail is kernel → worker wake-up, not the
// postMessage hop, ≈ 0.15 ms); the waiting thread uses no CPU at idle. 1 s polling: p50 ≈ 300 ms.
//
// Protocol: the main thread owns every fd and every epoll_ctl. Entries are EPOLLONESHOT: the
// worker reports a token once; the main thread runs the source's callback (which drains the fd)
// and then re-arms it with EPOLL_CTL_MOD. So a level-triggered source that is not drained yet never
// makes the worker spin, and a removed token that is still in flight is simply ignored.
// Stop: write the control eventfd (token 0); the worker leaves epoll_wait and says "stopped".
//
// Priority (opt-in, thread-priority.ts): the worker can run at its own nice value and boost the main
// thread on each wake-up; whoever handles the event calls `endBoost()` once its work is done.
import { EPOLLIN, EPOLLONESHOT } from "../../ffi/libc.ts";
import { Epoll } from "./epoll.ts";
import type { WorkerMessage, WorkerStart } from "./epoll-worker.ts";
import type { FastOutcome } from "./fast-evict.ts";
import { Eventfd } from "./eventfd.ts";
import { currentNices, endBoost, isBoosted, newBoostSpec, processThreads, type BoostSpec, type PriorityOutcome } from "./thread-priority.ts";
import { workerUrl } from "./worker-url.ts";

export interface HubSource {
  /** The fd to wait on; owned by the caller, who must `remove()` before closing it. */
  fd: number;
  /** EPOLLIN for eventfds, EPOLLPRI for PSI triggers and kernfs files. */
  events: number;
  /**
   * Runs on the main thread with the ready epoll events; should drain the fd. `wokeAtMs` is the
   * wall-clock time (preciseNow) when the worker left epoll_wait.
   */
  onReady(events: number, wokeAtMs: number): void;
}

export interface HubRegistration {
  readonly token: number;
  /** Stops watching; safe to call twice. The caller closes its fd afterwards. */
  remove(): void;
}

export interface NotifierHub {
  add(source: HubSource): HubRegistration;
  /** Number of registered sources. */
  readonly size: number;
  readonly closed: boolean;
  /** Stops the worker and closes the epoll and control fds. Sources must be removed by their owners. */
  close(): Promise<void>;
  /**
   * With `boostMainThread`: the main thread goes back to the nice value it had when the hub was
   * created, if a wake-up boosted it (no syscall otherwise). Returns true when it lowered itself.
   */
  endBoost(): boolean;
  /** The main thread is boosted right now (tests, debugging). */
  readonly boosted: boolean;
  /** The boost this hub's endBoost() ends, for another notifier thread to raise (the v2 working-set watch). */
  readonly boostSpec?: BoostSpec;
}

export interface NotifierHubOptions {
  /** A callback threw or the worker failed; the hub keeps going. */
  onError?(err: Error): void;
  /** How long close() waits for the worker to leave epoll_wait (default 2000 ms). */
  stopTimeoutMs?: number;
  /** Nice value of the worker thread (default: inherited from the main thread). */
  threadNice?: number;
  /** SCHED_RR priority of the worker thread, over its nice value (thread-priority.ts; default: none). */
  threadRealtime?: number;
  /**
   * Raise the main thread (and the process's other threads that exist when the hub is created: GC
   * helpers, Bun's pool) to this nice value on each wake-up, until endBoost() (default: never).
   */
  boostMainThreadNice?: number;
  /**
   * A plan for the worker to evict on a hard memory threshold itself (fast-evict.ts), and where its
   * outcome goes: called on the main thread after the wake-up's sources ran their callbacks.
   */
  fastPlan?: { buffer: SharedArrayBuffer; dirs: string[]; onOutcome(outcome: FastOutcome, wokeAtMs: number): void };
  /** The outcome of threadNice and threadRealtime, and a refused boost (once): for one log line. */
  onPriority?(p: PriorityOutcome): void;
}

const CONTROL_TOKEN = 0;

export function createNotifierHub(opts: NotifierHubOptions = {}): NotifierHub {
  const onError = opts.onError ?? ((err: Error) => console.error(`notifier hub: ${err.message}`));
  const epoll = new Epoll();
  const control = new Eventfd();
  const sources = new Map<number, HubSource>();
  let nextToken = 1;
  let closing: Promise<void> | undefined;
  let stopped: () => void = () => {};
  const stoppedP = new Promise<void>((r) => (stopped = r));

  let boost: BoostSpec | undefined;
  let baseNice: number[] = [];
  if (opts.boostMainThreadNice !== undefined) {
    // The main thread (its TID is the process id) and the threads that exist now (JSC's GC helpers,
    // Bun's pool); their own values now are what endBoost() restores. The worker starts after this.
    const tids = processThreads();
    baseNice = currentNices(tids);
    boost = newBoostSpec(tids, opts.boostMainThreadNice);
  }

  let worker: Worker;
  try {
    epoll.add(control.fd, EPOLLIN, CONTROL_TOKEN);
    worker = new Worker(workerUrl("epoll-worker", import.meta.url));
  } catch (e) {
    epoll.close();
    control.close();
    throw e;
  }
  (worker as Worker & { unref(): void }).unref();
  worker.onmessage = (e: MessageEvent<WorkerMessage>) => {
    const msg = e.data;
    if (msg.type === "stopped") stopped();
    else if (msg.type === "error") {
      onError(new Error(`epoll worker: ${msg.message}`));
      stopped();
    } else if (msg.type === "ready") {
      dispatch(msg.pairs, msg.wokeAtMs);
      // After the sources' callbacks (the kernel event is traced and its cycle queued first).
      if (msg.fast && opts.fastPlan && !closing) {
        try {
          opts.fastPlan.onOutcome(msg.fast, msg.wokeAtMs);
        } catch (err) {
          onError(err instanceof Error ? err : new Error(String(err)));
        }
      }
    } else if (msg.type === "priority") {
      const { type: _t, ...p } = msg;
      opts.onPriority?.(p);
    }
  };
  worker.onerror = (e: ErrorEvent) => {
    onError(new Error(`epoll worker failed: ${e.message}`));
    stopped();
  };
  const fastPlan = opts.fastPlan && { buffer: opts.fastPlan.buffer, dirs: opts.fastPlan.dirs };
  worker.postMessage({
    type: "start",
    epfd: epoll.fd,
    threadNice: opts.threadNice,
    threadRealtime: opts.threadRealtime,
    boost,
    fastPlan,
  } satisfies WorkerStart);

  function dispatch(pairs: number[], wokeAtMs: number): void {
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const token = pairs[i]!;
      const events = pairs[i + 1]!;
      const src = sources.get(token);
      if (!src) continue; // removed while the report was in flight
      try {
        src.onReady(events, wokeAtMs);
      } catch (err) {
        onError(err instanceof Error ? err : new Error(String(err)));
      }
      // The callback may have removed its source (e.g. cgroup gone) or closed the hub.
      if (closing || sources.get(token) !== src) continue;
      try {
        epoll.modify(src.fd, src.events | EPOLLONESHOT, token);
      } catch (err) {
        sources.delete(token);
        onError(new Error(`re-arming fd ${src.fd}: ${(err as Error).message}`));
      }
    }
  }

  return {
    add(source) {
      if (closing) throw new Error("notifier hub is closed");
      const token = nextToken++;
      epoll.add(source.fd, source.events | EPOLLONESHOT, token);
      sources.set(token, source);
      return {
        token,
        remove() {
          if (sources.get(token) !== source) return;
          sources.delete(token);
          epoll.remove(source.fd);
        },
      };
    },
    get size() {
      return sources.size;
    },
    get closed() {
      return closing !== undefined;
    },
    endBoost: () => (boost ? endBoost(boost, baseNice) : false),
    get boosted() {
      return boost ? isBoosted(boost) : false;
    },
    boostSpec: boost,
    close() {
      if (closing) return closing;
      closing = (async () => {
        for (const src of sources.values()) epoll.remove(src.fd);
        sources.clear();
        control.signal();
        const timeoutMs = opts.stopTimeoutMs ?? 2000;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const finished = await Promise.race([stoppedP.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)))]);
        clearTimeout(timer);
        worker.terminate();
        // A boost nobody ended (the hub closed mid-event) must not outlive the hub.
        if (boost) endBoost(boost, baseNice);
        if (finished) {
          epoll.close();
          control.close();
        } else {
          // The thread is still inside epoll_wait on these fds; leave them open rather than let
          // it wait on a reused fd number. The worker is unref'd, so the process can still exit.
          onError(new Error(`epoll worker did not stop within ${timeoutMs} ms; leaking its epoll fd ${epoll.fd}`));
        }
      })();
      return closing;
    },
  };
}
