// What the pod lifecycle's parts share (upstream: the Kubelet struct of kubelet.go as its syncLoop,
// HandlePodAdditions, SyncPod and the status manager see it): one record built once by
// createPodLifecycle (lifecycle.ts) and passed to sync-loop.ts, pod-admission.ts, pod-syncer.ts, status-sync.ts.
import type { Clock, TimerHandle } from "../clock.ts";
import type { ContainerBackOff } from "./backoff.ts";
import type { CgroupScanGate } from "./housekeeping.ts";
import type { PodAdmitHandler, PodLifecycleConfig, PodLifecycleDeps } from "./lifecycle-types.ts";
import type { ManifestError } from "./manifest.ts";
import type { Pleg } from "./pleg.ts";
import type { PodManager } from "./pod-manager.ts";
import type { PodWorkers, UpdateType } from "./pod-workers.ts";
import type { ProbeManager } from "./prober/manager.ts";
import type { Runtime, RuntimePodStatus } from "./runtime.ts";
import type { PodConfig } from "./sources/config-mux.ts";
import type { PodSource } from "./sources/pod-source.ts";
import type { StatusManager } from "./status-manager.ts";
import type { Pod } from "./types.ts";

/** What changes over the lifecycle's life (the rest of the record is set once). */
export interface LifecycleState {
  started: boolean;
  /** The runtime's name for status (containerd until version() answers). */
  runtimeName: string;
  /** Upstream syncLoopMonitor: when the loop (our housekeeping tick, every 2 s) last began an iteration. */
  syncLoopEntryMs?: number;
  runtimeWasDown: boolean;
  /** The file and http sources' manifest errors, by source. */
  manifestErrors: Record<string, ManifestError[]>;
  /** The container log rotation in progress, which stop() lets finish. */
  rotating?: Promise<number>;
}

export interface LifecycleContext {
  readonly deps: PodLifecycleDeps;
  readonly runtime: Runtime;
  readonly config: PodLifecycleConfig;
  readonly clock: Clock;
  /** Node IP for status.hostIP. */
  readonly hostIP: string | undefined;
  readonly startedAtMs: number;
  readonly podManager: PodManager;
  readonly statuses: StatusManager;
  readonly probes: ProbeManager;
  readonly workers: PodWorkers;
  readonly pleg: Pleg;
  /** The config mux the sources feed (upstream PodConfig). */
  readonly mux: PodConfig;
  readonly backOff: ContainerBackOff;
  readonly cgroupScan: CgroupScanGate;
  /** Upstream admitHandlers, run in order by canAdmitPod. */
  readonly admitHandlers: PodAdmitHandler[];
  /** Pods being terminated, also after their source dropped them. */
  readonly known: Map<string, Pod>;
  readonly finishedListeners: Set<(uid: string) => void>;
  /** Container IDs whose exit was logged, per pod UID (one line per exit). */
  readonly loggedExits: Map<string, Set<string>>;
  /**
   * The runtime status each pod's last sync read, and when. A later sync reuses it when a relist that
   * started after it shows the pod unchanged (upstream reads the PLEG's pod cache, not the runtime):
   * an idle resync of 100 pods then costs no CRI call.
   */
  readonly lastRuntimeStatus: Map<string, { status: RuntimePodStatus; atMs: number }>;
  /** spec.activeDeadlineSeconds timers by pod UID (pod-syncer.ts). */
  readonly deadlineTimers: Map<string, TimerHandle>;
  readonly sources: PodSource[];
  readonly sourceNames: string[];
  /** Sources that must deliver a full set before sourcesReady (upstream sourcesReady). */
  readonly expectedSources: string[];
  /** Stops the periodic loops. */
  readonly stoppers: (() => void)[];
  readonly state: LifecycleState;
}

/** Hands the pod to its worker (upstream podWorkers.UpdatePod), remembering it while it terminates. */
export function dispatch(ctx: LifecycleContext, pod: Pod, type: UpdateType): void {
  ctx.known.set(pod.metadata.uid, pod);
  ctx.workers.updatePod({ type, pod });
}
