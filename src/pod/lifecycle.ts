// The pod lifecycle: sources → config mux → sync loop → pod workers → runtime, with PLEG, periodic
// sync, housekeeping, probes and status (upstream kubelet.go syncLoop/syncLoopIteration, SyncPod,
// SyncTerminatingPod, SyncTerminatedPod, HandlePodAdditions/Removes, HandlePodCleanups). Everything it
// touches is injected, so the whole lifecycle runs in a unit test against a fake runtime and clock.
import { podRef } from "../events/types.ts";
import { kv, log } from "../log.ts";
import { createBackOff } from "./backoff.ts";
import { createContainerLogManager, logRotationPolicy } from "./container-logs.ts";
import { every, realClock, type TimerHandle } from "../clock.ts";
import { createCgroupScanGate, runHousekeeping } from "./housekeeping.ts";
import type { ManifestError } from "./manifest.ts";
import { defaultHostIP, type PodAdmitHandler, type PodLifecycle, type PodLifecycleDeps } from "./lifecycle-types.ts";
import { createPodManager } from "./pod-manager.ts";
import { createPodWorkers, effectiveGracePeriod, type PodSyncer, type SyncResult, type UpdateType } from "./pod-workers.ts";
import { createPleg, type PlegEvent, statusMatchesRelist } from "./pleg.ts";
import { createProbeManager } from "./prober/manager.ts";
import type { RuntimePodStatus, SyncPodResult } from "./runtime.ts";
import { createPodConfig } from "./sources/config-mux.ts";
import { createFileSource, type PodSource } from "./sources/file.ts";
import { createHttpSource } from "./sources/http.ts";
import type { PodUpdate } from "./sources/update.ts";
import { createStatusManager, isTerminalPhase } from "./status-manager.ts";
import { generatePodStatus, terminalStatus } from "./status.ts";
import type { Pod, PodStatus } from "./types.ts";
import { MAX_WAIT_FOR_CONTAINER_RUNTIME_MS, plegUnhealthyError, runtimeDownError, syncLoopError } from "./runtime-state.ts";
import { markRuntimeDown } from "./status.ts";
import { unsupportedSpecAdmitHandler } from "./admit-unsupported.ts";
import { needsReadinessReconcile } from "./readiness-gates.ts";


const fullName = (p: { metadata: { namespace?: string; name: string } }) => `${p.metadata.namespace ?? "default"}/${p.metadata.name}`;
/** Upstream runtimeCache period: housekeeping reuses a runtime listing at most this old. */
const RUNTIME_CACHE_MS = 2_000;

export function createPodLifecycle(deps: PodLifecycleDeps): PodLifecycle {
  const { runtime, config } = deps;
  const clock = deps.clock ?? realClock;
  const hostIP = config.hostIP ?? defaultHostIP();
  const podManager = createPodManager();
  const statuses = createStatusManager();
  const finishedListeners = new Set<(uid: string) => void>();
  const backOff = createBackOff();
  // First: an API pod asking for what bunlet cannot do is refused before any resource accounting.
  const admitHandlers = [unsupportedSpecAdmitHandler, ...(deps.admitHandlers ?? [])];
  /** Pods being terminated, also after their source dropped them. */
  const known = new Map<string, Pod>();
  const sources: PodSource[] = [];
  const sourceNames: string[] = [];
  const expectedSources: string[] = [...(config.extraSources ?? [])];
  const stoppers: (() => void)[] = [];
  let runtimeName = "containerd";
  const loggedExits = new Map<string, Set<string>>();
  const startedAtMs = clock.now();
  let started = false;
  /** Upstream syncLoopMonitor: when the loop (our housekeeping tick, every 2 s) last began an iteration. */
  let syncLoopEntryMs: number | undefined;
  let runtimeWasDown = false;

  const probes = createProbeManager({
    clock,
    execSync: deps.execSync ?? runtime.execSync?.bind(runtime),
    runner: deps.probeRunner,
    metrics: deps.metrics,
    events: deps.events,
    onChange: (uid) => {
      const pod = podManager.get(uid);
      if (pod) dispatch(pod, "sync");
    },
  });

  function updateStatus(pod: Pod, rs: RuntimePodStatus, syncErrors?: SyncPodResult["errors"], podIsTerminal?: boolean, withProbes = true): PodStatus {
    const uid = pod.metadata.uid;
    const old = statuses.get(uid);
    // One line per container exit (seen once per container ID): the first thing an SRE greps for.
    let seen = loggedExits.get(uid);
    if (!seen) loggedExits.set(uid, (seen = new Set()));
    for (const c of [...rs.containers].sort((a, b) => a.attempt - b.attempt)) {
      if (c.state !== "exited" || seen.has(c.id)) continue;
      seen.add(c.id);
      if (c.finishedAtMs && c.finishedAtMs < startedAtMs) continue; // exited before this bunlet started
      log.info(`container exited ${kv({ pod: fullName(pod), container: c.name, exitCode: c.exitCode, reason: c.reason, restartCount: c.attempt, id: c.id.slice(0, 13) })}`);
    }
    const status = generatePodStatus({
      pod,
      runtime: rs,
      oldStatus: statuses.get(uid),
      syncErrors,
      ready: (c) => probes.isReady(uid, c),
      started: (c) => probes.isStarted(uid, c),
      nowMs: clock.now(),
      hostIP,
      runtimeName,
      podIsTerminal,
    });
    statuses.set(uid, status);
    if (old?.phase !== status.phase) {
      log.info(`pod phase ${kv({ pod: fullName(pod), uid, from: old?.phase, to: status.phase })}`);
      if (status.phase === "Running") deps.metrics?.podRunning?.(pod, clock.now());
    }
    const probed = [...(pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === "Always"), ...pod.spec.containers];
    for (const c of withProbes ? probed : []) {
      const latest = rs.containers.filter((x) => x.name === c.name).sort((a, b) => b.attempt - a.attempt)[0];
      if (latest)
        probes.updateContainer(uid, c.name, { id: latest.id, running: latest.state === "running", startedAtMs: latest.startedAtMs, started: false, podIP: status.podIP });
    }
    return statuses.get(uid)!;
  }

  /**
   * The runtime status each pod's last sync read, and when. A later sync reuses it when a relist that
   * started after it shows the pod unchanged (upstream reads the PLEG's pod cache, not the runtime):
   * an idle resync of 100 pods then costs no CRI call.
   */
  const lastRuntimeStatus = new Map<string, { status: RuntimePodStatus; atMs: number }>();
  async function readStatus(pod: Pod): Promise<RuntimePodStatus> {
    const status = await runtime.getPodStatus(pod.metadata.uid, pod.metadata.name, pod.metadata.namespace);
    lastRuntimeStatus.set(pod.metadata.uid, { status, atMs: clock.now() });
    return status;
  }
  function reusableStatus(pod: Pod): RuntimePodStatus | undefined {
    const uid = pod.metadata.uid;
    const cached = lastRuntimeStatus.get(uid);
    const relist = pleg.relisted();
    if (!relist) return undefined;
    // A UID never read before that a relist of this agent does not show has nothing in the runtime:
    // only its own worker creates sandboxes for it, and that worker has not acted yet (upstream's
    // first sync reads the PLEG cache, empty for such a pod). 100 new pods then start without 200
    // CRI listings in the way of the first sandbox.
    if (!cached) return relist.pods.has(uid) ? undefined : { uid, name: pod.metadata.name, namespace: pod.metadata.namespace, sandboxes: [], containers: [] };
    if (relist.startMs <= cached.atMs) return undefined;
    return statusMatchesRelist(cached.status, relist.pods.get(uid)) ? cached.status : undefined;
  }

  const syncer: PodSyncer = {
    // `signal`: a kill preempted this sync (pod workers); stop before the next step.
    async syncPod(pod, _type, signal): Promise<SyncResult> {
      const uid = pod.metadata.uid;
      if (isTerminalPhase(statuses.get(uid))) return { terminal: true };
      if (pastActiveDeadline(pod)) return { terminal: true };
      // A static pod replaced by an edited manifest (new UID, same name) starts only once the old
      // one is gone (upstream allowStaticPodStart); the old worker's finish kicks us.
      for (const [otherUid, other] of known)
        if (otherUid !== uid && fullName(other) === fullName(pod) && workers.couldHaveRunningContainers(otherUid)) {
          log.debug(`pod waits for its predecessor to stop ${kv({ pod: fullName(pod), uid, predecessor: otherUid })}`);
          return {};
        }
      const cgroupParent = await deps.cgroups?.ensurePod(pod);
      if (signal?.aborted) return {};
      const before = reusableStatus(pod) ?? (await readStatus(pod));
      // Preempted: still record what the runtime showed (an adopted pod's containers), without
      // probes — the termination removed them — until the termination's own status lands.
      if (signal?.aborted) {
        updateStatus(pod, before, undefined, true, false);
        return {};
      }
      probes.addPod(pod);
      // The runtime may change under this sync: until its "after" status lands, the next sync reads
      // the runtime (a sync that throws half-way never leaves a stale or assumed-empty status behind).
      const kept = lastRuntimeStatus.get(uid);
      lastRuntimeStatus.set(uid, { status: before, atMs: Number.POSITIVE_INFINITY });
      const result = await runtime.syncPod(pod, before, backOff, { unhealthy: probes.unhealthy(uid), cgroupParent, started: (c) => probes.isStarted(uid, c) });
      if (signal?.aborted) {
        updateStatus(pod, await runtime.getPodStatus(uid, pod.metadata.name, pod.metadata.namespace), result.errors, true, false);
        return {};
      }
      for (const e of result.errors)
        if (e.reason !== "CrashLoopBackOff") log.warn(`container start failed ${kv({ pod: fullName(pod), container: e.container, reason: e.reason, message: e.message })}`);
      if (result.unchanged && kept) lastRuntimeStatus.set(uid, kept);
      const after = result.unchanged ? before : await readStatus(pod);
      const status = updateStatus(pod, after, result.errors);
      if (isTerminalPhase(status)) return { terminal: true };
      return { retry: result.errors.length > 0 };
    },
    async syncTerminatingPod(pod, gracePeriodSeconds) {
      const uid = pod.metadata.uid;
      lastRuntimeStatus.delete(uid);
      probes.removePod(uid);
      log.info(`killing pod ${kv({ pod: fullName(pod), uid, gracePeriod: gracePeriodSeconds })}`);
      const killed = runtime.killPod({ uid, name: pod.metadata.name, namespace: pod.metadata.namespace }, gracePeriodSeconds, pod);
      // A kill that preempted the pod's first sync: its status never saw the containers. Record
      // them alongside the kill (never before it), unless the post-kill status lands first.
      let final = false;
      if (podManager.get(uid) && !statuses.get(uid)?.containerStatuses?.some((c) => c.containerID)) {
        runtime.getPodStatus(uid, pod.metadata.name, pod.metadata.namespace).then(
          (rs) => void (final || updateStatus(pod, rs, undefined, true, false)),
          () => undefined,
        );
      }
      await killed;
      if (podManager.get(uid)) {
        const rs = await runtime.getPodStatus(uid, pod.metadata.name, pod.metadata.namespace);
        final = true;
        updateStatus(pod, rs, undefined, true);
      }
    },
    async syncTerminatedPod(pod) {
      const uid = pod.metadata.uid;
      await deps.cgroups?.removePod(uid);
      if (!podManager.get(uid)) {
        // The source no longer wants it: remove its containers and forget its status.
        await runtime.removePod(uid);
        statuses.delete(uid);
        loggedExits.delete(uid);
      } else {
        // Terminated but still known (evicted, or finished under restartPolicy Never): its status
        // stays, its volumes go, as upstream's volume manager tears down volumes of terminated pods —
        // an eviction for disk held in an emptyDir only relieves pressure once this has run.
        await runtime.tearDownVolumes?.(uid);
      }
    },
  };

  /**
   * spec.activeDeadlineSeconds (upstream activeDeadlineHandler): once the pod has been active that
   * long since its startTime it is failed with DeadlineExceeded and stopped. A timer re-syncs the pod
   * at its deadline so it does not wait for the periodic sync.
   */
  const deadlineTimers = new Map<string, TimerHandle>();
  function pastActiveDeadline(pod: Pod): boolean {
    const limit = pod.spec.activeDeadlineSeconds;
    const start = statuses.get(pod.metadata.uid)?.startTime;
    if (limit === undefined || !start) return false;
    const deadlineMs = Date.parse(start) + limit * 1000;
    if (clock.now() < deadlineMs) {
      if (!deadlineTimers.has(pod.metadata.uid))
        deadlineTimers.set(pod.metadata.uid, clock.setTimeout(() => {
          deadlineTimers.delete(pod.metadata.uid);
          const p = podManager.get(pod.metadata.uid);
          if (p) dispatch(p, "sync");
        }, deadlineMs - clock.now()));
      return false;
    }
    const message = "Pod was active on the node longer than the specified deadline";
    log.info(`pod exceeded its active deadline ${kv({ pod: fullName(pod), uid: pod.metadata.uid, activeDeadlineSeconds: limit })}`);
    deps.events?.event(podRef(pod), "Normal", "DeadlineExceeded", message);
    statuses.set(pod.metadata.uid, terminalStatus(statuses.get(pod.metadata.uid), "DeadlineExceeded", message, clock.now()));
    return true;
  }

  const workers = createPodWorkers({
    syncer,
    clock,
    errorRetryMs: config.errorRetryMs,
    metrics: deps.metrics,
    onFinished: (pod) => {
      const uid = pod.metadata.uid;
      if (!podManager.get(uid)) known.delete(uid);
      // Cleanup done: an API pod being deleted may now be removed (upstream canBeDeleted).
      for (const fn of finishedListeners) fn(uid);
      for (const p of podManager.pods()) if (p.metadata.uid !== uid && fullName(p) === fullName(pod)) dispatch(p, "sync");
    },
  });

  function dispatch(pod: Pod, type: UpdateType) {
    known.set(pod.metadata.uid, pod);
    workers.updatePod({ type, pod });
  }

  function activePods(): Pod[] {
    return podManager.pods().filter((p) => {
      const st = workers.state(p.metadata.uid);
      return !isTerminalPhase(statuses.get(p.metadata.uid)) && (st === undefined || st === "syncing");
    });
  }

  function handleAdditions(pods: Pod[]) {
    const sorted = [...pods].sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? ""));
    for (const pod of sorted) {
      const uid = pod.metadata.uid;
      podManager.add(pod);
      if (isTerminalPhase(statuses.get(uid)) || workers.isTerminationRequested(uid)) continue;
      const others = activePods().filter((p) => p.metadata.uid !== uid);
      // Upstream canAdmitPod: the first refusal ends it (a later handler, e.g. preemption, never runs).
      let rejected: ReturnType<PodAdmitHandler> | undefined;
      const waits: Promise<unknown>[] = [];
      for (const h of admitHandlers) {
        const r = h(pod, others);
        if (!r.admit) {
          rejected = r;
          break;
        }
        if (r.waitFor) waits.push(r.waitFor);
      }
      if (rejected) {
        const reason = rejected.reason ?? "Rejected";
        const message = rejected.message ?? "pod admission rejected";
        log.warn(`pod rejected at admission ${kv({ pod: fullName(pod), uid, reason, message })}`);
        deps.events?.event(podRef(pod), "Warning", reason, message);
        statuses.set(uid, terminalStatus(statuses.get(uid), reason, message, clock.now()));
        continue;
      }
      log.info(`pod added ${kv({ pod: fullName(pod), uid, source: pod.metadata.annotations?.["kubernetes.io/config.source"] })}`);
      if (waits.length === 0) dispatch(pod, "create");
      // Admitted after preempting: started once those pods are stopped, unless it went meanwhile.
      else void Promise.allSettled(waits).then(() => podManager.get(uid) && !workers.isTerminationRequested(uid) && dispatch(podManager.get(uid)!, "create"));
    }
  }

  function handleUpdate(u: PodUpdate) {
    switch (u.op) {
      case "ADD":
        handleAdditions(u.pods);
        break;
      case "UPDATE":
        for (const pod of u.pods) {
          podManager.add(pod);
          if (!isTerminalPhase(statuses.get(pod.metadata.uid))) dispatch(pod, "update");
        }
        break;
      case "REMOVE":
      case "DELETE":
        for (const pod of u.pods) {
          podManager.remove(pod.metadata.uid);
          log.info(`pod removed by its source ${kv({ pod: fullName(pod), uid: pod.metadata.uid, source: u.source })}`);
          // A DELETE carries the API's deletion fields (deletionGracePeriodSeconds) the kill honours.
          dispatch(u.op === "DELETE" ? pod : known.get(pod.metadata.uid) ?? pod, "kill");
        }
        break;
      case "RECONCILE":
        for (const pod of u.pods) {
          podManager.add(pod);
          // A readiness gate's condition changed in the API status: Ready is regenerated by a sync.
          if (needsReadinessReconcile(pod) && !isTerminalPhase(statuses.get(pod.metadata.uid)) && !workers.isTerminationRequested(pod.metadata.uid)) dispatch(pod, "sync");
        }
        break;
      case "SET":
        // The mux only emits incremental ops; a SET straight from a caller is a full replacement.
        for (const p of podManager.pods()) if (!u.pods.some((n) => n.metadata.uid === p.metadata.uid)) handleUpdate({ op: "REMOVE", pods: [p], source: u.source });
        handleAdditions(u.pods.filter((p) => !podManager.get(p.metadata.uid)));
        break;
    }
  }

  const mux = createPodConfig({ clock, onUpdate: handleUpdate });
  let manifestErrors: Record<string, ManifestError[]> = {};

  function onPlegEvents(events: PlegEvent[]) {
    const uids = new Set(events.map((e) => e.podUid));
    for (const uid of uids) {
      const pod = podManager.get(uid);
      if (pod && !workers.isTerminationRequested(uid)) dispatch(pod, "sync");
    }
  }
  const pleg = createPleg({ runtime, clock, relistPeriodMs: config.relistPeriodMs, onEvents: onPlegEvents, onRelist: () => onRelist(), metrics: deps.metrics });

  const sourcesReady = () => mux.seenAllSources(expectedSources);

  /** A pod's content may go once no source wants it and its worker is done (upstream ShouldPodContentBeRemoved). */
  const contentRemovable = (uid: string) => !podManager.get(uid) && !known.has(uid) && (workers.state(uid) === undefined || workers.state(uid) === "finished");
  async function containerGc(): Promise<void> {
    try {
      await runtime.garbageCollect?.({ contentRemovable, allSourcesReady: sourcesReady() });
    } catch (e) {
      log.warn(`container gc failed ${kv({ error: (e as Error).message })}`);
    }
  }

  const cgroupScan = createCgroupScanGate(() => clock.now());
  const housekeeping = () => {
    syncLoopEntryMs = clock.now();
    for (const uid of lastRuntimeStatus.keys()) if (!known.has(uid)) lastRuntimeStatus.delete(uid);
    return runHousekeeping({ clock, runtime, podManager, workers, statuses, probes, backOff, known, cgroups: deps.cgroups, sourcesReady, dispatch, runtimePods: () => pleg.runtimePods(RUNTIME_CACHE_MS), cgroupScan });
  };

  /** A periodic loop whose failure is logged against its name and never ends it or another loop. */
  const loop = (name: string, ms: number, fn: () => void | Promise<void>) =>
    every(clock, ms, async () => {
      try {
        await fn();
      } catch (e) {
        log.error(`pod lifecycle loop failed; it runs again at its next period ${kv({ loop: name, error: (e as Error).message })}`);
      }
    });

  /** The container log rotation in progress, which stop() lets finish. */
  let rotating: Promise<number> | undefined;

  function startLoops() {
    pleg.start();
    stoppers.push(loop("sync", config.syncFrequencyMs ?? 60_000, () => {
      for (const p of podManager.pods()) if (!workers.isTerminationRequested(p.metadata.uid) && !isTerminalPhase(statuses.get(p.metadata.uid))) dispatch(p, "sync");
    }));
    stoppers.push(loop("housekeeping", config.housekeepingPeriodMs ?? 2_000, housekeeping));
    if (runtime.garbageCollect) stoppers.push(loop("container gc", config.containerGcPeriodMs ?? 60_000, () => containerGc()));
    if (config.containerLogMaxSize && runtime.listContainerLogs && runtime.reopenContainerLog) {
      const logs = createContainerLogManager({
        listContainerLogs: runtime.listContainerLogs.bind(runtime),
        reopenContainerLog: runtime.reopenContainerLog.bind(runtime),
        policy: logRotationPolicy(config.containerLogMaxSize, config.containerLogMaxFiles ?? 5),
        now: clock.now,
      });
      stoppers.push(loop("container log rotation", config.containerLogMonitorIntervalMs ?? 10_000, async () => {
        rotating = logs.rotateAll();
        try {
          await rotating;
        } finally {
          rotating = undefined;
        }
      }));
    }
  }

  /** Upstream runtimeErrors: the runtime has not answered a relist for maxWaitForContainerRuntime. */
  const runtimeError = () =>
    runtimeDownError({ nowMs: clock.now(), lastSeenMs: pleg.lastRelistMs(), sinceMs: startedAtMs, thresholdMs: config.runtimeDownGraceMs ?? MAX_WAIT_FOR_CONTAINER_RUNTIME_MS });

  /**
   * Pods' Ready follows the runtime's reachability: while it is down past the grace, every
   * non-terminal pod is served Ready=False (upstream: the node goes NotReady and the node controller
   * marks its pods not ready). Derived when read, so no timer runs for it.
   */
  function servedStatus(status: PodStatus | undefined): PodStatus | undefined {
    const down = runtimeError();
    if (!down || !status) return status;
    const lastSeen = pleg.lastRelistMs() ?? startedAtMs;
    return markRuntimeDown(status, down, lastSeen + (config.runtimeDownGraceMs ?? MAX_WAIT_FOR_CONTAINER_RUNTIME_MS));
  }

  /** Relist outcome: on the runtime's return after an outage, every pod's status is regenerated. */
  function onRelist() {
    const down = runtimeError() !== undefined;
    if (runtimeWasDown && !down) {
      log.info(`container runtime is back; re-syncing pods ${kv({ pods: podManager.pods().length })}`);
      for (const p of podManager.pods()) if (!workers.isTerminationRequested(p.metadata.uid) && !isTerminalPhase(statuses.get(p.metadata.uid))) dispatch(p, "sync");
    } else if (!runtimeWasDown && down) log.warn(`pods marked not ready ${kv({ reason: runtimeError() })}`);
    runtimeWasDown = down;
  }

  return {
    async start() {
      if (started) return;
      started = true;
      try {
        runtimeName = (await runtime.version()).runtimeName || runtimeName;
      } catch (e) {
        log.warn(`runtime version failed; will keep trying through PLEG ${kv({ error: (e as Error).message })}`);
      }
      if (config.staticPodPath) {
        expectedSources.push("file");
        sourceNames.push("file");
        sources.push(
          createFileSource({
            path: config.staticPodPath,
            nodeName: config.nodeName,
            checkFrequencyMs: config.fileCheckFrequencyMs ?? 20_000,
            clock,
            onUpdate: (u) => mux.merge(u.source, u),
            onErrors: (e) => (manifestErrors = { ...manifestErrors, file: e }),
          }),
        );
      }
      if (config.staticPodURL) {
        expectedSources.push("http");
        sourceNames.push("http");
        sources.push(
          createHttpSource({
            url: config.staticPodURL,
            headers: config.staticPodURLHeader,
            nodeName: config.nodeName,
            checkFrequencyMs: config.httpCheckFrequencyMs ?? 20_000,
            clock,
            fetch: deps.fetch,
            onUpdate: (u) => mux.merge(u.source, u),
            onErrors: (e) => (manifestErrors = { ...manifestErrors, http: e }),
          }),
        );
      }
      // Loops first, each on its own: a source that fails (or hangs on a hostile manifest) must never
      // keep PLEG, the sync loop, housekeeping or log rotation from running (test/pod/source-isolation.test.ts).
      startLoops();
      // Each source's first read is awaited (so start() returns with what the sources had), but a
      // source that throws is reported against its own name and never stops another one.
      await Promise.allSettled(
        sources.map((s, i) =>
          s.start().catch((e) => log.error(`pod source failed to start; it keeps retrying ${kv({ source: sourceNames[i], error: (e as Error).message })}`)),
        ),
      );
    },
    async stop() {
      for (const s of sources) s.stop();
      pleg.stop();
      for (const s of stoppers.splice(0)) s();
      // A rotation caught between its rename and the runtime's reopen would leave no current log behind.
      await rotating?.catch(() => undefined);
      probes.stop();
      workers.stop();
      for (const t of deadlineTimers.values()) clock.clearTimeout(t);
      deadlineTimers.clear();
      started = false;
    },
    handleUpdate: (u) => mux.merge(u.source, u),
    activePods,
    killPod(pod, gracePeriodOverrideSeconds, req) {
      const uid = pod.metadata.uid ?? "";
      const target = podManager.get(uid) ?? known.get(uid);
      if (!target) return Promise.reject(new Error(`killPod: pod ${fullName(pod)} uid=${uid} is not known to the pod workers`));
      // Already finished (terminal, or stopped earlier): keep its recorded outcome.
      if (workers.state(uid) === "finished") return Promise.resolve();
      const st = terminalStatus(statuses.get(uid), req.reason, req.message, clock.now(), true);
      if (req.condition) st.conditions = st.conditions?.map((c) => (c.type === "DisruptionTarget" ? { ...c, reason: req.condition!.reason, message: req.condition!.message } : c));
      statuses.set(uid, st);
      if (req.annotations) statuses.setAnnotations(uid, req.annotations);
      log.info(`stopping pod for the kubelet ${kv({ pod: fullName(target), uid, reason: req.reason, gracePeriodOverride: gracePeriodOverrideSeconds, message: req.message })}`);
      // Upstream killPodNow: no stop within 1.5 × grace (at least 10 s) is a Warning event.
      const grace = effectiveGracePeriod(undefined, target.spec.terminationGracePeriodSeconds, gracePeriodOverrideSeconds);
      const overdue = clock.setTimeout(
        () => deps.events?.event(podRef(target), "Warning", "ExceededGracePeriod", "Container runtime did not kill the pod within specified grace period."),
        Math.max(10, grace + Math.floor(grace / 2)) * 1000,
      );
      return new Promise<void>((resolve) => {
        known.set(uid, target);
        const done = () => (clock.clearTimeout(overdue), resolve());
        workers.updatePod({ type: "kill", pod: target, kill: { gracePeriodOverrideSeconds, onDone: done } });
      });
    },
    listPodsForApi() {
      return podManager
        .pods()
        .map((p) => {
          const extra = statuses.annotations(p.metadata.uid);
          return {
            ...p,
            metadata: extra ? { ...p.metadata, annotations: { ...p.metadata.annotations, ...extra } } : p.metadata,
            status: servedStatus(statuses.get(p.metadata.uid)) ?? { phase: "Pending" as const },
          };
        })
        .sort((a, b) => fullName(a).localeCompare(fullName(b)));
    },
    getPodStatus: (uid) => servedStatus(statuses.get(uid)),
    onStatusChange(fn) {
      finishedListeners.add(fn);
      const off = statuses.onChange(fn);
      return () => {
        finishedListeners.delete(fn);
        off();
      };
    },
    isPodCleanedUp(pod) {
      const st = workers.state(pod.metadata.uid ?? "");
      return st === undefined || st === "finished";
    },
    addAdmitHandler: (h) => void admitHandlers.push(h),
    manifestErrors: () => Object.values(manifestErrors).flat(),
    sourcesReady,
    housekeeping,
    containerGc,
    whenIdle: () => workers.whenIdle(),
    pods: () => podManager.pods(),
    isPodTerminatingByFullName(name) {
      for (const [uid, p] of known)
        if (`${p.metadata.name}_${p.metadata.namespace ?? "default"}` === name && !podManager.get(uid) && workers.state(uid) !== "finished") return true;
      return false;
    },
    plegHealthy() {
      const last = pleg.lastRelistMs();
      return last !== undefined && clock.now() - last < 180_000;
    },
    runtimeError,
    healthChecks: () => [
      { name: "syncloop", check: () => syncLoopError({ nowMs: clock.now(), lastEntryMs: syncLoopEntryMs, syncFrequencyMs: config.syncFrequencyMs ?? 60_000 }) },
      { name: "pleg", check: () => plegUnhealthyError({ nowMs: clock.now(), lastRelistMs: pleg.lastRelistMs() }) },
      { name: "runtime", check: runtimeError },
    ],
  };
}
