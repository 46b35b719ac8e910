// The container-runtime interface the pod workers, PLEG and status manager use (upstream:
// kubecontainer.Runtime, implemented by kuberuntime over the CRI). PODS owns this file; CRI implements
// it in src/pod/kuberuntime/. Kept small: only what bunlet's pod lifecycle needs.
import type { ResourceConfig } from "./cgroups-config.ts";
import type { PodLike } from "./pod-like.ts";
import type { ClaimedVolume } from "./volumes/index.ts";

export type ContainerState = "created" | "running" | "exited" | "unknown";
export type SandboxState = "ready" | "notready";

export interface RuntimeContainerStatus {
  id: string;
  name: string;
  image: string;
  imageRef?: string;
  state: ContainerState;
  /** Epoch milliseconds; 0 when not applicable. */
  createdAtMs: number;
  startedAtMs: number;
  finishedAtMs: number;
  exitCode?: number;
  /** Runtime reason, e.g. "OOMKilled", "Error", "Completed". */
  reason?: string;
  message?: string;
  /** Attempt number from the container's CRI metadata (upstream restartCount source). */
  attempt: number;
  /** Hash of the container spec it was created from (label io.kubernetes.container.hash). */
  hash?: string;
}

export interface RuntimeSandboxStatus {
  id: string;
  attempt: number;
  state: SandboxState;
  createdAtMs: number;
  ip?: string;
}

export interface RuntimePodStatus {
  uid: string;
  name: string;
  namespace: string;
  /** Newest first, as upstream. */
  sandboxes: RuntimeSandboxStatus[];
  containers: RuntimeContainerStatus[];
}

/** A pod as seen in the runtime (grouped by the io.kubernetes.pod.uid label). */
export interface RuntimePod {
  uid: string;
  name: string;
  namespace: string;
  sandboxIds: string[];
  /** How many of its sandboxes are ready (kubelet_running_pods counts pods with one). */
  readySandboxes?: number;
  containers: { id: string; name: string; state: ContainerState }[];
}

export interface SyncPodResult {
  /** Per-container errors, e.g. CrashLoopBackOff, ErrImagePull, CreateContainerError. */
  errors: { container: string; reason: string; message: string }[];
  /**
   * The sync had nothing to do in the runtime (no sandbox, container or kill action): the status it
   * was given still holds, so the caller need not ask the runtime again (asking would cost an idle
   * resync of 100 pods 4 CRI calls per pod per minute).
   */
  unchanged?: boolean;
  /** Retry the sync this soon rather than after the error back-off (a volume set-up that failed). */
  retryAfterMs?: number;
  /** An in-place resize failed (upstream ResizePodInPlace sync result): the PodResizeInProgress Error message. */
  resizeError?: string;
}

/** Restart back-off keyed by pod uid + container name (10 s doubling to 5 min, reset after 10 min). */
export interface BackOff {
  /**
   * True while `key` is backing off. `sinceMs` (optional, upstream IsInBackOffSince) is the event the
   * back-off counts from — the container's finishedAt; without it the last `next()` call is used.
   */
  isInBackOff(key: string, nowMs: number, sinceMs?: number): boolean;
  next(key: string, nowMs: number): void;
  /** Current back-off delay of `key` in ms (0 when none), for "back-off 20s restarting failed container". */
  delayMs?(key: string): number;
}

/**
 * Extra inputs of one SyncPod call (additive; every field optional). Upstream computePodActions reads
 * these from the liveness/startup results managers and the pod container manager.
 */
export interface SyncPodOptions {
  /**
   * Containers (by name) whose liveness or startup probe failed: kill them (with the pod's grace
   * period) and restart them per restartPolicy; the message is the kill reason upstream logs/records,
   * e.g. "Container app failed liveness probe, will be restarted".
   */
  unhealthy?: { container: string; message: string; probe?: "liveness" | "startup" }[];
  /**
   * Whether a container's startup probe passed for its current instance (undefined: no startup probe,
   * counts as started): a sidecar gates the next init container on it (upstream startupManager).
   */
  started?: (container: string) => boolean | undefined;
  /** cgroup parent for the sandbox (LinuxPodSandboxConfig.cgroup_parent), e.g. "/kubepods/burstable/pod<uid>". */
  cgroupParent?: string;
  /** The pod cgroup an in-place resize updates (none without pod cgroups: only the containers are). */
  podCgroup?: PodCgroupResizer;
}

/** What an in-place resize reads and writes of a pod's cgroup. */
export interface PodCgroupResizer {
  /** The cpu and memory values last written to the pod's cgroup. */
  config(pod: PodLike): ResourceConfig | undefined;
  /** Writes the given values (the rest is left as is). */
  set(pod: PodLike, cfg: ResourceConfig): Promise<void>;
  /** The pod cgroup's memory usage in bytes; undefined when unreadable. */
  memoryUsageBytes(pod: PodLike): Promise<number | undefined>;
}

/** Result of a command run in a container (CRI ExecSync), used by exec probes. */
export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface Runtime {
  /** The PVs of the pod's claims as its last sync resolved them, by volume name (volume stats). */
  podClaims?(uid: string): ReadonlyMap<string, ClaimedVolume | Error> | undefined;
  /** Runtime name and version (CRI Version). */
  version(): Promise<{ runtimeName: string; runtimeVersion: string }>;
  /** All pods the runtime knows, including exited ones (for PLEG relist and adoption). */
  getPods(all: boolean): Promise<RuntimePod[]>;
  getPodStatus(uid: string, name: string, namespace: string): Promise<RuntimePodStatus>;
  /** Brings the pod to its desired state (upstream SyncPod: computePodActions, then act). */
  syncPod(pod: PodLike, status: RuntimePodStatus, backOff: BackOff, options?: SyncPodOptions): Promise<SyncPodResult>;
  /**
   * Stops every container (SIGTERM with gracePeriodSeconds, then kill) and the sandbox. With the pod's
   * `spec`, preStop hooks run first (inside the grace period) and sidecars stop after the regular containers.
   */
  killPod(pod: { uid: string; name: string; namespace: string }, gracePeriodSeconds: number, spec?: PodLike): Promise<void>;
  /** Removes stopped containers and sandboxes of a pod (after termination). */
  removePod(uid: string): Promise<void>;
  /**
   * Unmounts and deletes a terminated pod's volumes (emptyDir data, memory-backed tmpfs) while the
   * pod itself stays known, e.g. evicted with its status kept: upstream's volume manager tears down
   * volumes of terminated pods, which is what lets disk pressure from an emptyDir recover.
   */
  tearDownVolumes?(uid: string): Promise<void>;
  /**
   * One container GC pass (upstream containerGC.GarbageCollect, every minute): dead containers beyond
   * the policy, dead sandboxes and log directories of removed pods. Optional.
   */
  garbageCollect?(pods: { contentRemovable(uid: string): boolean; allSourcesReady: boolean }): Promise<void>;
  /** UIDs of pods another live agent runs on this runtime (kuberuntime/owner.ts), as of the last full listing: never orphans here. */
  foreignPodUids?(): ReadonlySet<string>;
  /** Runs `cmd` in a running container, failing with a timeout error after `timeoutMs` (CRI ExecSync). */
  execSync?(containerId: string, cmd: string[], timeoutMs: number): Promise<ExecResult>;
  /**
   * Running containers with their absolute log file (CRI ContainerStatus.log_path joined with the
   * sandbox log_directory), for log rotation. Optional; without it logs are not rotated.
   */
  listContainerLogs?(): Promise<{ containerId: string; logPath: string }[]>;
  /** Asks the runtime to reopen a container's log file after rotation (CRI ReopenContainerLog). */
  reopenContainerLog?(containerId: string): Promise<void>;
}
