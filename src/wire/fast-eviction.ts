// The main thread's half of the notifier-thread eviction (kernel/fast-evict.ts): it keeps a plan
// ready — the hard memory thresholds with their memcg notifier's epoll token, every candidate pod
// with fds held open on its memory cgroup files and pidfds on its containers' inits — and records
// what the worker did (eviction/fast-adopt.ts). When a plan may exist and what it names is the
// eviction manager's (eviction/fast-plan.ts); here, when it is rebuilt and the fds it holds:
//   - hard memory thresholds only, on cgroup v1 memcg notifiers and on cgroup v2 working-set targets
//     (the working-set thread decides at its crossing), from a calm state only;
//   - any pod change (admission, a status change) cancels the plan at once, and it is rebuilt right
//     after the change (a microtask later; at most every 50 ms through a burst of changes), and again
//     as soon as the direct signaller has learnt a container's init (its pidfd): a pod is signallable
//     from the thread once its pid is known, not at a timer (a pod that starts and ramps at once, in a
//     guest whose timers fire late, would otherwise cross with no plan naming it);
//   - a pod cgroup created or removed since is caught by the worker itself (QoS dir link counts), which
//     then steps aside. A removal by the agent (housekeeping's orphans come with no pod change at all, a
//     terminated pod's after the status change that re-planned) is told by the pod cgroup manager
//     (onPodCgroupRemoved): with a plan armed, the links are compared then and a change re-plans. A
//     creation comes with a pod change, and the new pod is not signallable until its init is learnt
//     (which re-plans). A cgroup made or removed behind the agent's back (an operator, another agent on
//     the same cgroupRoot) is re-planned for after the next eviction cycle (≤ 10 s); until then the
//     thread steps aside and the cycle the same notifier triggers decides. No timer compares the link
//     counts while a plan is armed: that would be 4 wake-ups a second on an idle node.
// Rebuilt after every eviction cycle as well. Fds are kept across plans and closed only once the plan
// that named them is taken back (see fast-evict.ts for the ownership protocol).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { close, O_CLOEXEC, O_RDONLY, open, pidfd_open, pidfd_send_signal } from "../../ffi/libc.ts";
import { type FastEvictionDecision, fastEvictionDecision, notifierThreadEvictionFields, type PlanMirror } from "../eviction/fast-adopt.ts";
import { type NoPlan, planCandidates, planThreshold, planThresholds, qosDirs, runningContainers } from "../eviction/fast-plan.ts";
import { containerCgroupLeaves } from "../cri/container-cgroup.ts";
import type { EvictionConfig, EvictionManager } from "../eviction/index.ts";
import { makeSignalObservations } from "../eviction/observations.ts";
import { podRequest } from "../pod/pod-resources.ts";
import {
  cancelPlan,
  dirLinks,
  newFastPlanBuffer,
  planState,
  publishPlan,
  releaseFired,
  PLAN_ARMED,
  PLAN_BUSY,
  PLAN_FIRED,
  type FastOutcome,
  type FastPlan,
  type FastPlanPod,
} from "../kernel/fast-evict.ts";
import type { ArmedThreshold } from "../kernel/memory-notifiers.ts";
import { kv, log } from "../log.ts";
import type { PodLifecycle } from "../pod/lifecycle-types.ts";
import type { PodLike } from "../pod/pod-like.ts";
import { firstStopSignal } from "../pod/kuberuntime/stop-signal.ts";
import { IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS } from "../eviction/state.ts";

export interface FastEvictionSignaller {
  knownContainers?(podUid: string): { containerId: string; pid: number; pidfd: number; stopSignal: number }[];
  /** Called with a pod's UID when one of its containers becomes signallable (direct-signal.ts). */
  onKnown?(fn: (podUid: string) => void): () => void;
}

export interface FastEvictionPlannerInput {
  config: EvictionConfig;
  manager: () => EvictionManager;
  lifecycle: Pick<PodLifecycle, "activePods" | "getPodStatus">;
  /** The v1 memory controller mount, or the cgroup v2 mount (with cgroupVersion 2). */
  memoryRoot: string;
  /** Which files a pod's memory cgroup has: 1 (default) memory.usage_in_bytes, 2 memory.current; memory.stat on both. */
  cgroupVersion?: 1 | 2;
  podCgroupPath(pod: PodLike): string | undefined;
  /** The armed notifiers (memory-notifiers.ts armedThresholds): memcg notifiers on v1, working-set targets on v2. */
  armedThresholds(): ArmedThreshold[];
  signaller: FastEvictionSignaller;
  /** Subscribes to the agent's pod cgroup removals (PodCgroupManager.onPodRemoved); returns an unsubscribe. */
  onPodCgroupRemoved?(fn: (uid: string) => void): () => void;
  /** Monotonic ms (default performance.now): the rebuild throttle and retry windows. */
  now?: () => number;
  /** The worker's eviction was recorded (for the trace). */
  onAdopted?(d: FastEvictionDecision, outcome: Extract<FastOutcome, { fired: true }>, wokeAtMs: number): void;
}

export interface FastEvictionPlanner {
  readonly buffer: SharedArrayBuffer;
  /** QoS cgroup directories whose link counts the worker checks. */
  readonly dirs: string[];
  /** The hub's onOutcome. */
  onOutcome(outcome: FastOutcome, wokeAtMs: number): void;
  /** EvictionDeps.mayEvict. */
  mayEvict(): boolean;
  /** A pod changed: cancel the plan now, rebuild it shortly. */
  invalidate(): void;
  /** Rebuild now (after a cycle). */
  refresh(): void;
  /** Why there is no plan right now, or undefined when one is armed (debugging, tests). */
  readonly why: string | undefined;
  stop(): void;
}

/** Through a burst of pod changes the plan is rebuilt at most this often (the first change: at once). */
const REFRESH_AFTER_CHANGE_MS = 50;
const RETRY_BUSY_MS = 2;
/** While some candidate is not signallable yet (its containers being learnt), re-plan this often, for this long after a change. */
const INCOMPLETE_RETRY_MS = 100;
const INCOMPLETE_RETRY_FOR_MS = 10_000;

export function createFastEvictionPlanner(input: FastEvictionPlannerInput): FastEvictionPlanner {
  const buffer = newFastPlanBuffer();
  const now = input.now ?? (() => performance.now());
  const dirs = qosDirs(input.memoryRoot, input.podCgroupPath);
  /** Kept cgroup files by directory, pidfds by container. */
  const files = new Map<string, { usageFd: number; statFd: number }>();
  const pidfds = new Map<string, { pid: number; pidfd: number }>();
  let retired: number[] = [];
  let mirror: PlanMirror | undefined;
  let why: string | undefined = "not planned yet";
  let timer: ReturnType<typeof setTimeout> | undefined;
  let changedAtMs = -Infinity;
  const startedAtMs = now();
  let refreshedAtMs = -Infinity;
  let refreshQueued = false;
  let stopped = false;
  /** The armed plan's link counts (undefined with no plan armed), compared with the directories' at a pod cgroup removal. */
  let armedLinks: number[] | undefined;

  let timerDueMs = 0;
  /** A rebuild in `ms` (an earlier one already scheduled stands). */
  const schedule = (ms: number) => {
    if (stopped) return;
    const due = now() + ms;
    if (timer) {
      if (timerDueMs <= due) return;
      clearTimeout(timer);
    }
    timerDueMs = due;
    timer = setTimeout(() => {
      timer = undefined;
      refresh();
    }, ms);
    timer.unref?.();
  };

  /**
   * A rebuild after a change: a microtask later (after the admission or status set that called it has
   * finished), or, within REFRESH_AFTER_CHANGE_MS of the last rebuild, at that distance from it.
   */
  const refreshSoon = () => {
    if (stopped || refreshQueued) return;
    const wait = refreshedAtMs + REFRESH_AFTER_CHANGE_MS - now();
    if (wait > 0) return schedule(wait);
    refreshQueued = true;
    queueMicrotask(() => {
      refreshQueued = false;
      refresh();
    });
  };

  /** A pod cgroup was removed: re-plan if the armed plan's link counts no longer hold (without a plan, the next build reads them). */
  const checkLinks = (uid: string) => {
    if (!armedLinks || stopped) return;
    const links = dirLinks(dirs);
    if (!links.some((n, k) => n !== armedLinks![k])) return;
    log.debug(
      `eviction manager: pod cgroups changed under the notifier-thread plan; re-planning ${kv({ uid, was: armedLinks.join(","), now: links.join(",") })}`,
    );
    refreshSoon();
  };
  const unsubscribe = [
    input.signaller.onKnown?.(() => {
      changedAtMs = now();
      refreshSoon();
    }),
    input.onPodCgroupRemoved?.(checkLinks),
  ];

  const usageFile = input.cgroupVersion === 2 ? "memory.current" : "memory.usage_in_bytes";
  /** A cgroup's kept usage and memory.stat fds; "stat-only" (the v2 root, no memory.current): both are memory.stat's. */
  const cgroupFiles = (dir: string, statOnly = false): { usageFd: number; statFd: number } => {
    let f = files.get(dir);
    if (f) return f;
    if (statOnly) {
      const fd = open(join(dir, "memory.stat"), O_RDONLY | O_CLOEXEC);
      f = { usageFd: fd, statFd: fd };
      files.set(dir, f);
      return f;
    }
    const usageFd = open(join(dir, usageFile), O_RDONLY | O_CLOEXEC);
    let statFd: number;
    try {
      statFd = open(join(dir, "memory.stat"), O_RDONLY | O_CLOEXEC);
    } catch (e) {
      close(usageFd);
      throw e;
    }
    f = { usageFd, statFd };
    files.set(dir, f);
    return f;
  };

  /** A container's kept memory files, for the worker's read of its working set; undefined when its cgroup is not found. */
  const containerFiles = (podDir: string, id: string): { usageFd: number; statFd: number } | undefined => {
    for (const leaf of containerCgroupLeaves(id)) {
      const dir = join(podDir, leaf);
      if (!files.has(dir) && !existsSync(dir)) continue;
      try {
        return cgroupFiles(dir);
      } catch {
        return undefined;
      }
    }
    return undefined;
  };

  /** Our own pidfd on a container's init, valid while the signaller's pidfd on it is (the PID not reused). */
  const pidfdFor = (k: { containerId: string; pid: number; pidfd: number }): number | undefined => {
    let mine = pidfds.get(k.containerId);
    if (mine && mine.pid !== k.pid) {
      retired.push(mine.pidfd); // the armed plan may still name it: closed once it is taken back
      pidfds.delete(k.containerId);
      mine = undefined;
    }
    if (!mine) {
      let fd: number;
      try {
        fd = pidfd_open(k.pid);
      } catch {
        return undefined;
      }
      try {
        pidfd_send_signal(k.pidfd, 0); // the signaller's process is alive: `pid` still names it
      } catch {
        closeQuietly(fd);
        return undefined;
      }
      mine = { pid: k.pid, pidfd: fd };
      pidfds.set(k.containerId, mine);
    }
    return mine.pidfd;
  };

  /** The plan for now, or why there is none. `incomplete`: some candidate cannot be signalled yet. */
  function build(): { plan: FastPlan; mirror: Omit<PlanMirror, "generation">; incomplete: boolean } | NoPlan {
    const st = input.manager().state();
    const hard = planThresholds(st);
    if (!Array.isArray(hard)) return hard;
    const armed = input.armedThresholds();
    const observations = makeSignalObservations(st.lastSummary!).observations;
    const thresholds: FastPlan["thresholds"] = [];
    for (const t of hard) {
      const spec = planThreshold(t, armed, observations, input.cgroupVersion ?? 1);
      if ("reason" in spec) return spec;
      const { cgroupPath, ...rest } = spec;
      thresholds.push({ ...rest, ...cgroupFiles(cgroupPath, spec.files === "v2-root") });
    }
    const links = dirLinks(dirs);
    if (dirs.length === 0 || links.some((n) => n < 0)) return { reason: "QoS cgroups not found", transient: true };
    const candidates = planCandidates(input.lifecycle.activePods(), input.config.evictStaticPods);
    const pods: FastPlanPod[] = [];
    const containerNames: (string[] | undefined)[] = [];
    let incomplete = false;
    for (const pod of candidates) {
      const uid = pod.metadata.uid ?? "";
      const rel = input.podCgroupPath(pod);
      const podDir = rel === undefined ? undefined : join(input.memoryRoot, rel);
      let f = { usageFd: -1, statFd: -1 };
      if (podDir !== undefined) {
        try {
          f = cgroupFiles(podDir);
        } catch {
          // No memory cgroup yet: the summary reports no memory for it (0), and its creation changes the links.
        }
      }
      const running = runningContainers(input.lifecycle.getPodStatus(uid));
      const known = new Map((input.signaller.knownContainers?.(uid) ?? []).map((k) => [k.containerId, k]));
      let containers: FastPlanPod["containers"] = [];
      for (const { id } of running) {
        const k = known.get(id);
        const pidfd = k && pidfdFor(k);
        if (!k || pidfd === undefined) {
          containers = undefined;
          break;
        }
        const memory = podDir === undefined ? undefined : containerFiles(podDir, id);
        containers.push({ pidfd, signal: firstStopSignal(IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, k.stopSignal), pid: k.pid, ...memory });
      }
      if (!containers || containers.length === 0) {
        containers = undefined;
        incomplete = true;
      }
      pods.push({ ...f, request: podRequest(pod, "memory"), priority: pod.spec.priority ?? 0, containers });
      containerNames.push(containers && running.map((c) => c.name));
    }
    const mirror = { thresholds: hard, pods: candidates, containerNames };
    return { plan: { thresholds, pods, dirLinks: links, cgroupVersion: input.cgroupVersion ?? 1 }, mirror, incomplete };
  }

  /** Closes kept fds the new plan does not name (only ever with the plan taken back). */
  function closeUnused(plan: FastPlan | undefined): void {
    const fds = new Set<number>();
    for (const t of plan?.thresholds ?? []) fds.add(t.usageFd).add(t.statFd);
    for (const p of plan?.pods ?? []) {
      fds.add(p.usageFd).add(p.statFd);
      for (const c of p.containers ?? []) {
        fds.add(c.pidfd);
        if (c.usageFd !== undefined) fds.add(c.usageFd);
      }
    }
    for (const [dir, f] of files) {
      if (fds.has(f.usageFd)) continue;
      files.delete(dir);
      closeQuietly(f.usageFd);
      if (f.statFd !== f.usageFd) closeQuietly(f.statFd);
    }
    for (const [id, p] of pidfds) {
      if (fds.has(p.pidfd)) continue;
      pidfds.delete(id);
      closeQuietly(p.pidfd);
    }
    for (const fd of retired) closeQuietly(fd);
    retired = [];
  }

  function refresh(): void {
    if (stopped) return;
    if (timer) {
      clearTimeout(timer); // this rebuild is the one it was for
      timer = undefined;
    }
    refreshedAtMs = now();
    const s = planState(buffer);
    if (s === PLAN_FIRED) return; // the worker evicted: recorded by onOutcome, which re-plans later
    let built: ReturnType<typeof build>;
    try {
      built = build();
    } catch (e) {
      built = { reason: `cannot open what the plan needs: ${(e as Error).message}`, transient: true };
    }
    const was = cancelPlan(buffer);
    if (was === PLAN_BUSY) {
      schedule(RETRY_BUSY_MS);
      return;
    }
    if (was === PLAN_FIRED) return;
    mirror = undefined;
    armedLinks = undefined;
    if ("reason" in built) {
      if (built.reason !== why) log.debug(`eviction manager: no notifier-thread eviction plan ${kv({ reason: built.reason })}`);
      why = built.reason;
      closeUnused(undefined);
      if (built.transient && now() - Math.max(changedAtMs, startedAtMs) < INCOMPLETE_RETRY_FOR_MS) schedule(INCOMPLETE_RETRY_MS);
      return;
    }
    closeUnused(built.plan);
    const generation = publishPlan(buffer, built.plan);
    if (generation === undefined) {
      schedule(RETRY_BUSY_MS);
      return;
    }
    mirror = { generation, ...built.mirror };
    armedLinks = built.plan.dirLinks;
    if (why !== undefined)
      log.debug(
        `eviction manager: notifier-thread eviction plan armed ${kv({ generation, pods: built.plan.pods.length, signallable: built.plan.pods.filter((p) => p.containers).length, thresholds: built.plan.thresholds.length })}`,
      );
    why = undefined;
    if (built.incomplete && now() - changedAtMs < INCOMPLETE_RETRY_FOR_MS) schedule(INCOMPLETE_RETRY_MS);
  }

  return {
    buffer,
    dirs,
    get why() {
      return why;
    },
    refresh,
    invalidate() {
      changedAtMs = now();
      if (cancelPlan(buffer) !== PLAN_FIRED) why = "a pod changed; re-planning";
      refreshSoon();
    },
    mayEvict() {
      const was = cancelPlan(buffer);
      if (was === PLAN_BUSY || was === PLAN_FIRED) return false;
      // Why the thread did not decide this one (which gap a slow eviction fell into).
      log.info(`eviction manager: the main thread's cycle evicts, not the notifier thread ${kv({ plan: was === PLAN_ARMED ? "armed" : (why ?? "none") })}`);
      why = "the main thread's cycle is evicting";
      armedLinks = undefined;
      return true;
    },
    onOutcome(outcome, wokeAtMs) {
      if (!outcome.fired) {
        log.info(`eviction manager: the notifier thread left the decision to the cycle ${kv({ reason: outcome.reason })}`);
        return;
      }
      const m = mirror;
      try {
        if (!m || m.generation !== outcome.generation) {
          // Cannot happen (a plan is only replaced when taken back), but a signal was sent: say so.
          log.error(`eviction manager: the notifier thread evicted from an unknown plan ${kv({ generation: outcome.generation })}`);
          return;
        }
        const decision = fastEvictionDecision(m, outcome);
        log.info(`eviction manager: the notifier thread evicted ${kv(notifierThreadEvictionFields(decision, outcome, wokeAtMs))}`);
        input.manager().adopt(decision);
        input.onAdopted?.(decision, outcome, wokeAtMs);
      } finally {
        releaseFired(buffer);
        mirror = undefined;
        why = "an eviction is in flight";
        armedLinks = undefined;
      }
    },
    stop() {
      stopped = true;
      for (const u of unsubscribe) u?.();
      if (timer) clearTimeout(timer);
      armedLinks = undefined;
      if (cancelPlan(buffer) === PLAN_BUSY) return; // leave the fds to the process's exit rather than race the worker
      closeUnused(undefined);
    },
  };
}

function closeQuietly(fd: number): void {
  try {
    close(fd);
  } catch {}
}
