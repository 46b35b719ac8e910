// What kuberuntime's parts share (upstream: the kubeGenericRuntimeManager struct of
// kuberuntime_manager.go): one record with the CRI client, clock, directories, node facts and caches,
// built once by createKubeRuntime (manager.ts) and passed to container.ts, sandbox.ts, image.ts, logs.ts…
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { Clock } from "../../clock.ts";
import type { CriClient } from "../../cri/client.ts";
import type { UserNamespace } from "../../cri/types.ts";
import { containerRef, type ContainerList, type EventRecorder } from "../../events/index.ts";
import type { ContainerBackOff } from "../backoff.ts";
import type { ImagePuller } from "../images/puller.ts";
import type { DnsSettings } from "../network/index.ts";
import type { PodLike } from "../pod-like.ts";
import type { RuntimePod } from "../runtime.ts";
import type { CSIVolumeManager } from "../volumes/csi/index.ts";
import type { PodApiObjects } from "../volumes/index.ts";
import type { PodRef } from "./config.ts";
import type { ContainerGcPolicy } from "./container-gc.ts";
import type { createContainerHooks } from "./container-hooks.ts";
import type { DirectSignaller } from "./direct-signal.ts";
import type { ContainerCgroupHost } from "./resources.ts";
import type { Slots } from "./slots.ts";
import type { DeviceRunOptions } from "./device-options.ts";
import type { KubeContainer, KubePod } from "./types.ts";

export interface KubeRuntimeOptions {
  cri: CriClient;
  /** RunPodSandbox, CreateContainer and StartContainer calls in flight at once (default 4; see slots.ts). */
  concurrentStartCalls?: number;
  /** The image puller (serializeImagePulls, maxParallelImagePulls: images/puller.ts); default one pull at a time. */
  imagePuller?: ImagePuller;
  /** kubelet podLogsDir (default /var/log/pods). */
  podLogsDir?: string;
  /** kubelet rootDir, for default emptyDir volumes under <rootDir>/pods/<uid>/volumes (default /var/lib/kubelet). */
  rootDir?: string;
  /** Node memory capacity for the Burstable oom_score_adj (default: MemTotal of /proc/meminfo). */
  memoryCapacityBytes?: number;
  /** cgroup v2 / swap controller for LinuxContainerResources.unified (default: detected at /sys/fs/cgroup). */
  cgroupHost?: ContainerCgroupHost;
  /** The CPU manager's cpuset of a container by pod UID and name ("" = none) (src/pod/cm/cpumanager). */
  cpuAffinity?: (podUid: string, containerName: string) => string;
  /** Sandbox cgroup parent when SyncPodOptions.cgroupParent is not given (e.g. from the QoS cgroup manager). */
  cgroupParent?: (pod: PodLike) => string | undefined;
  /**
   * Node allocatable memory, the upper bound of a `medium: Memory` emptyDir's tmpfs (upstream
   * calculateEmptyDirMemorySize); default: memoryCapacityBytes.
   */
  nodeAllocatableMemoryBytes?: () => number;
  /**
   * Host path of a pod volume; default: hostPath.path, or a directory per emptyDir under rootDir
   * (a tmpfs for medium Memory, unmounted by removePod).
   */
  volumeHostPath?: (pod: KubePod, volumeName: string) => string | undefined;
  /** Stages, publishes and tears down CSI volumes (PVs with spec.csi, inline csi volumes); absent: they fail to mount. */
  csi?: CSIVolumeManager;
  /** Epoch ms, for back-off. */
  now?: () => number;
  /**
   * Signals a stopping container's init directly right before its StopContainer, for stops that grant
   * ≤ 1 s (see direct-signal.ts); kept informed of the running containers here.
   */
  directSignal?: DirectSignaller;
  /** Times a volume operation (storage_operation_duration_seconds); runs `fn` unchanged without metrics. */
  storageOperation?: StorageOperation;
  /** Node IP: where a hostNetwork pod's httpGet lifecycle hooks go when they name no host. */
  hostIP?: string;
  /** Periodic container GC policy (default upstream's: MinAge 0, MaxPerPodContainer 1, MaxContainers -1). */
  containerGcPolicy?: ContainerGcPolicy;
  /** HTTP for httpGet lifecycle hooks (tests). */
  fetch?: typeof fetch;
  /** Timers of preStop hooks and termination ordering (default: the real clock). */
  clock?: Clock;
  /** Directory of Localhost seccomp profiles (default <rootDir>/seccomp, as upstream). */
  seccompProfileRoot?: string;
  /** KubeletConfiguration seccompDefault: RuntimeDefault seccomp for containers naming no profile. */
  seccompDefault?: boolean;
  /**
   * The API objects a pod references (secrets, configMaps, service account tokens), fetched before
   * each sync (API-server mode); without it such references fail as upstream's do without a kubeClient.
   */
  apiObjects?: PodApiObjectsSource;
  /** A warning event about a pod (reason, message). */
  onPodWarning?: (pod: KubePod, reason: string, message: string) => void;
  /** Container and image events (Pulling, Pulled, Created, Started, Killing, BackOff, Failed, …). */
  events?: EventRecorder;
  /** kubelet clusterDNS / clusterDomain / resolvConf (default: none, "", /etc/resolv.conf). */
  dns?: Partial<DnsSettings>;
  /** Write the managed /etc/hosts of pods (default true). */
  manageEtcHosts?: boolean;
  /**
   * The resources last applied to each container (upstream actuatedState, kept by the allocation
   * manager): a running container whose allocation differs is resized in place (resize.ts).
   * Without it, no container is resized.
   */
  actuated?: ActuatedResources;
  /**
   * A container's device plugin options (upstream GetDeviceRunContainerOptions: PreStartContainer
   * where the plugin asks, the devices' envs, mounts, device nodes, annotations); throws when the
   * devices cannot be had (the container is not created: CreateContainerConfigError).
   */
  deviceRunOptions?(pod: KubePod, container: KubeContainer): Promise<DeviceRunOptions | undefined>;
  /**
   * The pod's user namespace for its sandbox and containers (upstream runtimeHelper
   * GetOrCreateUserNamespaceMappings, src/pod/userns): mode POD with the pod's mappings for
   * hostUsers: false, else NODE; throws upstream's errors (the sandbox is not created). Without it none is sent.
   */
  userNamespaceMappings?(pod: KubePod, runtimeHandler: string): Promise<UserNamespace | undefined>;
  /** A sync created the sandbox of a hostUsers: false pod; `failed` when any of its steps failed (upstream's metrics). */
  userNamespacedPodStarted?(failed: boolean): void;
}

/** A container's requests and limits as quantity strings. */
export interface ContainerRequirements {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

/** upstream kuberuntime's actuatedState: what each container of a pod runs with. */
export interface ActuatedResources {
  get(uid: string, name: string): ContainerRequirements | undefined;
  set(uid: string, name: string, resources: ContainerRequirements): void;
  /** upstream InitializeActuatedPod: a pod with no record yet gets its containers' (allocated) resources. */
  initPod(pod: KubePod): void;
}

/** Fetches what a pod references from the API server (src/pod/apiobjects). */
export interface PodApiObjectsSource {
  resolve(pod: KubePod): Promise<PodApiObjects | undefined>;
  /** The pod's service environment variables (envvars/); throws while a pod from the API cannot have them yet. */
  serviceEnv?(pod: KubePod): ReadonlyMap<string, string>;
  /** The CRI runtime handler of the pod's RuntimeClass ("" for the default); throws upstream's lookup errors. */
  runtimeHandler?(pod: KubePod): Promise<string>;
  /** The pod is gone: its references (and their watches) are released. */
  forget(uid: string): void;
}

/** A volume plugin operation, named as upstream's storage metrics name them. */
export type StorageOperation = <T>(op: { operationName: "volume_mount" | "volume_unmount" | "map_volume"; volumePlugin: string }, fn: () => T) => T;
export const untimed: StorageOperation = (_op, fn) => fn();

export type ContainerHooks = ReturnType<typeof createContainerHooks>;

/** recordContainerEvent: an event on the pod, with the container's field path (spec.containers{name}). */
export type ContainerEventFn = (pod: KubePod | PodRef, name: string, type: "Normal" | "Warning", reason: string, message: string) => void;

/** What the last full listing (GetPods(all)) saw, so an unchanged runtime is answered without diffing. */
export interface RelistCache {
  /** Sandboxes the last full listing saw (see getPods). */
  sandboxesListed?: number;
  lastFull?: { sandboxes: ReadonlySet<object>; containers: ReadonlySet<object>; pods: RuntimePod[] };
}

export interface KubeRuntimeContext {
  readonly opts: KubeRuntimeOptions;
  readonly cri: CriClient;
  readonly clock: Clock;
  /** Epoch ms, for back-off. */
  readonly now: () => number;
  readonly podLogsDir: string;
  readonly rootDir: string;
  readonly memoryCapacityBytes: number;
  readonly cgroupHost: ContainerCgroupHost;
  readonly storageOperation: StorageOperation;
  readonly dns: DnsSettings;
  readonly seccomp: { seccompProfileRoot: string; seccompDefault: boolean };
  readonly events: EventRecorder;
  readonly containerEvent: ContainerEventFn;
  /** postStart / preStop hooks and killContainer (container-hooks.ts). */
  readonly hooks: ContainerHooks;
  /** Heavy pod-start calls in flight at once (slots.ts). */
  readonly startSlots: Slots;
  /** Upstream imageManager's back-off (10 s doubling to 5 min), keyed by pod UID and image. */
  readonly imageBackOff: ContainerBackOff;
  /** Upstream imageManager's puller: serial, or parallel up to maxParallelImagePulls. */
  readonly imagePuller: ImagePuller;
  /** The API objects fetched at a pod's latest sync, by UID. */
  readonly podObjects: Map<string, PodApiObjects>;
  /** Volumes set up at least once ("<uid>/<name>"), forgotten when the pod is removed. */
  readonly mountedVolumes: Set<string>;
  /** Failed volume set-ups in a row per pod UID: how soon the next sync tries again (volumeRetryDelayMs). */
  readonly mountFailures: Map<string, number>;
  /**
   * Running containers per pod UID as the last PLEG relist (getPods) or pod status saw them: an
   * eviction's first runtime call is then the StopContainer itself, not a listing (see killPod).
   */
  readonly knownRunning: Map<string, Map<string, string>>;
  /** Pod UIDs container GC saw in the runtime: their log directories go once they are gone. */
  readonly gcSeenUids: Set<string>;
  /** Log paths of running containers by ID (logs.ts). */
  readonly logPaths: Map<string, string>;
  readonly relist: RelistCache;
}

/**
 * 100 pods at once on 2 busy CPUs (scripts/bench/start100.ts, one lock hold, load 10–19 from other
 * work): 8 heavy calls in flight → RunPodSandbox 862 ms, StartContainer 595 ms on average, first
 * Running 2.6 s; 4 → 505 / 384 ms, first Running 1.6 s; 2 → 301 / 229 ms, first 1.6 s. The runtime
 * is CPU-bound here, so fewer in flight finish each pod sooner without costing the last one.
 */
export const DEFAULT_CONCURRENT_START_CALLS = 4;
/** Start calls of a pod further along go first (slots.ts): its container's start, then create, then a new sandbox. */
export const PRIORITY_SANDBOX = 0;
export const PRIORITY_CREATE = 1;
export const PRIORITY_START = 2;

/** A start slot a pod sync holds from its RunPodSandbox to its first container's start (or a pull). */
export interface HeldSlot {
  release?: () => void;
}

export function memTotalBytes(): number {
  try {
    const m = /^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The spec list declaring container `name` (containers when the pod is only a reference). */
function containerList(pod: KubePod | PodRef, name: string): ContainerList {
  if (!("spec" in pod)) return "containers";
  if ((pod.spec.initContainers ?? []).some((c) => c.name === name)) return "initContainers";
  if ((pod.spec.ephemeralContainers ?? []).some((c) => c.name === name)) return "ephemeralContainers";
  return "containers";
}

/** recordContainerEvent over the recorder: the pod, with the container's field path (spec.containers{name}). */
export function containerEventRecorder(events: EventRecorder): ContainerEventFn {
  return (pod, name, type, reason, message) => {
    const meta = "metadata" in pod ? pod.metadata : pod;
    events.event(
      containerRef({ metadata: { name: meta.name, namespace: meta.namespace, uid: meta.uid } }, name, containerList(pod, name)),
      type,
      reason,
      message,
    );
  };
}

/** The node's allocatable CPU and memory, for the downward API and a memory emptyDir's size. */
export function nodeAllocatable(ctx: KubeRuntimeContext): { cpuMilli: number; memoryBytes: number } {
  return { cpuMilli: availableParallelism() * 1000, memoryBytes: ctx.opts.nodeAllocatableMemoryBytes?.() ?? ctx.memoryCapacityBytes };
}
