// Types and configuration of the pod lifecycle (src/pod/lifecycle.ts), split out so the interface the
// agent, eviction and the HTTP server code against reads on its own.
import type { EventRecorder } from "../events/types.ts";
import type { AllocationManager } from "./allocation/manager.ts";
import type { UserNsService } from "./userns/index.ts";
import type { OrphanedPodDirs } from "./orphaned-pod-dirs.ts";
import { networkInterfaces } from "node:os";
import { durationMs } from "../config/duration.ts";
import type { Clock } from "../clock.ts";
import type { PodLifecycleMetrics } from "./lifecycle-metrics.ts";
import type { ManifestError } from "./manifest.ts";
import type { PodLike } from "./pod-like.ts";
import type { ProbeRunner } from "./prober/manager.ts";
import type { ExecSync } from "./prober/probes.ts";
import type { PodCgroupResizer, Runtime } from "./runtime.ts";
import type { PodUpdate } from "./sources/update.ts";
import type { Pod, PodStatus } from "./types.ts";

export interface PodLifecycleConfig {
  nodeName: string;
  /** Node IP for status.hostIP (and podIP of hostNetwork pods); default: first non-internal IPv4. */
  hostIP?: string;
  syncFrequencyMs?: number;
  housekeepingPeriodMs?: number;
  relistPeriodMs?: number;
  /** Delay before retrying a failed sync (upstream backOffPeriod). */
  errorRetryMs?: number;
  staticPodPath?: string;
  fileCheckFrequencyMs?: number;
  staticPodURL?: string;
  staticPodURLHeader?: Record<string, string | string[]>;
  httpCheckFrequencyMs?: number;
  /**
   * Sources fed through handleUpdate (e.g. "api") that must deliver a SET before housekeeping may
   * treat unknown runtime pods as orphans (upstream sourcesReady).
   */
  extraSources?: string[];
  /** Container log rotation (containerLogMaxSize/containerLogMaxFiles); needs Runtime.listContainerLogs. */
  containerLogMaxSize?: string;
  containerLogMaxFiles?: number;
  containerLogMonitorIntervalMs?: number;
  /** How long the runtime may not answer before it is "down" (upstream maxWaitForContainerRuntime, 30 s). */
  runtimeDownGraceMs?: number;
  /** Container GC period (upstream ContainerGCPeriod, 1 min); needs Runtime.garbageCollect. */
  containerGcPeriodMs?: number;
}

/** Pod cgroup management the lifecycle needs (implemented by src/pod/cm/container-manager.ts). */
export interface PodCgroups {
  /** Creates the pod's cgroup (QoS-placed, limits written); returns the CRI cgroup_parent. */
  ensurePod(pod: Pod): Promise<string | undefined>;
  removePod(uid: string): Promise<void>;
  /** UIDs that have a pod cgroup (for orphan cleanup). */
  listPodUids?(): Promise<string[]>;
  /** In-place resize (upstream GetPodCgroupConfig / SetPodCgroupConfig, and the pod's memory usage). */
  resize?: PodCgroupResizer;
}

/** Upstream lifecycle.PodAdmitHandler: e.g. the eviction manager refusing BestEffort pods under MemoryPressure. */
/** `waitFor` (admitted): start the pod once it settles (pods preempted for it are stopped first). */
export type PodAdmitHandler = (pod: PodLike, activePods: PodLike[]) => { admit: boolean; reason?: string; message?: string; waitFor?: Promise<unknown> };

export interface KillPodRequest {
  reason: string;
  message: string;
  annotations?: Record<string, string>;
  /** The DisruptionTarget condition to record (eviction's KillStatus.condition); default TerminationByKubelet. */
  condition?: { type: "DisruptionTarget"; status: "True"; reason: string; message: string };
}

export interface PodLifecycle {
  start(): Promise<void>;
  /** Stops loops and sources; containers keep running (a restarted bunlet adopts them). */
  stop(): Promise<void>;
  /** Feeds a PodUpdate from a source not built here (e.g. an API-server source). */
  handleUpdate(u: PodUpdate): void;
  /** Pods that are admitted and not terminal: what eviction ranks and admission counts. */
  activePods(): Pod[];
  /** Stops a pod through its worker and records Failed/<reason>; resolves when its containers are stopped. It is never restarted. */
  killPod(pod: PodLike, gracePeriodOverrideSeconds: number | undefined, req: KillPodRequest): Promise<void>;
  /** v1 Pods with status filled in, sorted by namespace/name (served by /pods). */
  listPodsForApi(): Pod[];
  getPodStatus(uid: string): PodStatus | undefined;
  /** Its containers are stopped and its cgroup removed (eviction's podCleanedUp). */
  isPodCleanedUp(pod: PodLike): boolean;
  addAdmitHandler(h: PodAdmitHandler): void;
  /** Current manifest errors of the file/http sources. */
  manifestErrors(): ManifestError[];
  /** True once every configured source delivered its first full set. */
  sourcesReady(): boolean;
  /** For tests: run one housekeeping pass / wait until workers are idle. */
  housekeeping(): Promise<void>;
  /** One container GC pass now (it also runs every containerGcPeriodMs). */
  containerGc(): Promise<void>;
  whenIdle(): Promise<void>;
  /** PLEG relist health (upstream: unhealthy when no relist for 3 minutes). */
  plegHealthy(): boolean;
  /** "container runtime is down: …" once no relist succeeded for the grace; else undefined. */
  runtimeError(): string | undefined;
  /** /healthz checks: syncloop (upstream), pleg and runtime (beyond upstream's healthz). */
  healthChecks(): { name: string; check(): string | undefined }[];
  /** The pods the sources want (the pod manager's set, as the sources gave them). */
  pods(): Pod[];
  /** A pod of this full name ("name_namespace") was removed by its source and is still stopping. */
  isPodTerminatingByFullName(fullName: string): boolean;
  /** Syncs at once the pods `match` selects (those waiting for an image that just arrived or a volume just reported in use), as the periodic sync would. */
  syncPodsNow(match: (pod: Pod) => boolean): void;
  /** Calls `fn(uid)` when a pod's status is set or its worker finished (cleanup done); must not block. Returns an unsubscribe. */
  onStatusChange(fn: (uid: string) => void): () => void;
}

export interface PodLifecycleDeps {
  runtime: Runtime;
  clock?: Clock;
  config: PodLifecycleConfig;
  cgroups?: PodCgroups;
  /** Exec probes; defaults to runtime.execSync. */
  execSync?: ExecSync;
  probeRunner?: ProbeRunner;
  admitHandlers?: PodAdmitHandler[];
  fetch?: typeof fetch;
  metrics?: PodLifecycleMetrics;
  /** Pod events (admission rejections, probes, DeadlineExceeded); see also the runtime's. */
  events?: EventRecorder;
  /** In-place resize: the pods' allocated resources and resize conditions (src/pod/allocation). */
  allocation?: AllocationManager;
  /** The pods' user namespace ranges (src/pod/userns): released when a pod terminates or is an orphan. */
  userns?: Pick<UserNsService, "release" | "cleanupOrphanedPodUsernsAllocations">;
  /** Removes the directories under <rootDir>/pods of pods gone while bunlet was away (orphaned-pod-dirs.ts). */
  orphanedPodDirs?: OrphanedPodDirs;
}

/** The KubeletConfiguration fields the pod lifecycle itself reads (v1beta1 names, Go durations). */
export interface LifecycleKubeletConfig {
  staticPodPath?: string;
  staticPodURL?: string;
  staticPodURLHeader?: Record<string, string[]>;
  syncFrequency?: string;
  fileCheckFrequency?: string;
  httpCheckFrequency?: string;
  containerLogMaxSize?: string;
  containerLogMaxFiles?: number;
  containerLogMonitorInterval?: string;
}

/** Maps KubeletConfiguration (v1beta1 field names, Go durations) onto the lifecycle config. */
export function lifecycleConfigFromKubelet(cfg: LifecycleKubeletConfig, node: { nodeName: string; hostIP?: string }): PodLifecycleConfig {
  const ms = (s: string | undefined, dflt: number) => (s ? durationMs(s) : dflt);
  return {
    nodeName: node.nodeName,
    hostIP: node.hostIP,
    staticPodPath: cfg.staticPodPath || undefined,
    staticPodURL: cfg.staticPodURL || undefined,
    staticPodURLHeader: cfg.staticPodURLHeader,
    syncFrequencyMs: ms(cfg.syncFrequency, 60_000),
    fileCheckFrequencyMs: ms(cfg.fileCheckFrequency, 20_000),
    httpCheckFrequencyMs: ms(cfg.httpCheckFrequency, 20_000),
    containerLogMaxSize: cfg.containerLogMaxSize || "10Mi",
    containerLogMaxFiles: cfg.containerLogMaxFiles || 5,
    containerLogMonitorIntervalMs: ms(cfg.containerLogMonitorInterval, 10_000),
  };
}

/**
 * First non-internal IPv4 address (upstream picks the default-route address; close enough here).
 * Kept for 10 s: every pod sync asks for it, and listing the interfaces was the largest single cost of
 * an idle resync of 100 pods; upstream refreshes node addresses every 10 s as well.
 */
export function defaultHostIP(nowMs: number = performance.now()): string | undefined {
  if (hostIPCache && nowMs - hostIPCache.atMs < HOST_IP_TTL_MS) return hostIPCache.ip;
  let ip: string | undefined;
  outer: for (const addrs of Object.values(networkInterfaces()))
    for (const a of addrs ?? [])
      if (a.family === "IPv4" && !a.internal) {
        ip = a.address;
        break outer;
      }
  hostIPCache = { ip, atMs: nowMs };
  return ip;
}
const HOST_IP_TTL_MS = 10_000;
let hostIPCache: { ip: string | undefined; atMs: number } | undefined;
