// The pod lifecycle (upstream kubelet.go): sources → config mux → sync loop → pod workers → runtime,
// with PLEG, housekeeping, probes and status. One LifecycleContext built here is shared by sync-loop.ts,
// pod-admission.ts, pod-syncer.ts and status-sync.ts; everything it touches is injected, so the whole
// lifecycle runs in a unit test against a fake runtime and clock.
import { createBackOff } from "./backoff.ts";
import { realClock } from "../clock.ts";
import { createCgroupScanGate } from "./housekeeping.ts";
import { dispatch, type LifecycleContext } from "./lifecycle-context.ts";
import { defaultHostIP, type PodLifecycle, type PodLifecycleDeps } from "./lifecycle-types.ts";
import { createPodManager } from "./pod-manager.ts";
import { createPodWorkers } from "./pod-workers.ts";
import { createPleg } from "./pleg.ts";
import { createProbeManager } from "./prober/manager.ts";
import { createPodConfig } from "./sources/config-mux.ts";
import { createStatusManager } from "./status-manager.ts";
import type { Pod } from "./types.ts";
import { unsupportedSpecAdmitHandler } from "./admit-unsupported.ts";
import { activePods } from "./pod-admission.ts";
import { isPodTerminatingByFullName, killPodNow, syncPod, syncTerminatedPod, syncTerminatingPod } from "./pod-syncer.ts";
import { listPodsForApi, onStatusChange, servedStatus, setContainerReadiness } from "./status-sync.ts";
import {
  containerGc,
  handleUpdate,
  healthChecks,
  housekeeping,
  onPlegEvents,
  onRelist,
  plegHealthy,
  runtimeError,
  sourcesReady,
  startLifecycle,
  stopLifecycle,
  syncAllPods,
} from "./sync-loop.ts";
import { podKey } from "./pod-like.ts";

export function createPodLifecycle(deps: PodLifecycleDeps): PodLifecycle {
  const ctx = createLifecycleContext(deps);
  const { podManager, workers } = ctx;
  return {
    start: () => startLifecycle(ctx),
    stop: () => stopLifecycle(ctx),
    handleUpdate: (u) => ctx.mux.merge(u.source, u),
    activePods: () => activePods(ctx),
    killPod: (pod, gracePeriodOverrideSeconds, req) => killPodNow(ctx, pod, gracePeriodOverrideSeconds, req),
    listPodsForApi: () => listPodsForApi(ctx),
    getPodStatus: (uid) => servedStatus(ctx, ctx.statuses.get(uid)),
    onStatusChange: (fn) => onStatusChange(ctx, fn),
    syncPodsNow: (match) => syncAllPods(ctx, match),
    isPodCleanedUp(pod) {
      const st = workers.state(pod.metadata.uid ?? "");
      return st === undefined || st === "finished";
    },
    addAdmitHandler: (h) => void ctx.admitHandlers.push(h),
    manifestErrors: () => Object.values(ctx.state.manifestErrors).flat(),
    sourcesReady: () => sourcesReady(ctx),
    housekeeping: () => housekeeping(ctx),
    containerGc: () => containerGc(ctx),
    whenIdle: () => workers.whenIdle(),
    pods: () => podManager.pods(),
    isPodTerminatingByFullName: (name) => isPodTerminatingByFullName(ctx, name),
    plegHealthy: () => plegHealthy(ctx),
    runtimeError: () => runtimeError(ctx),
    healthChecks: () => healthChecks(ctx),
  };
}

/** The shared record: managers, workers, PLEG and mux wired to the parts, empty caches. */
function createLifecycleContext(deps: PodLifecycleDeps): LifecycleContext {
  const { runtime, config } = deps;
  const clock = deps.clock ?? realClock;
  const hostIP = config.hostIP ?? defaultHostIP();
  const podManager = createPodManager();
  const finishedListeners = new Set<(uid: string) => void>();
  const known = new Map<string, Pod>();
  const startedAtMs = clock.now();
  // The closures below run only once ctx is built (the parts call each other through it).
  const ctx: LifecycleContext = {
    deps,
    runtime,
    config,
    clock,
    hostIP,
    startedAtMs,
    podManager,
    statuses: createStatusManager(),
    backOff: createBackOff(),
    // First: an API pod asking for what bunlet cannot do is refused before any resource accounting.
    admitHandlers: [unsupportedSpecAdmitHandler, ...(deps.admitHandlers ?? [])],
    known,
    finishedListeners,
    loggedExits: new Map(),
    lastRuntimeStatus: new Map(),
    deadlineTimers: new Map(),
    sources: [],
    sourceNames: [],
    expectedSources: [...(config.extraSources ?? [])],
    stoppers: [],
    state: { started: false, runtimeName: "containerd", runtimeWasDown: false, manifestErrors: {} },
    probes: createProbeManager({
      clock,
      execSync: deps.execSync ?? runtime.execSync?.bind(runtime),
      runner: deps.probeRunner,
      metrics: deps.metrics,
      events: deps.events,
      onChange: (uid, kind, _container, result, containerId) => {
        if (kind === "readiness" && containerId) setContainerReadiness(ctx, uid, containerId, result === "success");
        const pod = podManager.get(uid);
        if (pod) dispatch(ctx, pod, "sync");
      },
    }),
    workers: createPodWorkers({
      syncer: {
        syncPod: (pod, type, signal) => syncPod(ctx, pod, type, signal),
        syncTerminatingPod: (pod, gracePeriodSeconds) => syncTerminatingPod(ctx, pod, gracePeriodSeconds),
        syncTerminatedPod: (pod) => syncTerminatedPod(ctx, pod),
      },
      clock,
      errorRetryMs: config.errorRetryMs,
      metrics: deps.metrics,
      onFinished: (pod) => {
        const uid = pod.metadata.uid;
        if (!podManager.get(uid)) known.delete(uid);
        // Cleanup done: an API pod being deleted may now be removed (upstream canBeDeleted).
        for (const fn of finishedListeners) fn(uid);
        for (const p of podManager.pods()) if (p.metadata.uid !== uid && podKey(p) === podKey(pod)) dispatch(ctx, p, "sync");
      },
    }),
    mux: createPodConfig({ clock, onUpdate: (u) => handleUpdate(ctx, u) }),
    pleg: createPleg({
      runtime,
      clock,
      relistPeriodMs: config.relistPeriodMs,
      onEvents: (events) => onPlegEvents(ctx, events),
      onRelist: () => onRelist(ctx),
      metrics: deps.metrics,
    }),
    cgroupScan: createCgroupScanGate(() => clock.now()),
  };
  return ctx;
}
