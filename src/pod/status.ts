// Pure pod status generation from what the runtime reports (upstream kubelet_pods.go
// generateAPIPodStatus, convertToAPIContainerStatuses, getPhase; status/generate.go conditions).
import { canonicalQuantity } from "../config/quantity.ts";
import { isStaticPod } from "./pod-like.ts";
import { stringResourceList } from "./pod-resources.ts";
import { getPodQOS } from "./qos.ts";
import { READINESS_GATES_NOT_READY, unreadyGateMessages } from "./readiness-gates.ts";
import { rfc3339 } from "../clock.ts";
import type { RuntimeContainerStatus, RuntimePodStatus, SyncPodResult } from "./runtime.ts";
import type { Container, ContainerStateV1, ContainerStatus, Pod, PodCondition, PodPhase, PodStatus } from "./types.ts";

export interface StatusInputs {
  pod: Pod;
  runtime: RuntimePodStatus;
  oldStatus?: PodStatus;
  /** Errors of the last SyncPod (CrashLoopBackOff, ErrImagePull, …) shown as waiting reasons. */
  syncErrors?: SyncPodResult["errors"];
  /** Readiness by container name (absent → no readiness probe → ready when running). */
  ready?: (container: string) => boolean | undefined;
  /** Startup probe succeeded (absent → started when running). */
  started?: (container: string) => boolean | undefined;
  nowMs: number;
  hostIP?: string;
  /** The runtime's name for containerID URIs ("containerd"). */
  runtimeName?: string;
  /** The pod worker says the pod is terminal (no container will be restarted). */
  podIsTerminal?: boolean;
  /** In-place resize: `pod` carries the allocated resources; these are the actuated ones and the resize conditions. */
  resize?: StatusResize;
}

/** What the pod status shows of in-place resize. */
export interface StatusResize {
  /** The cpu and memory a container was last given, undefined when not recorded. */
  actuated(container: string): { requests?: Record<string, string>; limits?: Record<string, string> } | undefined;
  /** PodResizePending / PodResizeInProgress. */
  conditions: PodCondition[];
}

const isSidecar = (c: Pick<Container, "restartPolicy">) => c.restartPolicy === "Always";

/** Upstream getPhase, with restartable init containers (sidecars) counted as upstream does. */
export function getPhase(pod: Pod, statuses: ContainerStatus[], initStatuses: ContainerStatus[], podIsTerminal = false): PodPhase {
  const spec = pod.spec;
  let pendingInit = 0;
  let failedInit = 0;
  for (const c of spec.initContainers ?? []) {
    if (isSidecar(c)) continue;
    const s = initStatuses.find((x) => x.name === c.name);
    if (!s) {
      pendingInit++;
    } else if (s.state.running) {
      pendingInit++;
    } else if (s.state.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated) {
        if (s.lastState.terminated.exitCode !== 0) failedInit++;
      } else pendingInit++;
    } else pendingInit++;
  }
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  let pendingSidecars = 0;
  for (const c of (spec.initContainers ?? []).filter(isSidecar)) {
    const s = initStatuses.find((x) => x.name === c.name);
    if (!s) {
      unknown++;
    } else if (s.state.running) {
      if (!s.started) pendingSidecars++;
      running++;
    } else if (s.state.waiting && !s.lastState.terminated) {
      pendingSidecars++;
      waiting++;
    } else if (!s.state.terminated && !s.state.waiting) {
      pendingSidecars++;
      unknown++;
    }
  }
  for (const c of spec.containers) {
    const s = statuses.find((x) => x.name === c.name);
    if (!s) unknown++;
    else if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }
  if (failedInit > 0 && spec.restartPolicy === "Never") return "Failed";
  const anyRegularStarted = statuses.some((s) => s.state.running || s.state.terminated || s.lastState.terminated);
  if (((pendingInit > 0 || pendingSidecars > 0) && !anyRegularStarted) || waiting > 0) return "Pending";
  if (running > 0 && unknown === 0) return "Running";
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (podIsTerminal && !isStaticPod(pod)) return stopped === succeeded ? "Succeeded" : "Failed";
    if (spec.restartPolicy === "Always") return "Running";
    if (stopped === succeeded) return "Succeeded";
    if (spec.restartPolicy === "Never") return "Failed";
    return "Running";
  }
  return "Pending";
}

function terminatedReason(c: RuntimeContainerStatus): string {
  if (c.reason) return c.reason;
  return c.exitCode === 0 ? "Completed" : "Error";
}

function toState(c: RuntimeContainerStatus, containerID: string): ContainerStateV1 {
  switch (c.state) {
    case "running":
      return { running: { startedAt: rfc3339(c.startedAtMs) } };
    case "exited":
      return {
        terminated: {
          exitCode: c.exitCode ?? 0,
          reason: terminatedReason(c),
          ...(c.message ? { message: c.message } : {}),
          startedAt: c.startedAtMs ? rfc3339(c.startedAtMs) : undefined,
          finishedAt: c.finishedAtMs ? rfc3339(c.finishedAtMs) : undefined,
          containerID,
        },
      };
    case "created":
      return { waiting: { reason: "ContainerCreating" } };
    default:
      return { waiting: { reason: "ContainerStatusUnknown", message: "The container could not be located when the pod was terminated" } };
  }
}

type StatusSpec = Pick<Container, "name" | "image" | "restartPolicy" | "resources">;

/**
 * upstream convertContainerStatusResources and AllocatedResources: `resources` is the allocation with
 * cpu and memory as actuated (a container not running: the allocation); `allocatedResources` the
 * allocated requests.
 */
function resizeFields(spec: StatusSpec, running: boolean, resize: StatusResize): Pick<ContainerStatus, "allocatedResources" | "resources"> {
  const requests = stringResourceList(spec.resources?.requests);
  const limits = stringResourceList(spec.resources?.limits);
  const actual = running ? resize.actuated(spec.name) : undefined;
  const withActual = (list: Record<string, string> | undefined, from: Record<string, string> | undefined) => {
    if (!list) return undefined;
    const out = { ...list };
    for (const r of ["cpu", "memory"]) if (out[r] !== undefined && from?.[r] !== undefined) out[r] = canonicalQuantity(from[r]!);
    return out;
  };
  const lim = withActual(limits, actual?.limits);
  const req = withActual(requests, actual?.requests);
  return { ...(requests ? { allocatedResources: requests } : {}), resources: { ...(lim ? { limits: lim } : {}), ...(req ? { requests: req } : {}) } };
}

function containerStatuses(inputs: StatusInputs, specs: StatusSpec[], old: ContainerStatus[] | undefined, isInit: boolean): ContainerStatus[] {
  const prefix = `${inputs.runtimeName ?? "containerd"}://`;
  const cid = (id: string) => (id.includes("://") ? id : prefix + id);
  return specs.map((spec) => {
    // Newest instance first (highest attempt, then newest creation).
    const instances = inputs.runtime.containers.filter((c) => c.name === spec.name).sort((a, b) => b.attempt - a.attempt || b.createdAtMs - a.createdAtMs);
    const latest = instances[0];
    const prev = old?.find((s) => s.name === spec.name);
    let status: ContainerStatus;
    if (!latest) {
      status = {
        name: spec.name,
        // upstream convertToAPIContainerStatuses' defaultWaitingState: PodInitializing in any pod
        // with init containers (its init containers' statuses included).
        state: { waiting: { reason: inputs.pod.spec.initContainers?.length ? "PodInitializing" : "ContainerCreating" } },
        lastState: prev?.lastState ?? {},
        ready: false,
        restartCount: prev?.restartCount ?? 0,
        image: spec.image,
        imageID: "",
        started: false,
      };
    } else {
      const running = latest.state === "running";
      // A sidecar is ready (and started) as a regular container is; a regular init container is
      // "ready" once it exited 0.
      const sidecar = isInit && isSidecar(spec);
      const ready = running && (!isInit || sidecar) && (inputs.ready?.(spec.name) ?? true);
      const started = running && (inputs.started?.(spec.name) ?? true);
      const older = instances[1];
      let lastState: ContainerStateV1 = {};
      if (older && older.state === "exited") lastState = toState(older, cid(older.id));
      else if (prev && prev.restartCount === latest.attempt) lastState = prev.lastState;
      else if (prev?.containerID && prev.containerID !== cid(latest.id) && prev.state.terminated) lastState = { terminated: prev.state.terminated };
      status = {
        name: spec.name,
        state: toState(latest, cid(latest.id)),
        lastState,
        ready: isInit && !sidecar ? latest.state === "exited" && latest.exitCode === 0 : ready,
        restartCount: latest.attempt,
        image: spec.image,
        imageID: latest.imageRef ?? "",
        containerID: cid(latest.id),
        started,
      };
    }
    // A container the sync could not start (back-off, image or create errors) shows as waiting with
    // that reason, its last run moved to lastState (upstream convertToAPIContainerStatuses).
    if (latest && inputs.resize) Object.assign(status, resizeFields(spec, latest.state === "running", inputs.resize));
    const err = inputs.syncErrors?.find((e) => e.container === spec.name);
    if (err && !status.state.running) {
      if (status.state.terminated) status.lastState = { terminated: status.state.terminated };
      status.state = { waiting: err.message ? { reason: err.reason, message: err.message } : { reason: err.reason } };
    }
    return status;
  });
}

function condition(type: PodCondition["type"], ok: boolean, nowMs: number, old: PodCondition[] | undefined, reason?: string, message?: string): PodCondition {
  const status = ok ? "True" : "False";
  const prev = old?.find((c) => c.type === type);
  return {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : rfc3339(nowMs),
    ...(ok ? {} : { reason, message }),
  };
}

const names = (xs: string[]) => `[${xs.join(" ")}]`;

/** upstream GeneratePodReadyCondition and GenerateContainersReadyCondition: [Ready, ContainersReady]. */
function readyConditions(
  pod: Pod,
  init: ContainerStatus[],
  regular: ContainerStatus[],
  phase: PodPhase,
  old: PodCondition[] | undefined,
  nowMs: number,
): PodCondition[] {
  const terminal = phase === "Failed" || phase === "Succeeded";
  // Sidecars count towards ContainersReady.
  const unready = [
    ...(pod.spec.initContainers ?? []).filter((c) => isSidecar(c) && !init.find((s) => s.name === c.name)?.ready),
    ...pod.spec.containers.filter((c) => !regular.find((s) => s.name === c.name)?.ready),
  ].map((c) => c.name);
  const containersReady = unready.length === 0 && !terminal;
  // upstream generateContainersReadyConditionForTerminalPhase: PodFailed or PodCompleted, no message.
  const notReadyReason = phase === "Failed" ? "PodFailed" : phase === "Succeeded" ? "PodCompleted" : "ContainersNotReady";
  const notReadyMessage = terminal ? undefined : `containers with unready status: ${names(unready)}`;
  // Ready also needs every readiness gate's condition True.
  const gates = containersReady ? unreadyGateMessages(pod.spec.readinessGates, pod.status?.conditions) : [];
  return [
    gates.length
      ? condition("Ready", false, nowMs, old, READINESS_GATES_NOT_READY, gates.join(", "))
      : condition("Ready", containersReady, nowMs, old, notReadyReason, notReadyMessage),
    condition("ContainersReady", containersReady, nowMs, old, notReadyReason, notReadyMessage),
  ];
}

/**
 * upstream statusManager.SetContainerReadiness: a readiness result written into the pod's status at
 * once — the container's `ready`, Ready and ContainersReady — with no sync (the pod worker may be busy
 * stopping the pod). The status itself when no status has that container ID or nothing changes; a
 * container that is not running is never made ready.
 */
export function withContainerReadiness(pod: Pod, status: PodStatus, containerID: string, ready: boolean, nowMs: number): PodStatus {
  const match = (c: ContainerStatus) => !!c.containerID && (c.containerID === containerID || c.containerID.endsWith(`://${containerID}`));
  const target = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])].find(match);
  if (!target || target.ready === ready || (ready && !target.state.running)) return status;
  const flip = (xs: ContainerStatus[] | undefined) => xs?.map((c) => (match(c) ? { ...c, ready } : c));
  const init = flip(status.initContainerStatuses);
  const regular = flip(status.containerStatuses);
  const [readyCond, containersReadyCond] = readyConditions(pod, init ?? [], regular ?? [], status.phase ?? "Pending", status.conditions, nowMs);
  const conditions = status.conditions?.map((c) => (c.type === "Ready" ? readyCond! : c.type === "ContainersReady" ? containersReadyCond! : c));
  return { ...status, ...(init ? { initContainerStatuses: init } : {}), ...(regular ? { containerStatuses: regular } : {}), conditions };
}

/**
 * Ephemeral containers' statuses (upstream: convertToAPIContainerStatuses over their specs): never
 * ready, no `started` (the prober sets it only for regular and init containers); none without any.
 */
function ephemeralContainerStatuses(inputs: StatusInputs): ContainerStatus[] {
  const specs = inputs.pod.spec.ephemeralContainers ?? [];
  if (specs.length === 0) return [];
  const plain = { ...inputs, resize: undefined };
  return containerStatuses(plain, specs, inputs.oldStatus?.ephemeralContainerStatuses, false).map(({ started: _, ...s }) => ({ ...s, ready: false }));
}

/** Builds the v1 PodStatus for `pod` from the runtime's view (upstream generateAPIPodStatus). */
export function generatePodStatus(inputs: StatusInputs): PodStatus {
  const { pod, oldStatus, nowMs } = inputs;
  const init = containerStatuses(inputs, pod.spec.initContainers ?? [], oldStatus?.initContainerStatuses, true);
  const regular = containerStatuses(inputs, pod.spec.containers, oldStatus?.containerStatuses, false);
  const ephemeral = ephemeralContainerStatuses(inputs);
  let phase = getPhase(pod, regular, init, inputs.podIsTerminal);
  // A terminal phase is final (upstream status manager refuses terminal → non-terminal).
  if (oldStatus && (oldStatus.phase === "Failed" || oldStatus.phase === "Succeeded")) phase = oldStatus.phase;
  const terminal = phase === "Failed" || phase === "Succeeded";

  // Once a regular container has run, initialization is complete even if init containers were
  // since removed (upstream: Initialized stays True).
  const regularStarted = regular.some((r) => r.state.running || r.state.terminated || r.lastState.terminated);
  const pendingInit = regularStarted
    ? []
    : (pod.spec.initContainers ?? []).filter((c) => {
        const s = init.find((x) => x.name === c.name);
        return isSidecar(c) ? !s?.started : s?.state.terminated?.exitCode !== 0;
      });
  const initialized = pendingInit.length === 0;
  const old = oldStatus?.conditions;
  const conditions: PodCondition[] = [
    ...(old?.filter((c) => c.type === "DisruptionTarget") ?? []),
    // upstream GeneratePodInitializedCondition: a Succeeded pod is initialized with reason
    // PodCompleted; a Failed one says which init containers did not complete.
    phase === "Succeeded"
      ? { ...condition("Initialized", true, nowMs, old), reason: "PodCompleted" }
      : condition(
          "Initialized",
          initialized,
          nowMs,
          old,
          "ContainersNotInitialized",
          `containers with incomplete status: ${names(pendingInit.map((c) => c.name))}`,
        ),
    ...readyConditions(pod, init, regular, phase, old, nowMs),
    condition("PodScheduled", true, nowMs, old),
    ...(terminal ? [] : (inputs.resize?.conditions ?? [])),
  ];

  const sandbox = inputs.runtime.sandboxes[0];
  const podIP = pod.spec.hostNetwork ? inputs.hostIP : (sandbox?.ip ?? oldStatus?.podIP);
  const status: PodStatus = {
    phase,
    conditions,
    ...(oldStatus?.message && terminal ? { message: oldStatus.message } : {}),
    ...(oldStatus?.reason && terminal ? { reason: oldStatus.reason } : {}),
    ...(inputs.hostIP ? { hostIP: inputs.hostIP } : {}),
    ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}),
    startTime: oldStatus?.startTime ?? rfc3339(nowMs),
    ...(init.length ? { initContainerStatuses: init } : {}),
    containerStatuses: regular,
    ...(ephemeral.length ? { ephemeralContainerStatuses: ephemeral } : {}),
    qosClass: getPodQOS(pod),
    ...(pod.metadata.generation ? { observedGeneration: pod.metadata.generation } : {}),
  };
  return truncateTerminationMessages(pod, status);
}

/** Upstream kubecontainer.MaxPodTerminationMessageLogLength: the termination messages of a pod together. */
export const MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH = 12 * 1024;

/** The first `maxBytes` bytes (Go's byte slice: a character cut in two becomes U+FFFD, as Go's JSON writes it). */
export function truncateBytes(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes) return s;
  const b = Buffer.from(s, "utf8");
  return b.length <= maxBytes ? s : b.subarray(0, maxBytes).toString("utf8");
}

/**
 * upstream normalizeStatus: each terminated message (state and last state, init, regular and
 * ephemeral containers) keeps at most 12 KiB / the number of containers in the spec.
 */
export function truncateTerminationMessages(pod: Pod, status: PodStatus): PodStatus {
  const count = pod.spec.containers.length + (pod.spec.initContainers?.length ?? 0) + (pod.spec.ephemeralContainers?.length ?? 0);
  const bytesPerStatus = count > 0 ? Math.floor(MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH / count) : MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH;
  const cut = (st: ContainerStateV1): ContainerStateV1 => {
    const m = st.terminated?.message;
    if (m === undefined) return st;
    const t = truncateBytes(m, bytesPerStatus);
    return t === m ? st : { ...st, terminated: { ...st.terminated!, message: t } };
  };
  const each = (xs: ContainerStatus[]) =>
    xs.map((c) => {
      const [state, lastState] = [cut(c.state), cut(c.lastState)];
      return state === c.state && lastState === c.lastState ? c : { ...c, state, lastState };
    });
  return {
    ...status,
    ...(status.initContainerStatuses ? { initContainerStatuses: each(status.initContainerStatuses) } : {}),
    ...(status.containerStatuses ? { containerStatuses: each(status.containerStatuses) } : {}),
    ...(status.ephemeralContainerStatuses ? { ephemeralContainerStatuses: each(status.ephemeralContainerStatuses) } : {}),
  };
}

/** Status of a pod stopped by the kubelet (eviction, admission): terminal with reason and message. */
export function terminalStatus(old: PodStatus | undefined, reason: string, message: string, nowMs: number, disruption = false): PodStatus {
  const conditions = (old?.conditions ?? []).filter((c) => c.type !== "DisruptionTarget");
  if (disruption)
    conditions.unshift({
      type: "DisruptionTarget",
      status: "True",
      lastProbeTime: null,
      lastTransitionTime: rfc3339(nowMs),
      reason: "TerminationByKubelet",
      message,
    });
  return { ...(old ?? {}), phase: "Failed", reason, message, conditions };
}

/**
 * The status served while the container runtime is down: Ready and ContainersReady False (reason
 * NodeNotReady, the runtime error as message) and no container ready, as upstream's node controller
 * marks the pods of a NotReady node. `sinceMs` is when the runtime counted as down. Terminal pods and
 * pods already not ready keep their status.
 */
export function markRuntimeDown(status: PodStatus, message: string, sinceMs: number): PodStatus {
  if (status.phase === "Failed" || status.phase === "Succeeded") return status;
  const notReady = (c: PodCondition): PodCondition =>
    c.type === "Ready" || c.type === "ContainersReady"
      ? { ...c, status: "False", reason: "NodeNotReady", message, lastTransitionTime: c.status === "True" ? rfc3339(sinceMs) : c.lastTransitionTime }
      : c;
  return {
    ...status,
    conditions: status.conditions?.map(notReady),
    ...(status.containerStatuses ? { containerStatuses: status.containerStatuses.map((c) => ({ ...c, ready: false })) } : {}),
    ...(status.initContainerStatuses ? { initContainerStatuses: status.initContainerStatuses.map((c) => ({ ...c, ready: false })) } : {}),
  };
}
