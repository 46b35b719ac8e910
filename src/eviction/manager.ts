// The eviction manager: synchronize every 10 s, at once when a kernel notifier fires (debounced),
// and right after an eviction's cleanup (≤ 30 s), as upstream's loop (docs/eviction-contract.md#the-loop).
// Cycles never overlap; a trigger during a cycle schedules exactly one more. Kills run in the
// background (see synchronize.ts), so the loop itself never waits for a pod's grace period.
// A kernel-triggered cycle asks for a memory-only summary (fresh memory, the rest reused): the
// notifier only ever reports memory, and its cycle is the latency-critical one. The periodic,
// post-cleanup and explicit cycles read everything.
import type { TimerHandle } from "../clock.ts";
import { kv, log as defaultLog } from "../log.ts";
import { podKey, type PodLike } from "../pod/pod-like.ts";
import { admitPod, type AdmitResult } from "./admission.ts";
import { notifierTargets, type NotifierTarget } from "./notifier-thresholds.ts";
import { newEvictionState, pendingKills, POD_CLEANUP_TIMEOUT_MS, synchronize, type CycleReport, type EvictionState } from "./synchronize.ts";
import type { NodeConditionType } from "./signals.ts";
import type { EvictionDeps } from "./types.ts";
import { adoptFastEviction, type FastEvictionDecision } from "./fast-adopt.ts";

export const EVICTION_MONITORING_PERIOD_MS = 10_000;
export const POD_CLEANUP_POLL_MS = 1_000;

export interface EvictionManager {
  start(): void;
  stop(): void;
  /** Kernel notifier hook: an immediate synchronize on a memory-only summary; bursts coalesce into one cycle. */
  trigger(reason?: string): void;
  /**
   * Records a hard memory eviction the kernel notifier thread decided and signalled itself
   * (fast-adopt.ts): status, events, conditions, the in-flight kill; then waits for its cleanup.
   */
  adopt(decision: FastEvictionDecision): CycleReport;
  /** Runs one cycle now (serialised with the loop). */
  synchronize(): Promise<CycleReport>;
  /**
   * A pod changed (its status, or its worker finished): while the manager waits for an evicted pod's
   * cleanup, it checks at once instead of at the next 1 s poll, and syncs as soon as none is pending.
   */
  podsChanged(): void;
  admit(pod: PodLike): AdmitResult;
  nodeConditions(): NodeConditionType[];
  isUnderMemoryPressure(): boolean;
  isUnderDiskPressure(): boolean;
  isUnderPIDPressure(): boolean;
  /** Where to arm memcg notifiers, from the latest summary (docs/eviction-contract.md#memory-threshold-notifier). */
  thresholdsForNotifier(): { targets: NotifierTarget[]; errors: string[] };
  /** Live state for `bunlet eviction explain` and /debug endpoints. */
  state(): Readonly<EvictionState>;
  lastReport(): CycleReport | undefined;
  /** Resolves when no cycle is running or queued (tests). */
  idle(): Promise<void>;
  /** A cycle is running or queued right now. */
  readonly busy: boolean;
}

export function createEvictionManager(deps: EvictionDeps): EvictionManager {
  const logger = deps.logger ?? defaultLog;
  const state = newEvictionState(deps.config.thresholds);
  let running: Promise<CycleReport> | undefined;
  let rerun = false;
  let microtaskQueued = false;
  /** A kernel trigger is waiting for its cycle (the next one, or the rerun of the running one). */
  let memoryTriggered = false;
  let timer: TimerHandle | undefined;
  let started = false;

  const clearTimer = () => {
    if (timer !== undefined) deps.clock.clearTimeout(timer);
    timer = undefined;
  };

  const schedule = (ms: number, fn: () => void) => {
    clearTimer();
    if (!started) return;
    timer = deps.clock.setTimeout(() => {
      timer = undefined;
      fn();
    }, ms);
  };

  // After an eviction: poll every second until the evicted pods are cleaned up (or 30 s), then
  // sync immediately, like upstream's waitForPodsCleanup.
  // The poll stays (a pod that never reports, the 30 s timeout); podsChanged() checks between polls.
  let cleanupSince: number | undefined;
  const cleanupDone = (since: number) => pendingKills(deps, state, deps.activePods()).length === 0 || deps.clock.now() - since >= POD_CLEANUP_TIMEOUT_MS;
  const waitForCleanup = (since: number) => {
    cleanupSince = since;
    schedule(POD_CLEANUP_POLL_MS, () => {
      if (cleanupDone(since)) void runCycle();
      else waitForCleanup(since);
    });
  };

  const runCycle = (): Promise<CycleReport> => {
    if (running) {
      rerun = true;
      return running;
    }
    clearTimer();
    const waitingSince = cleanupSince;
    cleanupSince = undefined;
    const memoryOnly = memoryTriggered;
    memoryTriggered = false;
    const p = (async () => {
      let report: CycleReport;
      try {
        report = await synchronize(deps, state, { memoryOnly });
      } catch (e) {
        logger.error(`eviction manager: synchronize failed ${kv({ error: (e as Error).message })}`);
        report = state.lastReport ?? ({ error: (e as Error).message } as CycleReport);
      }
      try {
        deps.onCycle?.(report);
      } catch (e) {
        logger.warn(`eviction manager: cycle hook failed ${kv({ error: (e as Error).message })}`);
      }
      return report;
    })();
    running = p;
    void p.then((report) => {
      running = undefined;
      if (rerun) {
        rerun = false;
        void runCycle();
        return;
      }
      const now = deps.clock.now();
      // A cycle in between (another trigger) while an evicted pod is still being cleaned up keeps the
      // wait — from when it began, within its 30 s —, or the next cycle (and the re-armed notifier-thread
      // plan, which waits for no kill in flight) would come only with the 10 s period.
      const since = waitingSince ?? now;
      if (report.evicted?.length > 0 && !report.error) waitForCleanup(now);
      else if (pendingKills(deps, state, deps.activePods()).length > 0 && now - since < POD_CLEANUP_TIMEOUT_MS) waitForCleanup(since);
      else schedule(EVICTION_MONITORING_PERIOD_MS, () => void runCycle());
    });
    return p;
  };

  const conditions = () => state.nodeConditions;

  return {
    start() {
      if (started) return;
      started = true;
      logger.info(`eviction manager started ${kv({ thresholds: state.thresholds.length, evictStaticPods: deps.config.evictStaticPods })}`);
      void runCycle();
    },
    stop() {
      started = false;
      clearTimer();
    },
    trigger(reason) {
      if (reason) logger.debug(`eviction manager: synchronize requested ${kv({ reason })}`);
      memoryTriggered = true;
      if (running) {
        rerun = true;
        return;
      }
      if (microtaskQueued) return;
      microtaskQueued = true;
      queueMicrotask(() => {
        microtaskQueued = false;
        void runCycle();
      });
    },
    synchronize: () => runCycle(),
    podsChanged() {
      if (cleanupSince === undefined || running || !started) return;
      if (cleanupDone(cleanupSince)) void runCycle();
    },
    adopt(decision) {
      const report = adoptFastEviction(deps, state, decision);
      try {
        deps.onCycle?.(report);
      } catch (e) {
        logger.warn(`eviction manager: cycle hook failed ${kv({ error: (e as Error).message })}`);
      }
      // As after a cycle's eviction: the next cycle once the pod is cleaned up (a running or queued
      // cycle still runs, sees the kill in flight and waits for it too).
      if (!running) waitForCleanup(deps.clock.now());
      return report;
    },
    admit(pod) {
      const r = admitPod(pod, conditions());
      if (!r.admit) logger.info(`failed to admit pod to node ${kv({ pod: podKey(pod), nodeCondition: conditions().join(",") })}`);
      return r;
    },
    nodeConditions: () => [...conditions()],
    isUnderMemoryPressure: () => conditions().includes("MemoryPressure"),
    isUnderDiskPressure: () => conditions().includes("DiskPressure"),
    isUnderPIDPressure: () => conditions().includes("PIDPressure"),
    thresholdsForNotifier() {
      if (!state.lastSummary) return { targets: [], errors: ["no stats summary observed yet"] };
      return notifierTargets(state.thresholds, state.lastSummary);
    },
    state: () => state,
    lastReport: () => state.lastReport,
    get busy() {
      return running !== undefined || microtaskQueued || rerun;
    },
    async idle() {
      // Bounded: each pass waits for the running cycle; a rerun is at most one more.
      for (let i = 0; i < 1000; i++) {
        if (running) await running.then(() => undefined);
        else if (microtaskQueued) await Promise.resolve();
        else return;
        await Promise.resolve();
      }
    },
  };
}
