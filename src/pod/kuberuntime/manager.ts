// The CRI-backed container runtime (upstream kubeGenericRuntimeManager): implements src/pod/runtime.ts
// over a CriClient. syncPod = computePodActions (pure) + carrying the actions out here.
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { CriClient } from "../../cri/client.ts";
import type { ContainerFilter, ContainerStatus as CriContainerStatus, Image as CriImage, PodSandboxConfig, PodSandboxFilter } from "../../cri/types.ts";
import { kv, log } from "../../log.ts";
import { realClock, type Clock } from "../../clock.ts";
import { defaultHostIP } from "../lifecycle-types.ts";
import { type PodLike, podUid } from "../pod-like.ts";
import type {
  BackOff,
  ExecResult,
  Runtime,
  RuntimeContainerStatus,
  RuntimePod,
  RuntimePodStatus,
  SyncPodOptions,
  SyncPodResult,
} from "../runtime.ts";
import { createSlots } from "./slots.ts";
import { type PodActions, computePodActions, latestStatus } from "./compute-actions.ts";
import { type ContainerGcPolicy, DEFAULT_CONTAINER_GC_POLICY, runContainerGc } from "./container-gc.ts";
import { type ConfigInputs, type PodRef, generateContainerConfig, generatePodSandboxConfig, podLogsDirectory } from "./config.ts";
import type { DirectSignaller } from "./direct-signal.ts";
import { mountMemoryVolume, podDir, setUpEmptyDir, tearDownPodDir } from "./empty-dir.ts";
import { createContainerHooks } from "./container-hooks.ts";
import { availableParallelism } from "node:os";
import { cleanSubPaths, lookupSecret, prepareSafeSubPath, setUpPodVolume, volumePluginName, type PodApiObjects, type PodVolumeSpec } from "../volumes/index.ts";
import { createDockerKeyring, dockerConfigsFromSecrets } from "../../credentialprovider/index.ts";
import { ContainerConfigError } from "./config.ts";
import type { DnsSettings } from "../network/index.ts";
import { DEFAULT_DNS_SETTINGS, sandboxDnsConfig, writePodHostsFile } from "./pod-network.ts";
import { imageUserOf } from "../security/index.ts";
import { signalName } from "./stop-signal.ts";
import { createBackOff } from "../backoff.ts";
import { CONTAINER_NAME_LABEL, POD_UID_LABEL, podIdentityFromLabels } from "./labels.ts";
import { toContainerState, toRuntimeContainerStatus, toRuntimeSandboxStatus } from "./status.ts";
import { containerTerminationMessage, createTerminationMessageFile, podContainersDir, withTerminationMessage } from "./termination-message.ts";
import {
  MINIMUM_GRACE_PERIOD_SECONDS,
  containerSpec,
  createTerminationOrdering,
  isSidecar,
  terminationGracePeriod,
} from "./termination.ts";
import { type KubeContainer, type KubePod, asKubePod } from "./types.ts";
import { noopRecorder, podRef, reasons, type EventRecorder } from "../../events/index.ts";
import { detectContainerCgroupHost } from "./cgroup-host.ts";
import type { ContainerCgroupHost } from "./resources.ts";

/** Upstream minimumGracePeriodInSeconds: containers always get this long to stop, unless overridden. */
export { MINIMUM_GRACE_PERIOD_SECONDS };

export interface KubeRuntimeOptions {
  cri: CriClient;
  /** RunPodSandbox, CreateContainer and StartContainer calls in flight at once (default 4; see slots.ts). */
  concurrentStartCalls?: number;
  /** kubelet podLogsDir (default /var/log/pods). */
  podLogsDir?: string;
  /** kubelet rootDir, for default emptyDir volumes under <rootDir>/pods/<uid>/volumes (default /var/lib/kubelet). */
  rootDir?: string;
  /** Node memory capacity for the Burstable oom_score_adj (default: MemTotal of /proc/meminfo). */
  memoryCapacityBytes?: number;
  /** cgroup v2 / swap controller for LinuxContainerResources.unified (default: detected at /sys/fs/cgroup). */
  cgroupHost?: ContainerCgroupHost;
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
}

/** Fetches what a pod references from the API server (src/pod/apiobjects). */
export interface PodApiObjectsSource {
  resolve(pod: KubePod): Promise<PodApiObjects | undefined>;
  /** The pod is gone: its references (and their watches) are released. */
  forget(uid: string): void;
}

/** A volume plugin operation, named as upstream's storage metrics name them. */
export type StorageOperation = <T>(op: { operationName: "volume_mount" | "volume_unmount"; volumePlugin: string }, fn: () => T) => T;
const untimed: StorageOperation = (_op, fn) => fn();

function memTotalBytes(): number {
  try {
    const m = /^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function refOf(pod: PodLike): PodRef {
  return { name: pod.metadata.name, namespace: pod.metadata.namespace ?? "", uid: podUid(pod) };
}

/**
 * 100 pods at once on 2 busy CPUs (scripts/bench/start100.ts, one lock hold, load 10–19 from other
 * work): 8 heavy calls in flight → RunPodSandbox 862 ms, StartContainer 595 ms on average, first
 * Running 2.6 s; 4 → 505 / 384 ms, first Running 1.6 s; 2 → 301 / 229 ms, first 1.6 s. The runtime
 * is CPU-bound here, so fewer in flight finish each pod sooner without costing the last one.
 */
const DEFAULT_CONCURRENT_START_CALLS = 4;
/** Start calls of a pod further along go first (slots.ts): its container's start, then create, then a new sandbox. */
const PRIORITY_SANDBOX = 0;
const PRIORITY_CREATE = 1;
const PRIORITY_START = 2;

/** A start slot a pod sync holds from its RunPodSandbox to its first container's start (or a pull). */
interface HeldSlot {
  release?: () => void;
}

const backOffKey = (uid: string, container: string) => `${uid}/${container}`;

export function createKubeRuntime(opts: KubeRuntimeOptions): Runtime & { execSync: NonNullable<Runtime["execSync"]> } {
  const cri = opts.cri;
  const podLogsDir = opts.podLogsDir ?? "/var/log/pods";
  const rootDir = opts.rootDir ?? "/var/lib/kubelet";
  const memoryCapacityBytes = opts.memoryCapacityBytes ?? memTotalBytes();
  const cgroupHost = opts.cgroupHost ?? detectContainerCgroupHost();
  const now = opts.now ?? Date.now;
  const storageOperation = opts.storageOperation ?? untimed;
  const tearDown = (uid: string, sub?: "volumes") =>
    storageOperation({ operationName: "volume_unmount", volumePlugin: "kubernetes.io/empty-dir" }, () => tearDownPodDir(rootDir, uid, sub));
  const clock = opts.clock ?? realClock;
  const dns: DnsSettings = { ...DEFAULT_DNS_SETTINGS, ...opts.dns };
  const seccomp = { seccompProfileRoot: opts.seccompProfileRoot ?? join(rootDir, "seccomp"), seccompDefault: opts.seccompDefault === true };
  const events = opts.events ?? noopRecorder;
  /** recordContainerEvent: the pod, with the container's field path (spec.containers{name}). */
  const containerEvent = (pod: KubePod | PodRef, name: string, type: "Normal" | "Warning", reason: string, message: string) => {
    const meta = "metadata" in pod ? pod.metadata : pod;
    const init = "spec" in pod && (pod.spec.initContainers ?? []).some((c) => c.name === name);
    events.event(podRef({ metadata: { name: meta.name, namespace: meta.namespace, uid: meta.uid } }, name, init), type, reason, message);
  };
  /** Pod UIDs container GC saw in the runtime: their log directories go once they are gone. */
  const gcSeenUids = new Set<string>();
  const execSyncRaw = async (containerId: string, cmd: string[], timeoutSeconds: number) => {
    const r = await cri.execSync(containerId, cmd, timeoutSeconds);
    const dec = new TextDecoder();
    return { exitCode: r.exitCode, stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
  };

  const defaultVolumeHostPath = (pod: KubePod, volumeName: string): string | undefined => {
    const v = pod.spec.volumes?.find((x) => x.name === volumeName);
    if (!v) return undefined;
    const allocatableMemory = opts.nodeAllocatableMemoryBytes?.() ?? memoryCapacityBytes;
    if (v.emptyDir) return setUpEmptyDir(rootDir, pod, volumeName, v.emptyDir, allocatableMemory);
    // upstream: the secret/configMap/downwardAPI/projected SetUp ends with SetVolumeOwnership (read-only
    // volumes) whenever the writer wrote (setUpPodVolume's fsGroup); hostPath never.
    return setUpPodVolume(rootDir, v as PodVolumeSpec, {
      pod,
      nodeAllocatable: nodeAllocatable(),
      objects: podObjects.get(podUid(pod)),
      mountMemory: (dir) => mountMemoryVolume(dir, pod, allocatableMemory),
      fsGroup: pod.spec.securityContext?.fsGroup,
    });
  };
  /** The API objects fetched at a pod's latest sync, by UID. */
  const podObjects = new Map<string, PodApiObjects>();
  const nodeAllocatable = () => ({ cpuMilli: availableParallelism() * 1000, memoryBytes: opts.nodeAllocatableMemoryBytes?.() ?? memoryCapacityBytes });

  /**
   * Upstream WaitForAttachAndMount before the sandbox: every volume set up (hostPath type checked,
   * downward API files written); the first failure is returned as upstream's FailedMount message.
   */
  function setUpVolumes(pod: KubePod): string | undefined {
    if (opts.volumeHostPath) return undefined;
    const uid = podUid(pod);
    for (const v of pod.spec.volumes ?? []) {
      try {
        // Timed here, once per pod sync, as upstream's volume manager mounts (containers only reference).
        storageOperation({ operationName: "volume_mount", volumePlugin: volumePluginName(v) ?? "unknown" }, () => defaultVolumeHostPath(pod, v.name));
        mountedVolumes.add(`${uid}/${v.name}`);
      } catch (e) {
        const message = `MountVolume.SetUp failed for volume "${v.name}" : ${(e as Error).message}`;
        // A volume set up before stays mounted with its last good files (a refresh that fails — a
        // deleted secret, the API server away — does not stop the pod), as upstream's volume manager.
        if (!mountedVolumes.has(`${uid}/${v.name}`)) return message;
        log.warn(`volume refresh failed; keeping its last contents ${kv({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, event: "FailedMount", message })}`);
        events.event(podRef(pod), "Warning", reasons.FailedMountVolume, message);
      }
    }
    return undefined;
  }
  /** Volumes set up at least once ("<uid>/<name>"), forgotten when the pod is removed. */
  const mountedVolumes = new Set<string>();

  function inputsFor(pod: KubePod, cgroupParent: string | undefined): ConfigInputs {
    const volumeHostPath = opts.volumeHostPath ?? defaultVolumeHostPath;
    return {
      podLogsDir,
      cgroupParent,
      memoryCapacityBytes,
      seccomp,
      cgroupHost,
      terminationMessageFile: (name) => createTerminationMessageFile(rootDir, podUid(pod), name),
      clusterDomain: dns.clusterDomain,
      volumeHostPath: (_ref, name) => volumeHostPath(pod, name),
      prepareSubPath: (volumePath, subPath, volumeName, containerName, volumeMountIndex) =>
        prepareSafeSubPath({ volumePath, subPath, podDir: podDir(rootDir, podUid(pod)), volumeName, containerName, volumeMountIndex }),
      objects: podObjects.get(podUid(pod)),
      onWarning: (reason, message) => opts.onPodWarning?.(pod, reason, message),
      readOnlyVolume: (name) => {
        const v = pod.spec.volumes?.find((x) => x.name === name) as PodVolumeSpec | undefined;
        return !!(v?.downwardAPI || v?.projected || v?.secret || v?.configMap);
      },
    };
  }

  async function containerStatuses(filter: { labelSelector: Record<string, string> }): Promise<RuntimeContainerStatus[]> {
    const list = await cri.listContainers(filter);
    const out: RuntimeContainerStatus[] = [];
    for (const c of list) {
      // A container removed between list and status is simply gone.
      const st = await cri.containerStatus(c.id).catch(() => undefined);
      if (!st?.status) continue;
      const cs = st.status as CriContainerStatus;
      const rs = toRuntimeContainerStatus(cs);
      // upstream convertToKubeContainerStatus: an exited container's termination message (file or log tail).
      if (rs.state === "exited") {
        const message = withTerminationMessage(rs.message, containerTerminationMessage(cs));
        if (message) rs.message = message;
      }
      out.push(rs);
    }
    return out.sort((a, b) => b.createdAtMs - a.createdAtMs);
  }

  async function getPodStatus(uid: string, name: string, namespace: string): Promise<RuntimePodStatus> {
    const selector = { labelSelector: { [POD_UID_LABEL]: uid } };
    const sandboxes = (await cri.listPodSandbox(selector)).sort((a, b) => b.createdAt - a.createdAt);
    const statuses = [];
    for (const [i, s] of sandboxes.entries()) {
      // Only the newest sandbox's network matters (pod IP); others are history.
      if (i === 0 && s.state === "SANDBOX_READY") {
        const st = await cri.podSandboxStatus(s.id).catch(() => undefined);
        statuses.push(toRuntimeSandboxStatus(st?.status ?? s));
      } else {
        statuses.push(toRuntimeSandboxStatus(s));
      }
    }
    const containers = await containerStatuses(selector);
    noteRunning(uid, containers);
    retainRunning();
    return { uid, name, namespace, sandboxes: statuses, containers };
  }

  /** Sandboxes the last full listing saw (see getPods). */
  let sandboxesListed: number | undefined;
  async function getPods(all: boolean): Promise<RuntimePod[]> {
    const sandboxFilter: PodSandboxFilter | undefined = all ? undefined : { state: { state: "SANDBOX_READY" } };
    const containerFilter: ContainerFilter | undefined = all ? undefined : { state: { state: "CONTAINER_RUNNING" } };
    let sandboxes;
    let containers;
    if (all && sandboxesListed === 0) {
      // An empty node's relist: no sandbox means no container (a container lives in a sandbox and
      // goes before it), so the containers are listed only once a sandbox shows — one CRI call a
      // second instead of two on an idle empty node.
      sandboxes = await cri.listPodSandbox(sandboxFilter);
      containers = sandboxes.length === 0 ? [] : await cri.listContainers(containerFilter);
    } else [sandboxes, containers] = await Promise.all([cri.listPodSandbox(sandboxFilter), cri.listContainers(containerFilter)]);
    if (all) sandboxesListed = sandboxes.length;
    // The CRI codec hands out the same (frozen) object for an unchanged entry: when every entry of
    // both lists is the one of the last full listing, nothing changed and its pods are returned as
    // they were — the same array, which tells the PLEG there is nothing to diff. In any
    // order: containerd lists its stores in Go's random map order, a new order at every call.
    if (all && lastFull && sameEntries(lastFull.sandboxes, sandboxes) && sameEntries(lastFull.containers, containers)) return lastFull.pods;
    const pods = new Map<string, RuntimePod>();
    const podFor = (labels: Record<string, string>): RuntimePod | undefined => {
      const id = podIdentityFromLabels(labels);
      if (!id) return undefined; // not created by a kubelet: not ours to manage
      let p = pods.get(id.uid);
      if (!p) {
        p = { ...id, sandboxIds: [], containers: [] };
        pods.set(id.uid, p);
      }
      return p;
    };
    for (const s of sandboxes) {
      const p = podFor(s.labels);
      if (!p) continue;
      p.sandboxIds.push(s.id);
      if (s.state === "SANDBOX_READY") p.readySandboxes = (p.readySandboxes ?? 0) + 1;
    }
    for (const c of containers) {
      podFor(c.labels)?.containers.push({
        id: c.id,
        name: c.metadata?.name || c.labels[CONTAINER_NAME_LABEL] || "",
        state: toContainerState(c.state),
      });
    }
    // Every running container is in this listing: it replaces what was known.
    for (const uid of knownRunning.keys()) if (!pods.has(uid)) knownRunning.delete(uid);
    for (const p of pods.values()) noteRunning(p.uid, p.containers);
    retainRunning();
    const out = [...pods.values()];
    if (all) lastFull = { sandboxes: new Set(sandboxes), containers: new Set(containers), pods: out };
    return out;
  }
  let lastFull: { sandboxes: ReadonlySet<object>; containers: ReadonlySet<object>; pods: RuntimePod[] } | undefined;
  // The same set: as many, each one held, none twice (ids are unique; the last check is for a runtime that breaks that).
  const sameEntries = (last: ReadonlySet<object>, now: readonly object[]) => last.size === now.length && now.every((x) => last.has(x)) && new Set(now).size === now.length;

  /**
   * Running containers per pod UID as the last PLEG relist (getPods) or pod status saw them: an
   * eviction's first runtime call is then the StopContainer itself, not a listing (see killPodInternal).
   */
  const knownRunning = new Map<string, Map<string, string>>();
  function noteRunning(uid: string, containers: readonly { id: string; name: string; state: string }[]) {
    let ids: Map<string, string> | undefined;
    for (const c of containers) if (c.state === "running") (ids ??= new Map()).set(c.id, c.name);
    if (ids) knownRunning.set(uid, ids);
    else knownRunning.delete(uid);
    for (const id of ids?.keys() ?? []) opts.directSignal?.track(id, uid);
  }

  /** The direct signaller forgets what no longer runs: once per relist or pod status, not per pod. */
  function retainRunning() {
    opts.directSignal?.retain(new Set([...knownRunning.values()].flatMap((m) => [...m.keys()])));
  }

  const hooks = createContainerHooks({
    cri,
    clock,
    hostIP: opts.hostIP,
    fetch: opts.fetch,
    execSync: (id, cmd, t) => execSyncRaw(id, cmd, t),
    stopContainer: (id, name, ref, grace, message, pod) => stopContainer(id, name, ref, grace, message, pod),
    hookFailed: (pod, name, reason, message) => containerEvent(pod, name, "Warning", reason, message),
  });
  const { killContainer, podIP, restoreSpecs, runPostStart } = hooks;

  async function stopContainer(id: string, name: string, ref: PodRef, graceSeconds: number, message: string, pod?: KubePod): Promise<void> {
    // The signal and the request go out first; the log line follows (the pressure path's latency is to the signal).
    const direct = opts.directSignal?.signal(id, graceSeconds);
    const stopped = cri.stopContainer(id, graceSeconds);
    // Upstream killContainer: "Stopping container <name>" unless the kill has its own message.
    containerEvent(pod ?? ref, name, "Normal", reasons.KillingContainer, !message || message === "Stopping pod" ? `Stopping container ${name}` : message);
    log.info(
      `killing container ${kv({ pod: `${ref.namespace}/${ref.name}`, container: name, id: id.slice(0, 13), gracePeriod: graceSeconds, reason: message, signalledPid: direct?.pid, signal: direct && signalName(direct.signal) })}`,
    );
    await stopped;
  }

  /**
   * Upstream killPodWithSyncResult, fast first: the containers known to run (last relist / status)
   * get their StopContainer at once, with no round trip before it; the listing that follows catches
   * any started since, which are stopped too. A known ID that is no longer listed as running (it
   * exited or was removed meanwhile) failing to stop is no error. With the pod's spec, preStop hooks
   * run and sidecars stop after the regular containers (killContainer).
   */
  async function killPodInternal(ref: PodRef, graceSeconds: number, pod?: KubePod): Promise<void> {
    const selector = { labelSelector: { [POD_UID_LABEL]: ref.uid } };
    const failed = new Map<string, string>();
    const hasSidecars = (pod?.spec.initContainers ?? []).some(isSidecar);
    const known = knownRunning.get(ref.uid);
    knownRunning.delete(ref.uid);
    // With sidecars, the ordering needs every running container first (one listing, as upstream);
    // a spec-less pod (an orphan's stub from housekeeping) has its preStop hooks restored from the
    // listing's annotations. Without any pod (direct callers) the fast path stays: stop, then list.
    const specless = pod !== undefined && pod.spec.containers.length === 0;
    const preListed = hasSidecars || specless ? await cri.listContainers({ ...selector, state: { state: "CONTAINER_RUNNING" } }) : undefined;
    if (specless && preListed) pod = restoreSpecs(ref, preListed, pod);
    const ordering = pod && preListed ? createTerminationOrdering(pod, [...new Set([...preListed.map((c) => c.metadata?.name ?? ""), ...(known?.values() ?? [])])], clock) : undefined;
    const started = new Set<string>();
    const stop = (id: string, name: string) => {
      started.add(id);
      return killContainer(pod, ref, id, name, graceSeconds, "Stopping pod", { ordering }).catch((e) => {
        failed.set(id, `${name}: ${(e as Error).message}`);
      });
    };
    const stops = known ? [...known].map(([id, name]) => stop(id, name)) : [];
    const running = preListed ?? (await cri.listContainers({ ...selector, state: { state: "CONTAINER_RUNNING" } }));
    for (const c of running) if (!started.has(c.id)) stops.push(stop(c.id, c.metadata?.name ?? ""));
    await Promise.all(stops);
    const listed = new Set(running.map((c) => c.id));
    const errors = [...failed].filter(([id]) => listed.has(id)).map(([, e]) => e);
    for (const s of await cri.listPodSandbox(selector)) {
      await cri.stopPodSandbox(s.id).catch((e) => errors.push(`sandbox ${s.id.slice(0, 13)}: ${(e as Error).message}`));
    }
    if (errors.length > 0) throw new Error(`killing pod ${ref.namespace}/${ref.name}: ${errors.join("; ")}`);
  }

  /** Upstream imageManager's back-off (10 s doubling to 5 min), keyed by pod UID and image. */
  const imageBackOff = createBackOff();

  /**
   * upstream kuberuntime PullImage with pull secrets: the keyring of the pod's imagePullSecrets (a
   * secret that cannot be read is logged and skipped, as getPullSecretsForPod does) gives the
   * credentials for the image, tried in order until one pull succeeds; none → an anonymous pull.
   */
  async function pullWithSecrets(pod: KubePod, image: string, sandboxConfig: PodSandboxConfig): Promise<string> {
    const objects = podObjects.get(podUid(pod));
    const secrets: { name: string; data?: Record<string, string> }[] = [];
    for (const ref of pod.spec.imagePullSecrets ?? []) {
      if (!ref.name) continue;
      try {
        secrets.push({ name: ref.name, data: lookupSecret(objects, ref.name).data });
      } catch (e) {
        log.warn(`Unable to retrieve pull secret, the image pull may not succeed. ${kv({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, secret: ref.name, error: (e as Error).message })}`);
      }
    }
    const creds = secrets.length > 0 ? createDockerKeyring(dockerConfigsFromSecrets(secrets, (e) => log.warn(`pull secret skipped ${kv({ error: e.message })}`))).lookup(image) : [];
    if (creds.length === 0) return cri.pullImage(image, undefined, sandboxConfig);
    const errors: string[] = [];
    for (const auth of creds) {
      try {
        return await cri.pullImage(image, auth, sandboxConfig);
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    throw new Error(errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`);
  }

  /**
   * Upstream EnsureImageExists: Never → the image must be present (ErrImageNeverPull); IfNotPresent →
   * pulled when absent; Always → pulled every time a container starts (there is no registry offline,
   * so a present image still fails with ErrImagePull, then ImagePullBackOff while the back-off runs).
   */
  async function ensureImage(pod: KubePod, container: KubeContainer, sandboxConfig: PodSandboxConfig, uid: string, beforePull?: () => void): Promise<{ id: string; present?: CriImage }> {
    const image = container.image as string;
    const policy = container.imagePullPolicy ?? "IfNotPresent";
    const event = (type: "Normal" | "Warning", reason: string, message: string) => containerEvent(pod, container.name, type, reason, message);
    if (policy !== "Always") {
      const present = await cri.imageStatus(image);
      if (present) {
        event("Normal", reasons.PulledImage, `Container image "${image}" already present on machine`);
        return { id: present.id, present };
      }
      if (policy === "Never") {
        const message = `Container image "${image}" is not present with pull policy of Never`;
        event("Warning", reasons.ErrImageNeverPullPolicy, message);
        throw Object.assign(new Error(message), { reason: "ErrImageNeverPull" });
      }
    }
    const key = `${uid}_${image}`;
    if (imageBackOff.isInBackOff(key, now())) {
      const message = `Back-off pulling image "${image}"`;
      event("Normal", reasons.BackOffPullImage, message);
      throw Object.assign(new Error(message), { reason: "ImagePullBackOff" });
    }
    beforePull?.();
    event("Normal", reasons.PullingImage, `Pulling image "${image}"`);
    const startMs = now();
    try {
      const id = await pullWithSecrets(pod, image, sandboxConfig);
      const took = goDuration(now() - startMs);
      event("Normal", reasons.PulledImage, `Successfully pulled image "${image}" in ${took} (${took} including waiting)`);
      return { id };
    } catch (e) {
      imageBackOff.gc(now());
      imageBackOff.next(key, now());
      log.warn(`Failed to pull image ${kv({ image, policy, err: (e as Error).message })}`);
      event("Warning", reasons.FailedToPullImage, `Failed to pull image "${image}": ${(e as Error).message}`);
      // The waiting message is the runtime's error itself, as upstream's evalCRIPullErr fallback.
      throw Object.assign(new Error((e as Error).message), { reason: "ErrImagePull" });
    }
  }

  async function startContainer(
    pod: KubePod,
    ref: PodRef,
    container: KubeContainer,
    status: RuntimePodStatus,
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    inputs: ConfigInputs,
    backOff: BackOff,
    result: SyncPodResult,
    held: HeldSlot = {},
  ): Promise<void> {
    try {
      await startContainerIn(pod, ref, container, status, sandboxId, sandboxConfig, inputs, backOff, result, held);
    } finally {
      // Only the first container start after the sandbox uses the pod's slot; later ones queue.
      held.release?.();
      held.release = undefined;
    }
  }

  async function startContainerIn(
    pod: KubePod,
    ref: PodRef,
    container: KubeContainer,
    status: RuntimePodStatus,
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    inputs: ConfigInputs,
    backOff: BackOff,
    result: SyncPodResult,
    held: HeldSlot,
  ): Promise<void> {
    /** A heavy call in the slot this pod still holds from its sandbox, else in a new one. */
    const inSlot = <T>(fn: () => Promise<T>, priority: number): Promise<T> => (held.release ? fn() : startSlots.run(fn, priority));
    const prev = latestStatus(status, container.name);
    // Upstream doBackOff: a container that exited before restarts only after its back-off expires.
    if (prev && prev.state === "exited") {
      const key = backOffKey(ref.uid, container.name);
      const nowMs = now();
      if (backOff.isInBackOff(key, nowMs, prev.finishedAtMs || undefined)) {
        const delay = backOff.delayMs?.(key);
        const msg = `back-off ${delay !== undefined ? `${Math.round(delay / 1000)}s ` : ""}restarting failed container=${container.name} pod=${ref.namespace}/${ref.name}_(${ref.uid})`;
        containerEvent(pod, container.name, "Warning", reasons.BackOffStartContainer, `Back-off restarting failed container ${container.name} in pod ${ref.name}_${ref.namespace}(${ref.uid})`);
        result.errors.push({ container: container.name, reason: "CrashLoopBackOff", message: msg });
        return;
      }
      backOff.next(key, nowMs);
    }
    const attempt = prev ? prev.attempt + 1 : 0;
    let present: CriImage | undefined;
    try {
      // A pull never holds a slot: the pod queues again for its create after it.
      const beforePull = () => {
        held.release?.();
        held.release = undefined;
      };
      present = (await ensureImage(pod, container, sandboxConfig, ref.uid, beforePull)).present;
    } catch (e) {
      const err = e as Error & { reason?: string };
      containerEvent(pod, container.name, "Warning", reasons.FailedToCreateContainer, `Error: ${err.reason ?? "ErrImagePull"}`);
      result.errors.push({ container: container.name, reason: err.reason ?? "ErrImagePull", message: err.message });
      return;
    }
    let id: string;
    try {
      // upstream getImageUser: the image's user decides runAsNonRoot and the default user.
      // The image status EnsureImageExists just read serves here too (upstream asks twice): one
      // ImageStatus per container start instead of two.
      const imageUser = imageUserOf(present ?? await cri.imageStatus(container.image as string).catch((e) => {
        throw new ContainerConfigError(container.name, `failed to get image status for ${container.image}: ${(e as Error).message}`);
      }));
      // The image as the user wrote it (containerd resolves it), so statuses report that name.
      const config = generateContainerConfig(pod, ref, container, attempt, inputs, undefined, imageUser);
      mkdirSync(join(sandboxConfig.logDirectory ?? podLogsDir, container.name), { recursive: true });
      id = await inSlot(() => cri.createContainer(sandboxId, config, sandboxConfig), PRIORITY_CREATE);
      containerEvent(pod, container.name, "Normal", reasons.CreatedContainer, `Created container ${container.name}`);
    } catch (e) {
      const reason = e instanceof ContainerConfigError ? "CreateContainerConfigError" : "CreateContainerError";
      containerEvent(pod, container.name, "Warning", reasons.FailedToCreateContainer, `Error: ${(e as Error).message}`);
      result.errors.push({ container: container.name, reason, message: (e as Error).message });
      return;
    }
    try {
      await inSlot(() => cri.startContainer(id), PRIORITY_START);
      // Learn its init for the direct signal (and the eviction fast path's plan) now, not at the next relist.
      opts.directSignal?.track(id, ref.uid, true);
      log.info(`started container ${kv({ pod: `${ref.namespace}/${ref.name}`, container: container.name, id: id.slice(0, 13), attempt })}`);
      containerEvent(pod, container.name, "Normal", reasons.StartedContainer, `Started container ${container.name}`);
    } catch (e) {
      containerEvent(pod, container.name, "Warning", reasons.FailedToStartContainer, `Error: ${(e as Error).message}`);
      result.errors.push({ container: container.name, reason: "RunContainerError", message: (e as Error).message });
      return;
    }
    // The slot is free before the postStart hook runs (it may take up to the pod's grace period).
    held.release?.();
    held.release = undefined;
    const err = await runPostStart(pod, ref, container, id, sandboxId);
    if (err) result.errors.push({ container: container.name, reason: "PostStartHookError", message: err });
  }

  const startSlots = createSlots(opts.concurrentStartCalls ?? DEFAULT_CONCURRENT_START_CALLS);
  async function syncPod(podLike: PodLike, status: RuntimePodStatus, backOff: BackOff, options: SyncPodOptions = {}): Promise<SyncPodResult> {
    const pod = asKubePod(podLike);
    const ref = refOf(pod);
    const result: SyncPodResult = { errors: [] };
    const actions = computePodActions(pod, status, options.unhealthy ?? [], (n) => options.started?.(n) ?? true);
    const cgroupParent = options.cgroupParent ?? opts.cgroupParent?.(pod);
    const inputs = inputsFor(pod, cgroupParent);
    const graceSeconds = Math.max(pod.spec.terminationGracePeriodSeconds ?? 30, MINIMUM_GRACE_PERIOD_SECONDS);

    if (actions.killPod) {
      try {
        await killPodInternal(ref, graceSeconds, pod);
      } catch (e) {
        result.errors.push({ container: "", reason: "KillPodSandboxError", message: (e as Error).message });
        return result;
      }
      if (!actions.createSandbox) {
        if (actions.initFailed) {
          result.errors.push({ container: actions.initFailed.name, reason: "InitContainerFailed", message: `init container ${actions.initFailed.name} failed and restartPolicy is Never` });
        }
        return result;
      }
    } else {
      for (const k of actions.containersToKill) {
        try {
          const grace = terminationGracePeriod(pod, containerSpec(pod, k.name), k.reason ?? "unknown");
          await killContainer(pod, ref, k.id, k.name, grace, k.message, { sandboxId: actions.sandboxId, floor: true });
        } catch (e) {
          result.errors.push({ container: k.name, reason: "KillContainerError", message: (e as Error).message });
          return result;
        }
      }
    }

    await resolveApiObjects(pod, ref);
    inputs.objects = podObjects.get(ref.uid);
    const mountError = setUpVolumes(pod);
    if (mountError) {
      log.warn(`volume set-up failed ${kv({ pod: `${ref.namespace}/${ref.name}`, event: "FailedMount", message: mountError })}`);
      events.event(podRef(pod), "Warning", reasons.FailedMountVolume, mountError);
      for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) result.errors.push({ container: c.name, reason: "ContainerCreating", message: mountError });
      return result;
    }
    let sandboxId = actions.sandboxId;
    let sandboxConfig: PodSandboxConfig;
    try {
      const nodeIP = opts.hostIP ?? defaultHostIP();
      inputs.dnsConfig = sandboxDnsConfig(pod, dns, nodeIP ? [nodeIP] : [], actions.createSandbox, (reason, message) => opts.onPodWarning?.(pod, reason, message));
      sandboxConfig = generatePodSandboxConfig(pod, ref, actions.attempt, inputs);
    } catch (e) {
      result.errors.push({ container: "", reason: "CreatePodSandboxError", message: `Failed to generate sandbox config for pod "${ref.name}_${ref.namespace}(${ref.uid})": ${(e as Error).message}` });
      return result;
    }
    const held: HeldSlot = {};
    if (actions.createSandbox) {
      if (actions.sandboxId) events.event(podRef(pod), "Normal", reasons.SandboxChanged, "Pod sandbox changed, it will be killed and re-created.");
      try {
        mkdirSync(podLogsDirectory(podLogsDir, ref), { recursive: true });
        // The pod keeps this slot for its first container's create and start (held), as a lane of
        // bare calls would: handed to the next sandbox instead, the pod's own create waited behind
        // the sandboxes started meanwhile (first Running 2.5 s with 4 slots under load).
        held.release = await startSlots.acquire(PRIORITY_SANDBOX);
        sandboxId = await cri.runPodSandbox(sandboxConfig);
        log.info(`created pod sandbox ${kv({ pod: `${ref.namespace}/${ref.name}`, id: sandboxId.slice(0, 13), attempt: actions.attempt, cgroupParent })}`);
      } catch (e) {
        held.release?.();
        result.errors.push({ container: "", reason: "CreatePodSandboxError", message: `Failed to create pod sandbox: ${(e as Error).message}` });
        events.event(podRef(pod), "Warning", reasons.FailedCreatePodSandBox, `Failed to create pod sandbox: ${(e as Error).message}`);
        return result;
      }
    }

    try {
      await startPodContainers(pod, ref, actions, status, sandboxId, sandboxConfig, inputs, backOff, result, held);
    } finally {
      held.release?.();
    }
    if (noRuntimeActions(actions) && result.errors.length === 0) result.unchanged = true;
    return result;
  }

  /** Fetches the pod's secrets, configMaps and tokens for this sync (failures are per object, inside). */
  async function resolveApiObjects(pod: KubePod, ref: PodRef): Promise<void> {
    if (!opts.apiObjects) return;
    try {
      const objs = await opts.apiObjects.resolve(pod);
      if (objs) podObjects.set(ref.uid, objs);
    } catch (e) {
      log.warn(`API objects of the pod not fetched ${kv({ pod: `${ref.namespace}/${ref.name}`, error: (e as Error).message })}`);
    }
  }

  /** SyncPod's last steps: init containers (one, or in order with sidecars), then the regular ones. */
  async function startPodContainers(
    pod: KubePod,
    ref: PodRef,
    actions: ReturnType<typeof computePodActions>,
    status: RuntimePodStatus,
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    inputs: ConfigInputs,
    backOff: BackOff,
    result: SyncPodResult,
    held: HeldSlot,
  ): Promise<void> {
    const start = (c: KubeContainer) => startContainer(pod, ref, c, status, sandboxId, sandboxConfig, inputs, backOff, result, held);
    const byName = (name: string, list: KubeContainer[] | undefined) => list?.find((c) => c.name === name);
    // env valueFrom (downward API) may need the pod's IP, known once the sandbox runs.
    const needsIP = opts.manageEtcHosts !== false || [...(pod.spec.initContainers ?? []), ...pod.spec.containers].some((c) => c.env?.some((e) => e.valueFrom));
    const ip = needsIP && (actions.nextInitContainer || actions.initContainersToStart?.length || actions.containersToStart.length) ? await podIP(pod, sandboxId).catch(() => undefined) : undefined;
    inputs.downward = { podIP: ip, hostIP: opts.hostIP ?? defaultHostIP(), nodeAllocatable: nodeAllocatable() };
    // upstream makeHostsMount: only once the pod IP is known.
    if (ip && opts.manageEtcHosts !== false) {
      try {
        inputs.etcHostsPath = writePodHostsFile(rootDir, pod, [ip], dns.clusterDomain);
      } catch (e) {
        log.warn(`cannot write the pod's hosts file ${kv({ pod: `${ref.namespace}/${ref.name}`, error: (e as Error).message })}`);
      }
    }
    if (actions.nextInitContainer) {
      const c = byName(actions.nextInitContainer, pod.spec.initContainers);
      if (c) await start(c);
      return;
    }
    // Pods with sidecars: init containers in order (a regular one that fails to start stops the round).
    for (const name of actions.initContainersToStart ?? []) {
      const c = byName(name, pod.spec.initContainers);
      if (!c) continue;
      const before = result.errors.length;
      await start(c);
      if (result.errors.length > before && !isSidecar(c)) return;
    }
    for (const name of actions.containersToStart) {
      const c = byName(name, pod.spec.containers);
      if (c) await start(c);
    }
  }

  async function removePod(uid: string): Promise<void> {
    const selector = { labelSelector: { [POD_UID_LABEL]: uid } };
    for (const c of await cri.listContainers(selector)) await cri.removeContainer(c.id);
    for (const s of await cri.listPodSandbox(selector)) {
      await cri.stopPodSandbox(s.id);
      await cri.removePodSandbox(s.id);
    }
    // Upstream unmounts a removed pod's volumes and deletes its directory (cleanupOrphanedPodDirs);
    // with custom volume paths the caller owns them.
    podObjects.delete(uid);
    for (const k of mountedVolumes) if (k.startsWith(`${uid}/`)) mountedVolumes.delete(k);
    opts.apiObjects?.forget(uid);
    // The termination-log files and the subPath bind mounts are ours whoever owns the volumes
    // (upstream CleanSubPaths before the volume is unmounted).
    if (uid) {
      rmSync(podContainersDir(rootDir, uid), { recursive: true, force: true });
      cleanSubPaths(podDir(rootDir, uid));
    }
    if (!opts.volumeHostPath) tearDown(uid);
  }

  async function execSync(containerId: string, cmd: string[], timeoutMs: number): Promise<ExecResult> {
    return execSyncRaw(containerId, cmd, Math.max(1, Math.ceil(timeoutMs / 1000)));
  }

  /**
   * Running containers and their log files, as upstream's ContainerLogManager sees them: only running
   * containers are rotated (a stopped one writes nothing more), and containerd reports log_path
   * already joined with the sandbox's log_directory.
   */
  /**
   * A container's log path never changes: it is asked once (ContainerStatus) and kept while the
   * container runs, so a rotation pass over 100 idle containers is one ListContainers, not 101 calls
   * (with 100 containers, asking every 10 s would be 10 ContainerStatus calls a second).
   */
  const logPaths = new Map<string, string>();
  async function listContainerLogs(): Promise<{ containerId: string; logPath: string }[]> {
    const out: { containerId: string; logPath: string }[] = [];
    // The last relist saw no sandbox, so no container: nothing to rotate, no listing.
    if (sandboxesListed === 0) {
      logPaths.clear();
      return out;
    }
    const running = await cri.listContainers({ state: { state: "CONTAINER_RUNNING" } });
    const ids = new Set(running.map((c) => c.id));
    for (const id of logPaths.keys()) if (!ids.has(id)) logPaths.delete(id);
    for (const c of running) {
      let logPath = logPaths.get(c.id);
      if (logPath === undefined) {
        const st = await cri.containerStatus(c.id).catch(() => undefined);
        if (st?.status?.state !== "CONTAINER_RUNNING" || !st.status.logPath) continue;
        logPath = st.status.logPath;
        logPaths.set(c.id, logPath);
      }
      out.push({ containerId: c.id, logPath });
    }
    return out;
  }

  return {
    async version() {
      const v = await cri.version();
      return { runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion };
    },
    getPods,
    foreignPodUids: () => (cri as { foreignPodUids?: () => ReadonlySet<string> }).foreignPodUids?.() ?? new Set(),
    getPodStatus,
    syncPod,
    killPod: (pod, gracePeriodSeconds, spec) => killPodInternal(pod, gracePeriodSeconds, spec && asKubePod(spec)),
    removePod,
    async tearDownVolumes(uid) {
      for (const k of mountedVolumes) if (k.startsWith(`${uid}/`)) mountedVolumes.delete(k);
      if (!opts.volumeHostPath) tearDown(uid, "volumes");
    },
    execSync,
    garbageCollect: async (pods) => void (await runContainerGc(cri, opts.containerGcPolicy ?? DEFAULT_CONTAINER_GC_POLICY, pods, podLogsDir, now(), gcSeenUids)),
    listContainerLogs,
    reopenContainerLog: (containerId) => cri.reopenContainerLog(containerId),
  };
}

/** The pod's runtime state is as wanted: nothing to create, start or kill. */
function noRuntimeActions(a: PodActions): boolean {
  return !a.killPod && !a.createSandbox && !a.nextInitContainer && !a.initFailed && a.containersToStart.length === 0 && a.containersToKill.length === 0 && (a.initContainersToStart?.length ?? 0) === 0;
}

/** Go's time.Duration String for the "Successfully pulled image" message: 512ms, 1.234s, 2m3.5s. */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${+ms.toFixed(3)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${+s.toFixed(3)}s`;
  const m = Math.floor(s / 60);
  return `${m}m${+(s - m * 60).toFixed(3)}s`;
}
