// Pod workers (upstream pkg/kubelet/pod_workers.go, simplified): one serialized queue per pod UID, so
// at most one of SyncPod / SyncTerminatingPod / SyncTerminatedPod runs for a pod at a time, and
// updates that arrive meanwhile collapse into the newest. A pod only moves forward:
//   syncing → terminating (kill requested, or the pod reached a terminal phase)
//           → terminated (containers stopped) → finished (cleanup done).
// A finished UID is never synced again — that is why an evicted static pod stays down until its
// manifest changes (new content → new UID). Housekeeping forgets finished workers of removed pods.
//
// A kill never queues behind a slow sync (upstream cancels the sync's context and starts
// SyncTerminatingPod at once; a kill with a shorter grace period restarts a running termination with
// it). A call already in flight cannot be cut short here, so the kill aborts the sync's signal (it
// stops at its next step) and starts the termination alongside it; the loop waits for both, then runs
// one more termination pass, which stops whatever the preempted sync started meanwhile.
import { kv, log } from "../log.ts";
import type { Clock, TimerHandle } from "../clock.ts";
import type { Pod } from "./types.ts";
import type { PodLifecycleMetrics } from "./lifecycle-metrics.ts";
import { podKey } from "./pod-like.ts";

export type UpdateType = "create" | "update" | "sync" | "kill";

/**
 * A termination's grace period (upstream calculateEffectiveGracePeriod): the one already underway,
 * else the pod's terminationGracePeriodSeconds; a kill's override (eviction) can only shorten it; and
 * "no matter what" it is at least 1 s — so even a pod asking for 0 gets its stop signal (SIGTERM)
 * a second before the SIGKILL, as with the kubelet. (Upstream lets a first override lengthen the
 * pod's own period; no caller here asks for that, and never lengthening is the safer reading.)
 */
export function effectiveGracePeriod(current: number | undefined, podSeconds: number | undefined, override?: number): number {
  const base = current ?? podSeconds ?? 30;
  return Math.max(1, override === undefined ? base : Math.min(base, override));
}

export interface KillPodOptions {
  /** Shortens (never lengthens) the pod's terminationGracePeriodSeconds; the result is at least 1 s (effectiveGracePeriod). */
  gracePeriodOverrideSeconds?: number;
  /** Resolved when the pod's containers are stopped and cleanup ran. */
  onDone?: () => void;
}

export interface UpdatePodOptions {
  type: UpdateType;
  pod: Pod;
  kill?: KillPodOptions;
}

export interface SyncResult {
  /** The pod reached a terminal phase (Succeeded/Failed): terminate it and never restart it. */
  terminal?: boolean;
  /** Retry this sync after the error back-off (upstream backOffPeriod); e.g. CrashLoopBackOff. */
  retry?: boolean;
  /** With `retry`: this soon instead of the error back-off. */
  retryAfterMs?: number;
}

export interface PodSyncer {
  /** `signal` aborts when a kill preempts this sync: stop at the next step, the result is ignored. */
  syncPod(pod: Pod, type: UpdateType, signal?: AbortSignal): Promise<SyncResult>;
  syncTerminatingPod(pod: Pod, gracePeriodSeconds: number): Promise<void>;
  syncTerminatedPod(pod: Pod): Promise<void>;
}

export type WorkerState = "syncing" | "terminating" | "terminated" | "finished";

interface Worker {
  uid: string;
  pod: Pod;
  state: WorkerState;
  pending?: UpdateType;
  running: boolean;
  gracePeriodSeconds?: number;
  onDone: (() => void)[];
  retry?: TimerHandle;
  idle: (() => void)[];
  /** When updatePod first saw this UID, until its first sync starts (kubelet_pod_worker_start_duration_seconds). */
  seenAtMs?: number;
  /** What the loop is awaiting: a kill preempts a "sync", or a "terminating" with a longer grace. */
  busy?: "sync" | "terminating";
  abort?: AbortController;
  /** Grace period of the newest termination underway (the loop's or a preempting one). */
  terminatingGrace?: number;
  /** Terminations a kill started while the loop was busy; the loop waits for them. */
  preempts: Promise<void>[];
}

export interface PodWorkers {
  updatePod(opts: UpdatePodOptions): void;
  state(uid: string): WorkerState | undefined;
  /** A kill was requested or the pod is terminal (upstream IsPodTerminationRequested). */
  isTerminationRequested(uid: string): boolean;
  /** Containers may still run (syncing or terminating). */
  couldHaveRunningContainers(uid: string): boolean;
  /** Forgets finished workers whose UID is not in `desired` (housekeeping). */
  syncKnownPods(desired: ReadonlySet<string>): void;
  uids(): string[];
  /** Resolves when every worker is idle (tests and shutdown). */
  whenIdle(): Promise<void>;
  stop(): void;
}

export function createPodWorkers(opts: {
  syncer: PodSyncer;
  clock: Clock;
  /** Delay before retrying a failed or backing-off sync (upstream backOffPeriod, 10 s). */
  errorRetryMs?: number;
  /** Called when a worker reaches "finished". */
  onFinished?: (pod: Pod) => void;
  metrics?: Pick<PodLifecycleMetrics, "workerStarted" | "podSynced">;
}): PodWorkers {
  const workers = new Map<string, Worker>();
  const retryMs = opts.errorRetryMs ?? 10_000;
  let stopped = false;

  // The API server's deletionGracePeriodSeconds (kubectl delete --grace-period) is bedrock truth: it
  // shortens the pod's own period like a kill's override (upstream calculateEffectiveGracePeriod).
  const gracePeriod = (w: Worker, override?: number) => {
    const deletion = w.pod.metadata.deletionTimestamp ? w.pod.metadata.deletionGracePeriodSeconds : undefined;
    const o = deletion === undefined ? override : override === undefined ? deletion : Math.min(deletion, override);
    return effectiveGracePeriod(w.gracePeriodSeconds, w.pod.spec.terminationGracePeriodSeconds, o);
  };

  function beginTermination(w: Worker, override?: number) {
    w.gracePeriodSeconds = gracePeriod(w, override);
    if (w.state === "syncing") w.state = "terminating";
  }

  function terminate(w: Worker, grace: number): Promise<void> {
    w.terminatingGrace = grace;
    return opts.syncer.syncTerminatingPod(w.pod, grace);
  }

  /** A kill while the loop is busy: start the termination now instead of after the running call. */
  function preempt(w: Worker) {
    if (!w.running || stopped || w.state !== "terminating") return;
    const grace = gracePeriod(w);
    if (w.busy !== "sync" && w.busy !== "terminating") return;
    if (w.terminatingGrace !== undefined && grace >= w.terminatingGrace) return;
    w.abort?.abort();
    w.preempts.push(
      terminate(w, grace).catch((e) => {
        // The loop's own pass after it retries.
        log.error(`pod termination failed ${kv({ pod: podKey(w.pod), uid: w.uid, error: (e as Error).message })}`);
      }),
    );
  }

  async function awaitPreempts(w: Worker) {
    while (w.preempts.length > 0) await Promise.all(w.preempts.splice(0));
  }

  async function run(w: Worker): Promise<void> {
    w.running = true;
    try {
      while (w.pending !== undefined && !stopped) {
        const type = w.pending;
        w.pending = undefined;
        if (w.state === "syncing") {
          let r: SyncResult = {};
          w.busy = "sync";
          w.abort = new AbortController();
          const syncStartMs = opts.clock.now();
          if (w.seenAtMs !== undefined) {
            opts.metrics?.workerStarted?.((syncStartMs - w.seenAtMs) / 1000);
            w.seenAtMs = undefined;
          }
          try {
            r = await opts.syncer.syncPod(w.pod, type, w.abort.signal);
            if (type !== "kill") opts.metrics?.podSynced?.(type, (opts.clock.now() - syncStartMs) / 1000);
          } catch (e) {
            log.error(`pod sync failed ${kv({ pod: podKey(w.pod), uid: w.uid, error: (e as Error).message })}`);
            r = { retry: true };
          } finally {
            w.busy = undefined;
            w.abort = undefined;
          }
          // A kill that arrived during the sync wins over the sync's own outcome.
          if (w.state !== "syncing") {
            w.pending ??= "kill";
            continue;
          }
          if (r.terminal) {
            log.info(`pod is terminal, stopping it ${kv({ pod: podKey(w.pod), uid: w.uid, phase: w.pod.status?.phase })}`);
            beginTermination(w);
            w.pending = "kill";
          } else if (r.retry) scheduleRetry(w, r.retryAfterMs);
          continue;
        }
        if (w.state === "terminating") {
          w.busy = "terminating";
          try {
            // No await before the termination starts unless there is something to wait for: an idle
            // worker's kill reaches the runtime in the caller's own tick.
            if (w.preempts.length > 0) await awaitPreempts(w);
            await terminate(w, gracePeriod(w));
            if (w.preempts.length > 0) await awaitPreempts(w);
            w.state = "terminated";
          } catch (e) {
            log.error(`pod termination failed, will retry ${kv({ pod: podKey(w.pod), uid: w.uid, error: (e as Error).message })}`);
            await awaitPreempts(w);
            scheduleRetry(w);
            continue;
          } finally {
            w.busy = undefined;
            w.terminatingGrace = undefined;
          }
        }
        if (w.state === "terminated") {
          try {
            await opts.syncer.syncTerminatedPod(w.pod);
            w.state = "finished";
          } catch (e) {
            log.error(`pod cleanup failed, will retry ${kv({ pod: podKey(w.pod), uid: w.uid, error: (e as Error).message })}`);
            scheduleRetry(w);
            continue;
          }
          for (const done of w.onDone.splice(0)) done();
          opts.onFinished?.(w.pod);
        }
        // finished: nothing runs again for this UID.
      }
    } finally {
      w.running = false;
      for (const f of w.idle.splice(0)) f();
    }
  }

  function scheduleRetry(w: Worker, afterMs = retryMs) {
    if (w.retry || stopped) return;
    w.retry = opts.clock.setTimeout(() => {
      w.retry = undefined;
      enqueue(w, "sync");
    }, afterMs);
  }

  function enqueue(w: Worker, type: UpdateType) {
    if (stopped) return;
    // "kill" is sticky; otherwise the newest update type replaces a pending one.
    if (w.pending !== "kill") w.pending = type;
    if (!w.running) void run(w);
  }

  return {
    updatePod({ type, pod, kill }) {
      const uid = pod.metadata.uid;
      let w = workers.get(uid);
      if (!w) {
        w = { uid, pod, state: "syncing", running: false, onDone: [], idle: [], preempts: [], seenAtMs: opts.clock.now() };
        workers.set(uid, w);
      }
      if (w.state === "finished") {
        kill?.onDone?.();
        return;
      }
      // Keep the newest spec while syncing; a terminating pod keeps the spec it is stopped with,
      // except for the status (e.g. eviction's Failed/Evicted) that cleanup reads.
      if (w.state === "syncing") w.pod = pod;
      else if (pod.status) w.pod = { ...w.pod, status: pod.status };
      if (type === "kill") {
        beginTermination(w, kill?.gracePeriodOverrideSeconds);
        if (kill?.onDone) w.onDone.push(kill.onDone);
        preempt(w);
      }
      enqueue(w, type);
    },
    state: (uid) => workers.get(uid)?.state,
    isTerminationRequested: (uid) => {
      const s = workers.get(uid)?.state;
      return s !== undefined && s !== "syncing";
    },
    couldHaveRunningContainers: (uid) => {
      const s = workers.get(uid)?.state;
      return s === "syncing" || s === "terminating";
    },
    syncKnownPods(desired) {
      for (const [uid, w] of workers) {
        if (w.state === "finished" && !desired.has(uid) && !w.running) {
          if (w.retry) opts.clock.clearTimeout(w.retry);
          workers.delete(uid);
        }
      }
    },
    uids: () => [...workers.keys()],
    async whenIdle() {
      for (;;) {
        const busy = [...workers.values()].filter((w) => w.running);
        if (busy.length === 0) return;
        await Promise.all(busy.map((w) => new Promise<void>((r) => w.idle.push(r))));
      }
    },
    stop() {
      stopped = true;
      for (const w of workers.values()) if (w.retry) opts.clock.clearTimeout(w.retry);
    },
  };
}
