// The agent's one call for kernel memory notifications: a hub, the memcg threshold set the
// eviction manager re-arms every ≤ 10 s (onNotifierTargets → apply) — on cgroup v2, which has no
// memcg thresholds, the working-set watch on the same targets (working-set-watch.ts) — and
// optionally a PSI trigger; every event becomes `onTrigger(reason)` (→ evictionManager.trigger)
// plus one log line.
// What the node lacks is logged once at start, and the 10 s synchronize keeps working regardless.
import { join } from "node:path";
import { preciseNow } from "../clock.ts";
import { kv, log as defaultLog } from "../log.ts";
import { detectMemoryNotification } from "./detect.ts";
import { createNotifierHub, type NotifierHub, type NotifierHubOptions } from "./hub.ts";
import { createMemcgNotifierSet, type MemcgTarget } from "./memory-threshold.ts";
import { startPsiNotifier, type PsiNotifier } from "./psi.ts";
import { startWorkingSetWatch, type WorkingSetPollSettings, type WorkingSetTarget, type WorkingSetWatch } from "./working-set-watch.ts";
import { DEFAULT_WORKING_SET_POLL } from "./working-set-schedule.ts";
import type { PriorityOutcome } from "./thread-priority.ts";

/** 15 % of a 2 s window stalled; 2 s multiples are accepted even without CAP_SYS_RESOURCE. */
export const DEFAULT_PSI_TRIGGER = "some 300000 2000000";

export interface MemoryNotifiersLogger {
  info(msg: string): void;
  warn(msg: string): void;
  debug(msg: string): void;
}

export interface MemoryNotifiersOptions {
  /**
   * Eviction manager hook: run a synchronize now. `lagMs`, when known: how long ago the notifier
   * thread woke up for this event (for the eviction trace's crossing time).
   */
  onTrigger(reason: string, lagMs?: number): void;
  /**
   * cgroup v2 working-set watch: whether a repeated post of a target (still over its line) may change
   * what a cycle decides (eviction/notifier-thresholds.ts repeatCrossingUseful). Default: always.
   */
  repeatUseful?(target: MemcgTarget): boolean;
  /** cgroup v1 memory mount (default /sys/fs/cgroup/memory). */
  memoryCgroupRoot?: string;
  /** Pod cgroup root relative to the mount, for allocatableMemory.available (default "kubepods"). */
  podsCgroup?: string;
  /**
   * PSI trigger on memory.pressure: a trigger string, false to disable, or undefined for
   * "DEFAULT_PSI_TRIGGER only when memcg thresholds are unavailable" (cgroup v2 nodes).
   */
  psiTrigger?: string | false;
  /** Pressure file for the PSI trigger (default: detected, unified root first). */
  pressureFile?: string;
  /** cgroup v2 mount (default /sys/fs/cgroup): the working-set watch is used there when memcg thresholds are not. */
  unifiedMountRoot?: string;
  /** Overrides of the working-set watch's poll schedule (DEFAULT_WORKING_SET_POLL). */
  workingSetPoll?: Partial<WorkingSetPollSettings>;
  logger?: MemoryNotifiersLogger;
  /**
   * Priority of the notifier path (thread-priority.ts): the notifier thread's nice value, and the main
   * thread's while it handles an event (until `endBoost()`). Default: neither is changed.
   */
  threadNice?: number;
  boostMainThreadNice?: number;
  /** The notifier threads' SCHED_RR priority, over their nice value (thread-priority.ts). Default: none. */
  threadRealtime?: number;
  /**
   * The notifier thread evicts on a hard memory threshold itself, from this plan (fast-evict.ts): the
   * epoll worker at a memcg threshold (cgroup v1), the working-set thread at a crossing (cgroup v2).
   */
  fastPlan?: NotifierHubOptions["fastPlan"];
}

export interface ArmedThreshold {
  signal: string;
  hard: boolean;
  token: number;
  cgroupPath: string;
  /** How the cgroup is read (fast-evict.ts FastThresholdFiles); default "v1". */
  files?: "v1" | "v2" | "v2-root";
}

/**
 * Working-set targets' tokens start here: far from the hub's epoll tokens (1, 2, …), so a plan naming
 * one is never fired by an epoll wake-up of another source.
 */
export const WORKING_SET_TOKEN_BASE = 1 << 24;

export interface MemoryNotifiers {
  readonly hub: NotifierHub;
  /**
   * The eviction manager's onNotifierTargets. Returns at once: the registrations run off the event
   * loop, and the promise settles when they did (errors are logged, once per distinct failure, never
   * thrown). No-op without memcg support.
   */
  apply(targets: readonly MemcgTarget[]): Promise<void>;
  readonly memcgSupported: boolean;
  /** The cgroup v2 fast path, when this node has no memcg thresholds but a v2 memory controller. */
  readonly workingSet?: WorkingSetWatch;
  readonly psi?: PsiNotifier;
  /**
   * The armed threshold notifiers: which token stands for which threshold, and the cgroup to read —
   * memcg notifiers on cgroup v1 (epoll tokens), working-set targets on cgroup v2 (their tokens; files
   * "v2", or "v2-root" for the node at the root of the mount).
   */
  armedThresholds(): ArmedThreshold[];
  /** The event's work is done: the main thread back to its own priority (see boostMainThreadNice). */
  endBoost(): boolean;
  close(): Promise<void>;
}

export function startMemoryNotifiers(opts: MemoryNotifiersOptions): MemoryNotifiers {
  const logger = opts.logger ?? defaultLog;
  const support = detectMemoryNotification({ memoryCgroupRoot: opts.memoryCgroupRoot, unifiedMountRoot: opts.unifiedMountRoot });
  const hub = createNotifierHub({
    onError: (e) => logger.warn(`kernel notifier: ${e.message}`),
    threadNice: opts.threadNice,
    threadRealtime: opts.threadRealtime,
    boostMainThreadNice: opts.boostMainThreadNice,
    fastPlan: support.memcgRoot ? opts.fastPlan : undefined, // v2: the working-set thread's (below)
    onPriority: (p) => logPriority(logger, p.what === "thread" ? "notifier thread" : "main thread while it handles a kernel event", p),
  });
  if (opts.boostMainThreadNice !== undefined) {
    logger.info(`kernel memory notification: the main thread is raised while it handles a kernel event ${kv({ nice: opts.boostMainThreadNice })}`);
  }

  const memcg = support.memcgRoot
    ? createMemcgNotifierSet({
        hub,
        memoryCgroupRoot: support.memcgRoot,
        podsCgroup: opts.podsCgroup,
        onEvent(ev) {
          opts.onTrigger(ev.description, preciseNow() - ev.wokeAtMs);
          // The line after the cycle the trigger queued (its kill included): a log write costs the
          // pressure path 0.5–2 ms when it comes first.
          setTimeout(
            () =>
              logger.info(
                `eviction manager: ${ev.description} crossed ${kv({ cgroup: ev.cgroupPath, thresholdBytes: ev.thresholdBytes, usageBytes: ev.usageBytes, count: ev.count })}`,
              ),
            0,
          );
        },
        onRemoved(path) {
          logger.warn(`eviction manager: memcg notifier cgroup removed; re-armed at the next refresh ${kv({ cgroup: path })}`);
        },
      })
    : undefined;
  for (const reason of support.missing) logger.info(`kernel memory notification: ${reason}`);
  const workingSet = support.unifiedMemoryRoot ? startWorkingSet(support.unifiedMemoryRoot, opts, logger, hub) : undefined;

  let psi: PsiNotifier | undefined;
  const trigger = opts.psiTrigger ?? (memcg ? false : DEFAULT_PSI_TRIGGER);
  const pressureFile = opts.pressureFile ?? support.pressureFile;
  if (trigger !== false && pressureFile) {
    try {
      psi = startPsiNotifier(hub, {
        path: pressureFile,
        trigger,
        onEvent(ev) {
          const line = ev.trigger.kind === "full" ? ev.pressure?.full : ev.pressure?.some;
          logger.info(`eviction manager: memory pressure stall trigger fired ${kv({ file: ev.path, trigger, source: ev.source, avg10: line?.avg10 })}`);
          opts.onTrigger(`PSI ${trigger}`);
        },
        onUnsupported(e, hint) {
          logger.warn(`kernel memory notification: PSI trigger refused ${kv({ file: pressureFile, trigger, errno: e.code, reason: hint })}`);
        },
        onRemoved(path) {
          logger.warn(`kernel memory notification: pressure file removed ${kv({ file: path })}`);
        },
      });
      logger.info(`kernel memory notification: PSI trigger armed ${kv({ file: pressureFile, trigger, mode: psi.mode })}`);
    } catch (e) {
      logger.warn(`kernel memory notification: PSI trigger not armed ${kv({ file: pressureFile, trigger, error: (e as Error).message })}`);
    }
  }

  let lastErrors = "";
  return {
    hub,
    memcgSupported: memcg !== undefined,
    workingSet: workingSet?.watch,
    psi,
    async apply(targets) {
      if (workingSet) return workingSet.apply(targets);
      if (!memcg) return;
      const errors = await memcg.apply(targets);
      // The same failure every 10 s is one log line, not a flood.
      const joined = errors.join("; ");
      if (joined !== lastErrors && joined !== "") logger.warn(`eviction manager: memcg notifier not armed: ${joined}`);
      lastErrors = joined;
      for (const [, n] of memcg.notifiers) {
        if (n.armedBytes !== undefined)
          logger.debug(`eviction manager: memcg notifier armed ${kv({ description: n.description, cgroup: n.cgroupPath, thresholdBytes: n.armedBytes })}`);
      }
    },
    armedThresholds() {
      if (workingSet) return workingSet.armed();
      const out: ArmedThreshold[] = [];
      for (const n of memcg?.notifiers.values() ?? [])
        if (n.token !== undefined) out.push({ signal: n.signal, hard: n.hard, token: n.token, cgroupPath: n.cgroupPath });
      return out;
    },
    endBoost: () => hub.endBoost(),
    async close() {
      memcg?.stop();
      await workingSet?.watch.stop();
      psi?.stop();
      await hub.close();
    },
  };
}

/** cgroup v2: the eviction manager's targets → working-set lines on kubepods (memory.current) and the node (/proc/meminfo). */
function startWorkingSet(mount: string, opts: MemoryNotifiersOptions, logger: MemoryNotifiersLogger, hub: NotifierHub) {
  const described = new Map<string, MemcgTarget>();
  const failed = new Set<string>();
  /** Stable per target id while bunlet runs (a plan names targets by token). */
  const tokens = new Map<string, number>();
  const tokenOf = (id: string) => {
    let t = tokens.get(id);
    if (t === undefined) tokens.set(id, (t = WORKING_SET_TOKEN_BASE + tokens.size));
    return t;
  };
  const podsDir = join(mount, opts.podsCgroup ?? "kubepods");
  /** Ids the thread could not open since the last apply (no crossing can come from them). */
  const broken = new Set<string>();
  const watch = startWorkingSetWatch({
    fastPlan: opts.fastPlan,
    poll: opts.workingSetPoll,
    // The same priority as the epoll worker's path: the polling thread at threadNice, and a crossing
    // raises the main thread with the hub's boost, which the eviction manager ends after the cycle.
    threadNice: opts.threadNice,
    threadRealtime: opts.threadRealtime,
    boost: hub.boostSpec,
    onPriority: (p) => logPriority(logger, p.what === "thread" ? "working-set thread" : "main thread while it handles a working-set crossing", p),
    onCrossing(c) {
      const t = described.get(c.id);
      if (c.repeat && t && opts.repeatUseful && !opts.repeatUseful(t)) return;
      const description = t?.description ?? c.id;
      const line = `eviction manager: ${description} ${c.repeat ? "still over" : "crossed"} ${kv({ source: t?.cgroup === "pods" ? join(mount, opts.podsCgroup ?? "kubepods") : "/proc/meminfo", workingSetBytes: c.workingSetBytes, lineBytes: c.lineBytes, usageBytes: c.usageBytes, inactiveFileBytes: c.inactiveFileBytes, gapMs: c.gapMs, imminentReads: c.imminent?.reads, imminentMs: c.imminent?.ms, notMetRetries: c.notMet?.retries, notMetMs: c.notMet?.ms, notMetFirst: c.notMet?.first, ...((c.gapMs ?? 0) > 100 ? { timerLateMs: c.timerLateMs, lateRunnableMs: c.lateRunnableMs, readTookMs: c.readTookMs } : {}) })}`;
      opts.onTrigger(description, preciseNow() - c.atMs);
      // After the cycle the trigger queued has started, as the memcg line (a log write first costs the path).
      setTimeout(() => (c.repeat ? logger.debug(line) : logger.info(line)), 0);
    },
    onError(id, message) {
      // A missing kubepods (not created yet, or removed) fails every refresh: one line per distinct failure.
      const key = `${id}\0${message}`;
      broken.add(id);
      if (failed.has(key)) return;
      failed.add(key);
      logger.warn(`eviction manager: working-set notifier not armed ${kv({ target: described.get(id)?.description ?? id, error: message })}`);
    },
  });
  logger.info(`kernel memory notification: cgroup v2 working-set watch ${kv({ mount, ...pollLogFields(opts.workingSetPoll) })}`);
  return {
    watch,
    /**
     * The targets as a plan names them. The node's is read at the mount's root as the summary reads it
     * (root memory.stat, v2-root), not /proc/meminfo as the watch polls it: the decision must agree with
     * the cycle's, and meminfo's usage (kernel memory included) crosses first, so a thread that finds
     * the node's threshold not met on memory.stat steps aside and the cycle decides.
     */
    armed(): ArmedThreshold[] {
      return watch.targets.flatMap((t) => {
        const d = described.get(t.id);
        if (!d || t.token === undefined || broken.has(t.id)) return [];
        return [
          {
            signal: d.signal,
            hard: d.hard,
            token: t.token,
            cgroupPath: t.source === "meminfo" ? mount : t.source.cgroupDir,
            files: t.source === "meminfo" ? ("v2-root" as const) : ("v2" as const),
          },
        ];
      });
    },
    async apply(targets: readonly MemcgTarget[]): Promise<void> {
      const next: WorkingSetTarget[] = [];
      described.clear();
      broken.clear();
      for (const t of targets) {
        if (t.workingSetBytes === undefined) continue;
        const id = t.id ?? `${t.signal}/${t.hard ? "hard" : "soft"}`;
        described.set(id, t);
        next.push({ id, source: t.cgroup === "pods" ? { cgroupDir: podsDir } : "meminfo", lineBytes: t.workingSetBytes, token: tokenOf(id) });
      }
      const before = JSON.stringify(watch.targets);
      watch.set(next);
      if (JSON.stringify(watch.targets) === before) return;
      for (const t of next)
        logger.debug(
          `eviction manager: working-set notifier armed ${kv({ description: described.get(t.id)?.description, source: t.source === "meminfo" ? "/proc/meminfo" : t.source.cgroupDir, workingSetBytes: t.lineBytes })}`,
        );
    },
  };
}

function pollLogFields(p: Partial<WorkingSetPollSettings> | undefined): Record<string, number> {
  const s = { ...DEFAULT_WORKING_SET_POLL, ...p };
  return { minIntervalMs: s.minIntervalMs, maxIntervalMs: s.maxIntervalMs, maxGrowthMiBPerSec: Math.round(s.maxGrowthBytesPerSec / 2 ** 20) };
}

const NEEDS_PRIVILEGE = new Set(["EACCES", "EPERM"]);

/** One log line for a thread's priority outcome: what it runs at, or what the kernel refused and why. */
function logPriority(logger: MemoryNotifiersLogger, thread: string, p: PriorityOutcome): void {
  const rt = p.realtime;
  if (p.applied)
    logger.info(
      `kernel memory notification: scheduling priority set ${kv({ thread, nice: p.effective ?? p.nice, ...(rt?.applied ? { policy: "SCHED_RR", rtPriority: rt.priority } : {}) })}`,
    );
  else
    logger.warn(
      `kernel memory notification: could not set the scheduling priority; the path runs at the current one ${kv({ thread, requested: p.nice, effective: p.effective, error: p.error, hint: NEEDS_PRIVILEGE.has(p.error ?? "") ? "needs CAP_SYS_NICE" : undefined })}`,
    );
  if (rt && !rt.applied)
    logger.warn(
      `kernel memory notification: the thread could not take a real-time policy; it runs SCHED_OTHER ${kv({ thread, requested: `SCHED_RR/${rt.priority}`, error: rt.error, hint: NEEDS_PRIVILEGE.has(rt.error ?? "") ? "needs CAP_SYS_NICE, and on a kernel with CONFIG_RT_GROUP_SCHED real-time runtime in the thread's cpu cgroup" : undefined })}`,
    );
}
