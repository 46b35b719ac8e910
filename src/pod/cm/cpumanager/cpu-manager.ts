// The CPU manager (upstream cm/cpumanager/cpu_manager.go): the policy (`none` or `static`) over the state
// kept in `<rootDir>/cpu_manager_state`. Admission allocates a pod's containers (the topology manager's
// admit handler upstream: a refusal is UnexpectedAdmissionError), a container is created with its CPUs
// (GetCPUAffinity), and the reconcile loop brings running containers' cpusets to the state through CRI
// UpdateContainerResources whenever the shared pool changed. CPUs of pods no longer active go back to
// the pool (removeStaleState) at each admission and each reconcile.
import type { Clock, TimerHandle } from "../../../clock.ts";
import { kv, log } from "../../../log.ts";
import { podKey, podUid, type PodLike } from "../../pod-like.ts";
import { formatCPUSet, type CPUSet } from "../../../config/cpuset.ts";
import { allocate, allocatableCPUs, newStaticPolicy, removeContainer, validateState, type StaticPolicy } from "./policy-static.ts";
import { CPU_MANAGER_STATE_FILE, decodeCheckpoint, encodeCheckpoint, restoreErrorMessage } from "./state-checkpoint.ts";
import { emptyState, getCPUSet, getCPUSetOrDefault, type CPUManagerState } from "./state.ts";
import { describeTopology, type CPUTopology } from "./topology.ts";

export type CPUManagerPolicyName = "none" | "static";

/** A running container as the reconcile loop sees it (CRI ListContainers with its kubelet labels). */
export interface RunningContainer {
  id: string;
  podUid: string;
  containerName: string;
}

export interface CPUManagerOptions {
  policyName: string;
  policyOptions?: Record<string, string>;
  reconcilePeriodMs: number;
  topology: CPUTopology;
  /** systemReserved.cpu + kubeReserved.cpu in millicores (after reservedSystemCPUs' override). */
  reservedMilliCPU: number;
  /** reservedSystemCPUs, parsed; empty: the static policy picks ceil(reservedMilliCPU/1000) CPUs itself. */
  reservedSystemCPUs: CPUSet;
  /** The directory of the state file (the root dir). */
  stateDir: string;
  readFile(path: string): Promise<string | undefined>;
  writeFile(path: string, text: string): Promise<void>;
  clock: Clock;
}

export interface CPUManagerRuntime {
  activePods(): PodLike[];
  /** Every pod source delivered its pods: before that a pod not seen yet is not stale (upstream sourcesReady). */
  sourcesReady(): boolean;
  runningContainers(): Promise<RunningContainer[]>;
  updateContainerCPUSet(containerId: string, cpus: string): Promise<void>;
}

export interface CPUManager {
  readonly policyName: CPUManagerPolicyName;
  /** Reads (or writes) the state file and starts the reconcile loop; rejects as upstream refuses to start. */
  start(runtime: CPUManagerRuntime): Promise<void>;
  stop(): void;
  /** Allocates every container of an admitted pod; the refusal's reason and message, or undefined. */
  admit(pod: PodLike, activePods: PodLike[]): { reason: string; message: string } | undefined;
  /** The cpuset a new container is created with ("" = leave it to the runtime) (upstream GetCPUAffinity). */
  cpuAffinity(podUid: string, containerName: string): string;
  /** A container's exclusive CPUs (upstream GetExclusiveCPUs), for podresources. */
  exclusiveCPUs(podUid: string, containerName: string): CPUSet;
  /** CPUs that may be exclusively allocated (upstream GetAllocatableCPUs): empty with `none`. */
  allocatableCPUs(): CPUSet;
  /** One reconcile pass (the loop runs it every reconcilePeriodMs); resolves after its updates. */
  reconcile(): Promise<void>;
  /** Resolves once the state file holds every change made so far. */
  flush(): Promise<void>;
}

/** Upstream NewManager's checks: the policy name, its options, the reservation static needs. */
function policyFrom(o: CPUManagerOptions): StaticPolicy | undefined {
  if (o.policyName === "none") {
    if (Object.keys(o.policyOptions ?? {}).length > 0)
      throw new Error(`new none policy error: None policy: received unsupported options=${JSON.stringify(o.policyOptions)}`);
    return undefined;
  }
  if (o.policyName !== "static") throw new Error(`unknown policy: "${o.policyName}"`);
  for (const [k, v] of Object.entries(o.policyOptions ?? {}))
    throw new Error(`new static policy error: cpumanager option ${JSON.stringify(k)} (${v}) is not supported by bunlet`);
  if (o.reservedMilliCPU <= 0) throw new Error("[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero");
  log.info(`Detected CPU topology ${describeTopology(o.topology)}`);
  const policy = newStaticPolicy(o.topology, Math.ceil(o.reservedMilliCPU / 1000), o.reservedSystemCPUs);
  log.info(
    `Reserved CPUs not available for exclusive assignment ${kv({ reservedSize: policy.reservedCPUs.length, reserved: formatCPUSet(policy.reservedCPUs) })}`,
  );
  return policy;
}

/** The manager's parts, shared by the functions below. */
interface ManagerContext {
  o: CPUManagerOptions;
  policy: StaticPolicy | undefined;
  policyName: CPUManagerPolicyName;
  path: string;
  state: CPUManagerState;
  runtime?: CPUManagerRuntime;
  timer?: TimerHandle;
  stopped: boolean;
  /** Pod UID/container → the cpuset last given to the runtime (upstream lastUpdateState). */
  lastUpdate: Map<string, string>;
  writing: Promise<void>;
}

/** Writes the state file (upstream storeState after every change), one write after the other. */
function store(m: ManagerContext): void {
  const text = encodeCheckpoint(m.policyName, m.state);
  m.writing = m.writing
    .then(() => m.o.writeFile(m.path, text))
    .catch((e) => log.error(`cannot write the CPU manager state ${kv({ path: m.path, err: (e as Error).message })}`));
}

/** Upstream removeStaleState: containers of pods no longer active give their CPUs back. */
function removeStale(m: ManagerContext, active: PodLike[]): void {
  if (!m.runtime?.sourcesReady()) return;
  const live = new Map(active.map((p) => [podUid(p), new Set([...(p.spec.initContainers ?? []), ...p.spec.containers].map((c) => c.name))]));
  let changed = false;
  for (const [uid, containers] of [...m.state.assignments])
    for (const name of [...containers.keys()]) {
      if (live.get(uid)?.has(name)) continue;
      const released = removeContainer(m.state, uid, name);
      m.lastUpdate.delete(`${uid}/${name}`);
      log.info(
        `RemoveContainer ${kv({ podUID: uid, containerName: name, released: formatCPUSet(released), defaultCPUSet: formatCPUSet(m.state.defaultCPUSet) })}`,
      );
      changed = true;
    }
  if (changed) store(m);
}

/** Upstream reconcileState: each running container of an active pod gets its cpuset when it changed since last given. */
async function reconcileState(m: ManagerContext): Promise<void> {
  const { policy, runtime } = m;
  if (!policy || !runtime) return;
  removeStale(m, runtime.activePods());
  const active = new Set(runtime.activePods().map(podUid));
  for (const c of await runtime.runningContainers()) {
    if (!active.has(c.podUid)) continue;
    const cpus = formatCPUSet(getCPUSetOrDefault(m.state, c.podUid, c.containerName));
    const key = `${c.podUid}/${c.containerName}`;
    if (cpus === "" || m.lastUpdate.get(key) === cpus) continue;
    try {
      await runtime.updateContainerCPUSet(c.id, cpus);
      m.lastUpdate.set(key, cpus);
      log.info(`updated container cpuset ${kv({ containerID: c.id, podUID: c.podUid, containerName: c.containerName, cpuSet: cpus })}`);
    } catch (e) {
      log.error(`failed to update container ${kv({ containerID: c.id, cpuSet: cpus, err: (e as Error).message })}`);
    }
  }
}

function loop(m: ManagerContext): void {
  if (m.stopped) return;
  void reconcileState(m)
    .catch((e) => log.error(`cpu manager reconcile failed ${kv({ err: (e as Error).message })}`))
    .finally(() => {
      if (!m.stopped) m.timer = m.o.clock.setTimeout(() => loop(m), m.o.reconcilePeriodMs);
    });
}

async function start(m: ManagerContext, rt: CPUManagerRuntime): Promise<void> {
  m.runtime = rt;
  log.info(`Starting CPU manager ${kv({ policy: m.policyName, reconcilePeriod: `${m.o.reconcilePeriodMs}ms` })}`);
  m.state = await restoreState(m.o, m.path, m.policyName);
  if (m.policy) {
    try {
      validateState(m.policy, m.state);
    } catch (e) {
      log.error(`invalid state, please drain node and remove policy state file ${kv({ err: (e as Error).message })}`);
      throw e;
    }
  }
  store(m);
  await m.writing;
  if (m.policy && !m.stopped) m.timer = m.o.clock.setTimeout(() => loop(m), m.o.reconcilePeriodMs);
}

/** Allocates every container of the pod, init containers first (upstream Allocate per container at admission). */
function admit(m: ManagerContext, pod: PodLike, activePods: PodLike[]): { reason: string; message: string } | undefined {
  if (!m.policy) return undefined;
  removeStale(m, [...activePods, pod]);
  try {
    for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
      const cpus = allocate(m.policy, m.state, pod, c);
      if (cpus) log.info(`Allocated exclusive CPUs ${kv({ pod: podKey(pod), containerName: c.name, cpuset: formatCPUSet(cpus) })}`);
    }
  } catch (e) {
    log.error(`Allocate error ${kv({ pod: podKey(pod), err: (e as Error).message })}`);
    // admission.GetPodAdmitResult over a plain error: unexpectedAdmissionError.
    return { reason: "UnexpectedAdmissionError", message: `Allocate failed due to ${(e as Error).message}, which is unexpected` };
  } finally {
    store(m);
  }
  return undefined;
}

/** The CPU manager; throws upstream NewManager's errors (unknown policy, no reserved CPU for static). */
export function createCPUManager(o: CPUManagerOptions): CPUManager {
  const policy = policyFrom(o);
  const m: ManagerContext = {
    o,
    policy,
    policyName: policy ? "static" : "none",
    path: `${o.stateDir}/${CPU_MANAGER_STATE_FILE}`,
    state: emptyState(),
    stopped: false,
    lastUpdate: new Map(),
    writing: Promise.resolve(),
  };
  return {
    policyName: m.policyName,
    start: (rt) => start(m, rt),
    stop() {
      m.stopped = true;
      if (m.timer) o.clock.clearTimeout(m.timer);
    },
    admit: (pod, active) => admit(m, pod, active),
    cpuAffinity(uid, name) {
      if (!m.policy) return "";
      const cpus = formatCPUSet(getCPUSetOrDefault(m.state, uid, name));
      if (getCPUSet(m.state, uid, name)) m.lastUpdate.set(`${uid}/${name}`, cpus);
      return cpus;
    },
    exclusiveCPUs: (uid, name) => getCPUSet(m.state, uid, name) ?? [],
    allocatableCPUs: () => (m.policy ? allocatableCPUs(m.policy) : []),
    reconcile: () => reconcileState(m),
    flush: () => m.writing,
  };
}

/** Upstream NewCheckpointState: the file's state, or a new empty one when there is no file; throws upstream's refusal. */
async function restoreState(o: CPUManagerOptions, path: string, policyName: CPUManagerPolicyName): Promise<CPUManagerState> {
  const text = await o.readFile(path);
  if (text === undefined) return emptyState();
  try {
    return decodeCheckpoint(text, policyName);
  } catch (e) {
    throw new Error(restoreErrorMessage((e as Error).message, path));
  }
}
