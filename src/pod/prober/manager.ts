// Probe manager (upstream prober/prober_manager.go + worker.go): one worker per pod × container ×
// probe kind, ticking every periodSeconds on the injected clock. Results feed back into the pod
// lifecycle: liveness/startup failures restart the container (SyncPodOptions.unhealthy), readiness
// drives the Ready condition, startup gates liveness and readiness. A started container whose
// readiness has not passed is probed at once when the lifecycle hands over its status (upstream
// UpdatePodStatus' manual trigger), so a pod is ready as soon as its startup probe passes, not a
// readiness period later. A terminating pod's liveness and startup probes stop; readiness runs on
// until its containers are stopped (upstream StopLivenessAndStartup, then RemovePod).
import { podRef, reasons, type EventRecorder } from "../../events/index.ts";
import { kv, log } from "../../log.ts";
import type { Clock, TimerHandle } from "../../clock.ts";
import type { Container, Pod, Probe } from "../types.ts";
import { runProbe, type ExecSync, type ProbeOutcome, type ProbeTarget } from "./probes.ts";
import type { PodLifecycleMetrics, ProbeMetricResult, ProbeType } from "../lifecycle-metrics.ts";
import { initialState, prepare, record, type ContainerView, type ProbeKind, type ProbeResult, type ProbeWorkerState } from "./state.ts";
import { podKey } from "../pod-like.ts";

const PROBE_TYPE = { liveness: "Liveness", readiness: "Readiness", startup: "Startup" } as const satisfies Record<ProbeKind, ProbeType>;
const PROBE_RESULT: Record<ProbeOutcome["result"], ProbeMetricResult> = { success: "successful", failure: "failed", unknown: "unknown" };

export type ProbeRunner = (probe: Probe, target: ProbeTarget) => Promise<ProbeOutcome>;

export interface ProbeManager {
  /** Starts workers for the pod's probes (idempotent). */
  addPod(pod: Pod): void;
  removePod(uid: string): void;
  /** The pod is terminating: its regular containers' liveness and startup probes stop. */
  stopLivenessAndStartup(uid: string): void;
  /** Latest view of a container (from the status the lifecycle generated); may trigger its readiness probe. */
  updateContainer(uid: string, container: string, view: ContainerView & { podIP?: string }): void;
  /** undefined when the container has no readiness probe. */
  isReady(uid: string, container: string): boolean | undefined;
  /** undefined when the container has no startup probe. */
  isStarted(uid: string, container: string): boolean | undefined;
  /** Containers whose current instance failed liveness/startup and must be restarted. */
  unhealthy(uid: string): { container: string; message: string; probe: "liveness" | "startup" }[];
  pods(): string[];
  stop(): void;
}

interface Worker {
  kind: ProbeKind;
  probe: Probe;
  container: Container;
  state: ProbeWorkerState;
  timer?: TimerHandle;
  lastOutput: string;
  /** A tick is in progress (never two at once). */
  ticking: boolean;
  /** Triggered while ticking: tick again at once after. */
  triggered: boolean;
}

export function createProbeManager(opts: {
  clock: Clock;
  execSync?: ExecSync;
  /** Override the probe handlers (tests). */
  runner?: ProbeRunner;
  /** A published result changed: the lifecycle re-syncs the pod (liveness) or its status (readiness). */
  onChange: (uid: string, kind: ProbeKind, container: string, result: ProbeResult, containerId: string | undefined) => void;
  metrics?: Pick<PodLifecycleMetrics, "probed" | "probesRemoved">;
  /** Upstream prober: every failed probe is a Warning "Unhealthy" event on the container. */
  events?: EventRecorder;
}): ProbeManager {
  const pods = new Map<string, { pod: Pod; workers: Worker[]; views: Map<string, ContainerView & { podIP?: string }> }>();
  const runner: ProbeRunner = opts.runner ?? ((probe, target) => runProbe(probe, target, { execSync: opts.execSync }));

  const findWorker = (uid: string, container: string, kind: ProbeKind) => pods.get(uid)?.workers.find((w) => w.container.name === container && w.kind === kind);

  /** Has the container started (upstream isContainerStarted): its startup probe passed, or it has none. */
  const isContainerStarted = (uid: string, container: string, id: string | undefined) => {
    const startup = findWorker(uid, container, "startup");
    return !startup || (startup.state.containerId === id && startup.state.published === "success");
  };

  async function tick(uid: string, w: Worker): Promise<void> {
    const entry = pods.get(uid);
    const view = entry?.views.get(w.container.name);
    if (!entry || !view) return;
    const started = w.kind === "startup" ? true : (findWorker(uid, w.container.name, "startup")?.state.published ?? "success") === "success";
    const before = w.state.published;
    const p = prepare(w.kind, w.probe, w.state, { ...view, started }, opts.clock.now());
    w.state = p.state;
    if (p.probe && view.id) {
      const startMs = opts.clock.now();
      const out = await runner(w.probe, { container: w.container, containerId: view.id, podIP: view.podIP });
      if (pods.get(uid) !== entry || !entry.workers.includes(w)) return; // removed or stopped meanwhile
      if (out.errored) {
        // Upstream worker.doProbe: a prober error throws the result away (no count, no metric).
        log.warn(`probe errored, result discarded ${kv({ pod: podKey(entry.pod), container: w.container.name, probe: w.kind, error: out.output })}`);
      } else {
        const seconds = (opts.clock.now() - startMs) / 1000;
        opts.metrics?.probed?.({ pod: entry.pod, container: w.container.name, probeType: PROBE_TYPE[w.kind], result: PROBE_RESULT[out.result], seconds });
        w.lastOutput = out.output;
        w.state = record(w.kind, w.probe, w.state, out.result);
        recordProbeEvent(entry.pod, w, out);
      }
    }
    if (w.state.published !== before) {
      if (w.state.published === "failure" && w.kind !== "readiness")
        log.info(`container failed ${w.kind} probe, will be restarted ${kv({ pod: podKey(entry.pod), container: w.container.name, output: w.lastOutput })}`);
      opts.onChange(uid, w.kind, w.container.name, w.state.published, w.state.containerId);
    }
  }

  /** upstream prober.probe: a failure is an "Unhealthy" event, a success with a warning a "ProbeWarning". */
  function recordProbeEvent(pod: Pod, w: Worker, out: ProbeOutcome): void {
    if (out.result !== "failure" && !out.warning) return;
    const kind = PROBE_TYPE[w.kind];
    const init = (pod.spec.initContainers ?? []).some((c) => c.name === w.container.name);
    const ref = podRef(pod, w.container.name, init);
    if (out.result === "failure") {
      opts.events?.event(ref, "Warning", reasons.ContainerUnhealthy, `${kind} probe failed: ${out.output.trim()}`);
      log.debug(`probe failed ${kv({ pod: podKey(pod), container: w.container.name, probe: w.kind, output: out.output })}`);
    } else opts.events?.event(ref, "Warning", reasons.ContainerProbeWarning, `${kind} probe warning: ${out.output}`);
  }

  /** The worker's next tick in `delayMs`, replacing the one pending (upstream: the ticker, reset by a manual run). */
  function schedule(uid: string, w: Worker, delayMs: number) {
    if (w.timer) opts.clock.clearTimeout(w.timer);
    w.timer = opts.clock.setTimeout(async () => {
      w.timer = undefined;
      if (!pods.get(uid)?.workers.includes(w)) return;
      w.ticking = true;
      w.triggered = false;
      try {
        await tick(uid, w);
      } catch (e) {
        log.error(`probe worker error ${kv({ uid, container: w.container.name, probe: w.kind, error: (e as Error).message })}`);
      } finally {
        w.ticking = false;
      }
      if (pods.get(uid)?.workers.includes(w) && !w.timer) schedule(uid, w, w.triggered ? 0 : w.probe.periodSeconds * 1000);
    }, delayMs);
  }

  /** upstream worker.manualTriggerCh: probe now (or right after the probe in flight), then every period. */
  function trigger(uid: string, w: Worker) {
    if (w.ticking) w.triggered = true;
    else schedule(uid, w, 0);
  }

  function stopWorkers(uid: string, stop: (w: Worker) => boolean) {
    const e = pods.get(uid);
    if (!e) return;
    for (const w of e.workers.filter(stop)) if (w.timer) opts.clock.clearTimeout(w.timer);
    e.workers = e.workers.filter((w) => !stop(w));
  }

  let stopped = false;
  return {
    addPod(pod) {
      const uid = pod.metadata.uid;
      if (stopped || pods.has(uid)) return; // a sync that ends after stop() starts no probes
      const workers: Worker[] = [];
      // Sidecars (restartable init containers) are probed like regular containers.
      for (const c of [...(pod.spec.initContainers ?? []).filter((x) => x.restartPolicy === "Always"), ...pod.spec.containers]) {
        const kinds: [ProbeKind, Probe | undefined][] = [
          ["startup", c.startupProbe],
          ["liveness", c.livenessProbe],
          ["readiness", c.readinessProbe],
        ];
        for (const [kind, probe] of kinds)
          if (probe) workers.push({ kind, probe, container: c, state: initialState(kind), lastOutput: "", ticking: false, triggered: false });
      }
      pods.set(uid, { pod, workers, views: new Map() });
      // First probe right away (upstream adds jitter up to one period); then every periodSeconds.
      for (const w of workers) schedule(uid, w, 0);
    },
    removePod(uid) {
      if (!pods.has(uid)) return;
      stopWorkers(uid, () => true);
      pods.delete(uid);
      opts.metrics?.probesRemoved?.(uid);
    },
    stopLivenessAndStartup(uid) {
      // Regular containers only, as upstream: sidecars are stopped after them and probed until then.
      const regular = new Set(pods.get(uid)?.pod.spec.containers.map((c) => c.name));
      stopWorkers(uid, (w) => w.kind !== "readiness" && regular.has(w.container.name));
    },
    updateContainer(uid, container, view) {
      pods.get(uid)?.views.set(container, view);
      // upstream UpdatePodStatus: a started container not yet ready has its readiness probed now.
      const w = findWorker(uid, container, "readiness");
      if (!w || !view.running || !isContainerStarted(uid, container, view.id)) return;
      if (w.state.containerId !== view.id || w.state.published !== "success") trigger(uid, w);
    },
    isReady(uid, container) {
      const w = findWorker(uid, container, "readiness");
      if (!w) return undefined;
      const view = pods.get(uid)?.views.get(container);
      return w.state.containerId === view?.id && w.state.published === "success";
    },
    isStarted(uid, container) {
      const w = findWorker(uid, container, "startup");
      if (!w) return undefined;
      const view = pods.get(uid)?.views.get(container);
      return w.state.containerId === view?.id && w.state.published === "success";
    },
    unhealthy(uid) {
      const e = pods.get(uid);
      if (!e) return [];
      return e.workers
        .filter((w) => w.kind !== "readiness" && w.state.published === "failure" && w.state.containerId === e.views.get(w.container.name)?.id)
        .map((w) => ({
          container: w.container.name,
          probe: w.kind as "liveness" | "startup",
          message: `Container ${w.container.name} failed ${w.kind} probe, will be restarted${w.lastOutput ? `: ${w.lastOutput}` : ""}`,
        }));
    },
    pods: () => [...pods.keys()],
    stop() {
      stopped = true;
      for (const uid of [...pods.keys()]) this.removePod(uid);
    },
  };
}
