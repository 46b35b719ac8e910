// Eviction side of the agent: live node stats (kernel layer) + pod stats (cgroups, CRI) as the
// summary, the eviction manager killing through the pod lifecycle, node-level reclaim through the
// CRI, admission of new pods, kernel memory notifiers as immediate triggers, metrics and the trace.
//
// Fast path: notifier event (main thread, ~0.3 ms after the kernel) → manager.trigger → a cycle on
// the next microtask → summary({ memoryOnly }) reads node, allocatable and pod memory from the
// cgroups right then, synchronously (never a cached sample, never the in-flight full build; disk, cpu
// and CRI figures come from the last full summary, ≤ 10 s old) → the victim's
// killPod → pod worker → CRI StopContainer. After the kill the manager waits for the pod's cleanup
// (polled every second, and the notifier fires again when usage falls back) and re-observes before
// evicting anyone else.
//
// Faster still, by default (v1 memcg notifiers, the v2 working-set thread): for a hard memory threshold
// the notifier thread decides and signals itself from a plan kept ready here (wire/fast-eviction.ts,
// kernel/fast-evict.ts),
// and the main thread records that eviction as the cycle would have (eviction/fast-adopt.ts). Off
// switch: BUNLET_NOTIFIER_THREAD_EVICTION=0 (notifierThreadEvictionFromEnv).
import { mkdirSync } from "node:fs";
import { DATA_DIR_MODE } from "../pod/pod-dir.ts";
import { z } from "zod";
import { preciseClock, type Clock } from "../clock.ts";
import type { FieldSources } from "../config/validate.ts";
import type { KubeletConfiguration } from "../config/kubelet-config.ts";
import type { CriClient } from "../cri/client.ts";
import {
  createEvictionManager,
  evictionConfigFromKubelet,
  evictionMetrics,
  nodeConditionMetrics,
  explainLive,
  type EvictionConfig,
  type EvictionManager,
  type ExplainReport,
} from "../eviction/index.ts";
import type { CycleReport } from "../eviction/synchronize.ts";
import { rehearseEviction } from "../eviction/rehearsal.ts";
import { repeatCrossingUseful } from "../eviction/notifier-thresholds.ts";
import { admissionView } from "../eviction/admission.ts";
import { runningContainers } from "../eviction/fast-plan.ts";
import { notifierMetrics } from "../eviction/metrics.ts";
import { createEvictionRecordStore, evictionRecordPath, type EvictionRecordStore } from "../eviction/record-file.ts";
import { evictedStaticPodAdmitHandler, persistEvictions } from "../eviction/record-keeping.ts";
import { detectMemoryNotification, NOTIFIER_THREAD_NICE, NOTIFIER_THREAD_RT_PRIORITY, startMemoryNotifiers, type MemoryNotifiers } from "../kernel/index.ts";
import { kv, log } from "../log.ts";
import { sandboxImages } from "../pod/images/index.ts";
import { deleteUnusedContainers, deleteUnusedImages } from "../pod/kuberuntime/index.ts";
import type { PodLifecycle } from "../pod/lifecycle-types.ts";
import type { PodLike } from "../pod/pod-like.ts";
import type { Registry } from "../server/metrics.ts";
import { createNodeStatsProvider } from "../stats/node.ts";
import { createSummaryProvider, type SummaryProvider } from "../stats/summary-provider.ts";
import type { VolumeStats } from "../stats/summary.ts";
import type { AgentComponent } from "../agent-component.ts";
import type { EvictionDeps } from "../eviction/types.ts";
import { nodeRef, type EventRecorder } from "../events/types.ts";
import { createEvictionTracer, type EvictionTracer } from "./trace.ts";
import { createWarmPlan, memoryThresholdsNear } from "./summary-warmer.ts";
import { createFastEvictionPlanner, type FastEvictionPlanner, type FastEvictionSignaller } from "./fast-eviction.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_MEMORY_CGROUP_ROOT } from "../stats/node.ts";

export interface EvictionWiringInput {
  config: KubeletConfiguration;
  sources?: FieldSources;
  rootDir: string;
  evictionTrace?: string;
  nodeName: string;
  lifecycle: PodLifecycle;
  cri: CriClient;
  podsCgroup?: string;
  /** The kubepods memory limit wanted (may exceed nothing the kernel holds after a refused write). */
  podsMemoryLimitBytes?: () => number | undefined;
  /** Image reclaim's view of the runtime: every container, another agent's too (default: cri). */
  imageCri?: CriClient;
  /** Images reclaim never removes beyond the sandbox image (the image import directory's). */
  keepImages?: () => string[];
  podCgroupPath(pod: PodLike): string | undefined;
  metrics: Registry;
  clock?: Clock;
  /** False until the QoS cgroups exist (they are created once the runtime answers): until then a
   * missing kubepods cgroup is expected, not worth a warning. */
  podsCgroupReady?: () => boolean;
  /** How often the summary is refreshed in the background while pods run (default 2 s). */
  warmIntervalMs?: number;
  /** Evicted (on the pod) and EvictionThresholdMet (on the node) events. */
  events?: EventRecorder;
  /**
   * The notifier thread at NOTIFIER_THREAD_NICE and SCHED_RR (NOTIFIER_THREAD_RT_PRIORITY), and the main
   * thread raised to that nice value while it handles a kernel event (kernel/thread-priority.ts). Default true; false leaves every thread's priority alone.
   */
  notifierPriority?: boolean;
  /**
   * The containers' pidfds (kuberuntime's direct signaller): with them the kernel notifier thread
   * evicts on a hard memory threshold itself (wire/fast-eviction.ts). Without, the cycle always decides.
   */
  directSignal?: FastEvictionSignaller;
  /** The pod cgroup manager's removals (PodCgroupManager.onPodRemoved): the notifier thread's plan re-plans on them. */
  onPodCgroupRemoved?(fn: (uid: string) => void): () => void;
  /** The pods' persistent and CSI volumes in the summary (stats/volume-stat-calculator.ts). */
  volumeStats?: (pod: PodLike, uid: string) => Promise<VolumeStats[]>;
  /**
   * Let the notifier thread evict on its plan (default: on, unless the BUNLET_NOTIFIER_THREAD_EVICTION
   * environment variable turns it off; see notifierThreadEvictionFromEnv).
   */
  notifierThreadEviction?: boolean;
}

export interface EvictionWiring {
  manager: EvictionManager;
  /** <rootDir>/eviction/state.json: counts and evicted static pods across restarts. */
  records: EvictionRecordStore;
  evictionConfig: EvictionConfig;
  summary: SummaryProvider;
  tracer: EvictionTracer;
  notifiers(): MemoryNotifiers | undefined;
  explain(): ExplainReport | undefined;
  component: AgentComponent;
}

export function createEvictionWiring(input: EvictionWiringInput): EvictionWiring {
  const { config, lifecycle, cri } = input;
  const clock = input.clock ?? preciseClock();
  // The eviction settings, each threshold's source (file or flag) named in its errors.
  const ctx: EvictionWiringContext = { input, clock, evictionConfig: evictionConfigOf(input) };
  const { evictionConfig } = ctx;
  // nodefs is statfs of the root dir: it must exist (the kubelet creates it too).
  ensureRootDir(input.rootDir);
  // The summary: node stats (kernel layer) and pod stats (cgroups, CRI).
  const summary = createEvictionSummary(ctx);
  // The trace and the metrics by signal; counts and evicted static pods survive restarts (eviction/record-file.ts).
  const signals = [...new Set(evictionConfig.thresholds.map((t) => t.signal))];
  const tracer = createEvictionTracer({ file: input.evictionTrace, metrics: input.metrics, now: () => clock.now(), signals });
  const records = createEvictionRecordStore(evictionRecordPath(input.rootDir));
  const onMetrics = evictionMetrics(input.metrics, signals, records.initialCounts());
  // The notifier thread's own hard memory evictions, when they are on and possible here.
  const planner = createNotifierThreadPlanner(ctx, tracer, () => manager);
  // The manager, killing through the pod lifecycle and reclaiming through the CRI.
  const manager = createManager(ctx, { summary, tracer, planner, onMetrics, persist: persistEvictions(records, lifecycle, clock) });
  nodeConditionMetrics(input.metrics, () => manager.nodeConditions());
  // Admission, and the pod changes that start the next cycle or void the notifier thread's plan.
  wireLifecycle(ctx, manager, records, planner);
  const warmer = createSummaryWarmer(ctx, summary);

  const component: AgentComponent = {
    name: "eviction manager",
    async start() {
      ctx.imageFsDir = await runtimeImageFsDir(cri);
      // Compile the decision path before the first kernel event needs it (see eviction/rehearsal.ts).
      await rehearseEviction(evictionConfig).catch((e: unknown) => log.debug(`eviction rehearsal failed ${kv({ error: (e as Error).message })}`));
      warmer.start();
      if (config.kernelMemcgNotification) ctx.notifiers = startNotifiers(ctx, manager, tracer, planner);
      else log.info("kernel memory notification off (kernelMemcgNotification: false): memory is observed every 10s");
      manager.start();
    },
    async stop() {
      warmer.stop();
      manager.stop();
      planner?.stop();
      await ctx.notifiers?.close();
      await tracer.close();
    },
  };

  return {
    manager,
    records,
    evictionConfig,
    summary,
    tracer,
    notifiers: () => ctx.notifiers,
    explain: () => explainLive(manager, lifecycle.activePods(), evictionConfig, clock.now()),
    component,
  };
}

/** What the eviction side's parts share: the input, the clock, the settings, and what is learnt at start. */
interface EvictionWiringContext {
  input: EvictionWiringInput;
  clock: Clock;
  evictionConfig: EvictionConfig;
  /**
   * Where the runtime keeps images (ImageFsInfo's mountpoint, as upstream's CRI stats provider asks):
   * imagefs. Learnt when the manager starts, i.e. once the runtime answers.
   */
  imageFsDir?: string;
  /** The kernel memory notifiers, once started (kernelMemcgNotification). */
  notifiers?: MemoryNotifiers;
}

function evictionConfigOf({ config, sources = {} }: EvictionWiringInput): EvictionConfig {
  return evictionConfigFromKubelet(config, {
    hardSource: sources.evictionHard,
    softSource: sources.evictionSoft,
    gracePeriodSource: sources.evictionSoftGracePeriod,
    minReclaimSource: sources.evictionMinimumReclaim,
    transitionSource: sources.evictionPressureTransitionPeriod,
  });
}

function ensureRootDir(rootDir: string): void {
  try {
    mkdirSync(rootDir, { recursive: true, mode: DATA_DIR_MODE });
  } catch (e) {
    log.warn(`cannot create the root dir ${kv({ rootDir, error: (e as Error).message })}`);
  }
}

/** The summary provider over the kernel layer's node stats; each stats error said once, none for a kubepods cgroup not made yet. */
function createEvictionSummary(ctx: EvictionWiringContext): SummaryProvider {
  const { input, clock } = ctx;
  const statErrors = new Set<string>();
  const expectedMissing = (msg: string) => input.podsCgroup !== undefined && input.podsCgroupReady?.() === false && msg.includes(input.podsCgroup);
  const nodeStats = createNodeStatsProvider({
    rootDir: input.rootDir,
    imageFsDir: () => ctx.imageFsDir,
    podsCgroup: input.podsCgroup,
    podsMemoryLimitBytes: input.podsMemoryLimitBytes,
    nodeName: input.nodeName,
    clock,
    onError(e) {
      if (statErrors.has(e.message) || expectedMissing(e.message)) return;
      statErrors.add(e.message);
      log.warn(e.message);
    },
  });
  return createSummaryProvider({
    nodeName: input.nodeName,
    nodeStats: (req) => nodeStats.nodeStats(req),
    activePods: () => input.lifecycle.activePods(),
    podCgroupPath: input.podCgroupPath,
    cri: input.cri,
    runningContainers: (uid) => runningContainers(input.lifecycle.getPodStatus(uid)),
    podLogsDir: input.config.podLogsDir,
    rootDir: input.rootDir,
    podsCgroup: input.podsCgroup,
    clock,
    volumeStats: input.volumeStats,
    onError: (m) => {
      if (!expectedMissing(m)) log.warn(m);
    },
  });
}

/**
 * The notifier thread's own hard memory evictions: the epoll worker's at a memcg notifier (cgroup v1), the
 * working-set thread's at a crossing (cgroup v2, as startMemoryNotifiers picks it). Undefined when turned off,
 * without kernel notification, without the containers' pidfds or kubepods, or without a memory cgroup mount.
 */
function createNotifierThreadPlanner(ctx: EvictionWiringContext, tracer: EvictionTracer, manager: () => EvictionManager): FastEvictionPlanner | undefined {
  const { input } = ctx;
  const fastRoot = fastEvictionRoot();
  const on = (input.notifierThreadEviction ?? notifierThreadEvictionFromEnv(process.env)) && input.config.kernelMemcgNotification;
  if (!(on && input.directSignal?.knownContainers && input.podsCgroup !== undefined && fastRoot)) return undefined;
  return createFastEvictionPlanner({
    config: ctx.evictionConfig,
    manager,
    lifecycle: input.lifecycle,
    ...fastRoot,
    podCgroupPath: input.podCgroupPath,
    armedThresholds: () => ctx.notifiers?.armedThresholds() ?? [],
    signaller: input.directSignal,
    onPodCgroupRemoved: input.onPodCgroupRemoved,
    onAdopted: (d, o, wokeAtMs) =>
      tracer.onNotifierThreadEviction(d.pod.metadata.uid ?? "", { wokeAtMs, decisionMs: o.readAtMs, stopSentMs: o.sentAtMs, signalTakenMs: o.takenAtMs }),
  });
}

/**
 * A kernel event raised the main thread (kernel/thread-priority.ts): it goes back to its own priority once
 * no cycle is running or queued — after an eviction, BOOST_TAIL_MS later, so the kill the cycle started (pod
 * worker → kuberuntime → the victim's direct signal, < 1 ms in the reaction benchmark) is sent boosted too.
 */
const BOOST_TAIL_MS = 50;

/** What the manager is built over, besides the context. */
interface ManagerParts {
  summary: SummaryProvider;
  tracer: EvictionTracer;
  planner: FastEvictionPlanner | undefined;
  /** After each cycle: the metrics, then (after the trace) the record file. */
  onMetrics: (report: CycleReport) => void;
  persist: (report: CycleReport) => void;
}

/** The eviction manager over the summary, the pod lifecycle's kills and the CRI's reclaim; after each cycle, metrics, trace, records, boost and plan. */
function createManager(ctx: EvictionWiringContext, { summary, tracer, planner, onMetrics, persist }: ManagerParts): EvictionManager {
  const { input, clock } = ctx;
  const { config, lifecycle, cri } = input;
  const endBoostAfter = (report: CycleReport) => {
    const end = () => {
      if (!manager.busy) ctx.notifiers?.endBoost();
    };
    if (report.evicted.length > 0) setTimeout(end, BOOST_TAIL_MS);
    else setTimeout(end, 0);
  };
  const manager: EvictionManager = createEvictionManager({
    config: ctx.evictionConfig,
    clock,
    nodeName: input.nodeName,
    summary: (req) => summary.summary(req),
    activePods: () => lifecycle.activePods(),
    containerMemory: (pod) => summary.containerMemory(pod),
    killPod: tracer.wrapKillPod((pod, grace, status) => lifecycle.killPod(pod, grace, status)),
    podCleanedUp: (pod) => lifecycle.isPodCleanedUp(pod),
    recorder: input.events && evictionEvents(input.events, input.nodeName),
    reclaim: {
      deleteUnusedContainers: async () => void (await deleteUnusedContainers(cri)),
      deleteUnusedImages: async () => void (await deleteUnusedImages(input.imageCri ?? cri, [...(await sandboxImages(cri)), ...(input.keepImages?.() ?? [])])),
    },
    onNotifierTargets: config.kernelMemcgNotification ? (targets) => ctx.notifiers?.apply(targets) : undefined,
    mayEvict: planner && (() => planner.mayEvict()),
    lastPodStats: (uid) => summary.lastPodStats(uid),
    onCycle(report) {
      onMetrics(report);
      tracer.onCycle(report, manager.state());
      persist(report);
      if (ctx.notifiers) endBoostAfter(report);
      planner?.refresh();
    },
  });
  return manager;
}

/** The manager as a pod admit handler, and the pod changes that start its next cycle or void the notifier thread's plan. */
function wireLifecycle(ctx: EvictionWiringContext, manager: EvictionManager, records: EvictionRecordStore, planner: FastEvictionPlanner | undefined): void {
  const { lifecycle } = ctx.input;
  // An evicted static pod stays evicted across restarts until its manifest (hence its UID) changes.
  lifecycle.addAdmitHandler(evictedStaticPodAdmitHandler(records));
  // Upstream: the eviction manager is a pod admit handler (no BestEffort pods under MemoryPressure, …).
  lifecycle.addAdmitHandler((pod) => manager.admit(admissionView(pod, ctx.evictionConfig.evictStaticPods)));
  // An evicted pod's cleanup ends with a status change (its worker finished): the next cycle — and with
  // it the notifier thread's next plan — comes then, not at the next 1 s cleanup poll.
  lifecycle.onStatusChange(() => manager.podsChanged());
  if (planner) {
    // A pod admitted or changed cancels the notifier thread's plan until it is rebuilt with it.
    lifecycle.addAdmitHandler(() => (planner.invalidate(), { admit: true }));
    lifecycle.onStatusChange(() => planner.invalidate());
  }
}

/**
 * The summary's CRI listing is served from a cache refreshed behind the caller (a pressure-time summary
 * never waits on the runtime); keeping it warm means a new pod's containers are in it by the time it is
 * ranked, so the eviction message can name their usage as upstream's does. What each tick refreshes:
 * wire/summary-warmer.ts.
 */
function createSummaryWarmer(ctx: EvictionWiringContext, summary: SummaryProvider): { start(): void; stop(): void } {
  const { lifecycle, warmIntervalMs } = ctx.input;
  let warmer: ReturnType<typeof setInterval> | undefined;
  return {
    start() {
      const plan = createWarmPlan();
      let near = true;
      warmer = setInterval(() => {
        const pods = lifecycle.activePods();
        if (pods.length === 0) return;
        // Keyed on the running containers, not only the pods: a pod added before its containers
        // started would otherwise be warmed without them, and its eviction message would lack their usage.
        const key = pods
          .map((p) => `${p.metadata.uid}:${(lifecycle.getPodStatus(p.metadata.uid)?.containerStatuses ?? []).map((c) => c.containerID ?? "").join("+")}`)
          .join(",");
        const tick = plan.tick(key, near);
        // The pressure path's memory-only summary (~0.5 ms): the first kernel event must not be the one
        // that runs it cold (a cold first eviction is the slowest).
        if (tick.memoryOnly)
          summary.summary({ memoryOnly: true }).then(
            (s) => void (near = memoryThresholdsNear(ctx.evictionConfig.thresholds, s)),
            () => void (near = true),
          );
        if (tick.full) summary.summary().catch(() => undefined);
      }, warmIntervalMs ?? 2000);
      warmer.unref?.();
    },
    stop() {
      if (warmer) clearInterval(warmer);
    },
  };
}

/** The kernel memory notifiers, each event an immediate cycle; the notifier thread prioritised and given the plan. */
function startNotifiers(
  ctx: EvictionWiringContext,
  manager: EvictionManager,
  tracer: EvictionTracer,
  planner: FastEvictionPlanner | undefined,
): MemoryNotifiers {
  const { input, clock } = ctx;
  const events = notifierMetrics(input.metrics, () => ctx.notifiers);
  const priority =
    input.notifierPriority !== false
      ? { threadNice: NOTIFIER_THREAD_NICE, threadRealtime: NOTIFIER_THREAD_RT_PRIORITY, boostMainThreadNice: NOTIFIER_THREAD_NICE }
      : {};
  return startMemoryNotifiers({
    ...priority,
    podsCgroup: input.podsCgroup,
    fastPlan: planner && { buffer: planner.buffer, dirs: planner.dirs, onOutcome: (o, at) => planner.onOutcome(o, at) },
    repeatUseful: (target) => repeatCrossingUseful(manager.state(), target, clock.now()),
    onTrigger(reason, lagMs) {
      events.inc({ notifier: reason.startsWith("PSI") ? "psi" : "memcg_threshold" });
      tracer.onKernelEvent(reason, lagMs);
      manager.trigger(reason);
    },
  });
}

/** Where the notifier-thread eviction reads pod cgroups: the v1 memory mount, else a cgroup v2 mount with the memory controller (as detectMemoryNotification picks the notifier). */
function fastEvictionRoot(): { memoryRoot: string; cgroupVersion: 1 | 2 } | undefined {
  if (existsSync(join(DEFAULT_MEMORY_CGROUP_ROOT, "memory.usage_in_bytes"))) return { memoryRoot: DEFAULT_MEMORY_CGROUP_ROOT, cgroupVersion: 1 };
  const v2 = detectMemoryNotification().unifiedMemoryRoot;
  return v2 ? { memoryRoot: v2, cgroupVersion: 2 } : undefined;
}

export const NOTIFIER_THREAD_EVICTION_ENV = "BUNLET_NOTIFIER_THREAD_EVICTION";
const envSwitch = z.enum(["0", "1", "false", "true", "off", "on"]);

/**
 * The notifier-thread eviction's off switch: on by default (crossing → victim got SIGTERM p99 0.6 ms
 * against 23.8 ms through the main thread's cycle under contention, docs/adr/0001-notifier-thread-eviction.md);
 * BUNLET_NOTIFIER_THREAD_EVICTION=0 (or false/off) leaves every decision to the main thread's cycle.
 * Any other value is reported and the default kept.
 */
export function notifierThreadEvictionFromEnv(env: Record<string, string | undefined>): boolean {
  const raw = env[NOTIFIER_THREAD_EVICTION_ENV];
  if (raw === undefined || raw === "") return true;
  const v = envSwitch.safeParse(raw.trim().toLowerCase());
  if (!v.success) {
    log.warn(
      `ignoring ${NOTIFIER_THREAD_EVICTION_ENV}: not one of 0, 1, false, true, off, on; the notifier-thread eviction stays on ${kv({ value: JSON.stringify(raw) })}`,
    );
    return true;
  }
  const on = v.data === "1" || v.data === "true" || v.data === "on";
  if (!on) log.info(`notifier-thread eviction off (${NOTIFIER_THREAD_EVICTION_ENV}=${raw}): every eviction is decided by the main thread's cycle`);
  return on;
}

/** The eviction manager's events as the kubelet's recorder writes them (nodeRef, pod references). */
function evictionEvents(events: EventRecorder, nodeName: string): EvictionDeps["recorder"] {
  return (e) => {
    const o = e.object;
    const ref = o.kind === "Node" ? nodeRef(nodeName) : { kind: "Pod", name: o.name, namespace: o.namespace ?? "default", uid: o.uid, apiVersion: "v1" };
    events.event(ref, e.type, e.reason, e.message, e.annotations);
  };
}

/** The runtime's image filesystem mountpoint (CRI ImageFsInfo), or undefined when it cannot tell. */
export async function runtimeImageFsDir(cri: Pick<CriClient, "imageFsInfo">): Promise<string | undefined> {
  try {
    const info = await cri.imageFsInfo();
    const dir = info.imageFilesystems.find((f) => f.fsId?.mountpoint)?.fsId?.mountpoint;
    if (dir) log.info(`image filesystem ${kv({ imagefs: dir })}`);
    return dir;
  } catch (e) {
    log.warn(`cannot learn the image filesystem from the runtime; imagefs signals are not observed ${kv({ error: (e as Error).message })}`);
    return undefined;
  }
}
