import type { PodSandbox } from "../cri/client.ts";
import type { PodLike } from "../pod/pod-like.ts";
import { cgroupMemoryStats } from "./cgroup.ts";
import { createCgroupStats } from "./cgroup-stats.ts";
import { createCriListing, criContainerName, isoFromNs, makeContainerStats, type CriSnapshot } from "./cri-stats.ts";
import { createPodStorageStats, type VolumeDeadlines } from "./pod-storage.ts";
import { ephemeralStorage, podLogsDirectory, type CgroupDirs } from "./pods.ts";
import { createSummaryContext, type SummaryPass } from "./summary-context.ts";
import type { SummaryProviderOptions } from "./summary-options.ts";
import {
  SYSTEM_CONTAINER_KUBELET,
  SYSTEM_CONTAINER_PODS,
  type ContainerStats,
  type NodeStats,
  type PodStats,
  type Summary,
  type SummaryRequest,
} from "./summary.ts";

export type { SummaryCri, SummaryProviderOptions } from "./summary-options.ts";

export interface SummaryProvider {
  summary(req?: SummaryRequest): Promise<Summary>;
  /** Stats of one active pod, or undefined when no active pod has that UID. */
  podStats(uid: string): Promise<PodStats | undefined>;
  /**
   * The pod's running containers with their memory read now from their cgroups (synchronous, a few
   * small reads): the eviction message's per-container figures. A memory-only summary carries the
   * containers of the last full one, whose figures may predate the ramp that crossed the line, and none
   * for a pod started since. Undefined when neither the pod's status nor the runtime's listing knows its containers yet.
   */
  containerMemory(pod: PodLike): ContainerStats[] | undefined;
  /** The pod as the last full summary saw it (containers, cpu, volumes), no I/O; undefined before one did. */
  lastPodStats(uid: string): PodStats | undefined;
}

export function createSummaryProvider(opts: SummaryProviderOptions): SummaryProvider {
  const ctx = createSummaryContext(opts);
  const { clock, attempt } = ctx;
  const cgroups = createCgroupStats(ctx);
  const cri = createCriListing(ctx);
  const storage = createPodStorageStats(ctx);
  // The last full summary, the base of memory-only ones.
  let last: { summary: Summary; podsByUid: Map<string, PodStats> } | undefined;

  /** One pod's stats (upstream summary.go: a PodStats per active pod), field by field in the API's order. */
  async function onePod(pod: PodLike, node: NodeStats, snap: CriSnapshot | undefined, pass: SummaryPass, deadlines: VolumeDeadlines): Promise<PodStats> {
    const uid = pod.metadata.uid ?? "";
    const ref = { name: pod.metadata.name, namespace: pod.metadata.namespace ?? "default", uid };
    const stats: PodStats = { podRef: ref };
    const nodefs = node.fs;
    // Start time: the sandbox's creation, else the pod status's.
    const startTime = podStartTime(pod, snap?.sandboxByUid.get(uid));
    if (startTime) stats.startTime = startTime;
    // Memory, cpu, processes, network: the pod's cgroup (none yet, or none any more: nothing to report, nothing wrong).
    const dirs = cgroups.podDirs(pod, uid);
    if (dirs) Object.assign(stats, cgroups.podStats(pod, uid, dirs, pass));
    // Containers: the runtime's listing, else the spec's with their logs alone.
    const scope: PodScope = { pod, uid, dirs, logsDir: podLogsDirectory(ctx.podLogsDir, ref), node, pass };
    const containers = snap ? listedContainers(scope, snap) : specContainers(scope);
    if (containers.length > 0 || snap) stats.containers = containers;
    // Volumes: emptyDirs' cached walks, then the persistent and CSI volumes' figures.
    const { volumes, diskVolumes } = await storage.volumes(pod, uid, nodefs, pass, deadlines);
    const persistent = opts.volumeStats ? await opts.volumeStats(pod, uid).catch(() => []) : [];
    if (volumes.length + persistent.length > 0) stats.volume = [...volumes, ...persistent];
    // Ephemeral storage: containers' rootfs and logs, disk volumes, the pod's own logs.
    const podLogs = storage.podLogs(uid, scope.logsDir, nodefs, pass);
    stats["ephemeral-storage"] = ephemeralStorage(containers, diskVolumes, podLogs, nodefs, pass.time);
    return stats;
  }

  /** The runtime's running containers of a pod, each from its cgroup (found under the pod's) or the runtime's stats. */
  function listedContainers({ uid, dirs, logsDir, node, pass }: PodScope, snap: CriSnapshot): ContainerStats[] {
    const rootfsFs = node.runtime?.containerFs ?? node.runtime?.imageFs ?? node.fs;
    return (snap.containersByUid.get(uid) ?? []).map((c) => {
      const name = criContainerName(c);
      const cdirs = dirs && cgroups.containerDirsOf(dirs, c.id, pass.seen);
      const cgroup = cdirs && cgroups.containerStats(uid, name, cdirs, pass);
      const logs = storage.containerLogs(uid, name, logsDir, node.fs, pass);
      return makeContainerStats(c, { criStats: snap.statsById.get(c.id), cgroup, logs, rootfsFs, time: pass.time });
    });
  }

  /** No runtime view: the spec's containers, with what the node alone can tell (their logs). */
  function specContainers({ pod, uid, logsDir, node, pass }: PodScope): ContainerStats[] {
    const containers: ContainerStats[] = [];
    for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
      const logs = storage.containerLogs(uid, c.name, logsDir, node.fs, pass);
      if (logs) containers.push({ name: c.name, logs });
    }
    return containers;
  }

  /** The node's stats (KERNEL's), with its cpu, the "pods" and "kubelet" system containers filled in from cgroups when missing. */
  function nodeLevel(pass: SummaryPass): NodeStats {
    const node: NodeStats = { ...opts.nodeStats(), nodeName: opts.nodeName };
    if (!node.cpu) {
      const cpu = attempt("node", "cpu", () => cgroups.sampleCpu(pass, cgroups.dirsOf("")));
      if (cpu) node.cpu = cpu;
    }
    if (opts.podsCgroup !== undefined) node.systemContainers = withPodsContainer(node.systemContainers, cgroups.dirsOf(opts.podsCgroup), pass);
    if (!node.systemContainers?.some((c) => c.name === SYSTEM_CONTAINER_KUBELET)) {
      const kubelet = cgroups.kubeletContainer(pass);
      if (kubelet) node.systemContainers = [kubelet, ...(node.systemContainers ?? [])];
    }
    return node;
  }

  /** The system containers with a "pods" one: KERNEL's (its cpu added when missing), else read from the kubepods cgroup. */
  function withPodsContainer(systemContainers: readonly ContainerStats[] | undefined, dirs: CgroupDirs, pass: SummaryPass): ContainerStats[] {
    const sys = [...(systemContainers ?? [])];
    let pods = sys.find((c) => c.name === SYSTEM_CONTAINER_PODS);
    if (!pods) {
      pods = { name: SYSTEM_CONTAINER_PODS };
      const memory = attempt("node", "pods memory", () => cgroupMemoryStats(dirs.memory, pass.time));
      if (memory) pods.memory = memory;
      sys.push(pods);
    } else {
      pods = { ...pods };
      sys[sys.findIndex((c) => c.name === SYSTEM_CONTAINER_PODS)] = pods;
    }
    if (!pods.cpu) {
      const cpu = attempt("node", "pods cpu", () => cgroups.sampleCpu(pass, dirs));
      if (cpu) pods.cpu = cpu;
    }
    return sys;
  }

  async function build(only?: string, freshVolumes = false): Promise<Summary> {
    // No pod, no use for the CRI listing (three calls, one of them ListContainerStats): an empty
    // node's eviction loop does not list the runtime every 10 s.
    const snap = opts.activePods().length > 0 ? await cri.snapshot() : undefined;
    // Sampled after the (possibly slow, first-time) CRI wait so CPU rates use the real read time.
    const nowMs = clock.now();
    const pass: SummaryPass = { time: new Date(nowMs).toISOString(), nowMs, round: new Map(), seen: new Set() };
    const all = opts.activePods();
    const pods = only === undefined ? all : all.filter((p) => p.metadata.uid === only);
    const node = nodeLevel(pass);
    const deadlines = storage.deadlines(freshVolumes);
    const results = await Promise.all(
      pods.map((pod) =>
        onePod(pod, node, snap, pass, deadlines).catch((e) => {
          ctx.fail(pod.metadata.uid ?? pod.metadata.name, "pod", e);
          return undefined;
        }),
      ),
    );
    deadlines.clear();
    const out = results.filter((p): p is PodStats => p !== undefined);
    if (only === undefined) {
      last = { summary: { node, pods: out }, podsByUid: new Map(out.map((p) => [p.podRef.uid, p])) };
      forgetUnseen(pass, all);
    } else {
      cgroups.commitRound(pass.round, false);
    }
    return { node, pods: out };
  }

  /** A full summary saw every live cgroup and volume: forget the rest. */
  function forgetUnseen(pass: SummaryPass, active: readonly PodLike[]): void {
    cgroups.commitRound(pass.round, true);
    storage.retain(pass.seen);
    const live = new Set(active.map((p) => p.metadata.uid ?? ""));
    live.add("node");
    ctx.forgetReported(live);
    cgroups.forget(pass.seen, live);
  }

  /** Synchronous: fresh memory over the last full summary (see the header). */
  function buildMemoryOnly(base: Summary, podsByUid: ReadonlyMap<string, PodStats>): Summary {
    const time = new Date(clock.now()).toISOString();
    const node = freshNodeMemory(base.node, time);
    const pods: PodStats[] = [];
    for (const pod of opts.activePods()) {
      const uid = pod.metadata.uid ?? "";
      const prev = podsByUid.get(uid);
      const stats: PodStats = prev ? { ...prev } : { podRef: { name: pod.metadata.name, namespace: pod.metadata.namespace ?? "default", uid } };
      const memory = cgroups.freshPodMemory(pod, uid, time);
      if (memory) stats.memory = memory;
      else delete stats.memory;
      pods.push(stats);
    }
    return { node, pods };
  }

  /** The last full summary's node with its memory and the "pods" container's read now. */
  function freshNodeMemory(base: NodeStats, time: string): NodeStats {
    const fresh = attempt("node", "node stats", () => opts.nodeStats({ memoryOnly: true }));
    const node: NodeStats = { ...base };
    if (fresh?.memory) node.memory = fresh.memory;
    if (node.systemContainers || opts.podsCgroup !== undefined) {
      const freshPods =
        fresh?.systemContainers?.find((c) => c.name === SYSTEM_CONTAINER_PODS)?.memory ??
        (opts.podsCgroup === undefined ? undefined : attempt("node", "pods memory", () => cgroupMemoryStats(cgroups.dirsOf(opts.podsCgroup!).memory, time)));
      const sys = node.systemContainers ? node.systemContainers.slice() : [];
      const i = sys.findIndex((c) => c.name === SYSTEM_CONTAINER_PODS);
      if (i >= 0) sys[i] = freshPods ? { ...sys[i]!, memory: freshPods } : sys[i]!;
      else if (freshPods) sys.push({ name: SYSTEM_CONTAINER_PODS, memory: freshPods });
      node.systemContainers = sys;
    }
    return node;
  }

  /**
   * The pod's running containers: its status's (current as the pod workers see them) and the listing's
   * others; undefined when neither knows any.
   */
  function runningContainers(uid: string, snap: CriSnapshot | undefined): { id: string; name: string }[] | undefined {
    const listed = snap?.containersByUid.get(uid)?.map((c) => ({ id: c.id, name: criContainerName(c) }));
    const status = opts.runningContainers?.(uid) ?? [];
    if (status.length === 0) return listed;
    const named = new Set(status.map((c) => c.name));
    return [...status, ...(listed ?? []).filter((c) => !named.has(c.name))];
  }

  // Concurrent callers (eviction + HTTP) share one in-flight summary.
  let inflight: Promise<Summary> | undefined;
  const full = () => {
    inflight ??= build().finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
  return {
    summary(req) {
      // Never shares the in-flight full build: that one may have read memory before the event that
      // asks for this summary.
      if (req?.memoryOnly && last) return Promise.resolve(buildMemoryOnly(last.summary, last.podsByUid));
      // Not shared either: the in-flight build may serve cached volumes.
      if (req?.freshVolumes) return build(undefined, true);
      return full();
    },
    async podStats(uid) {
      if (!opts.activePods().some((p) => p.metadata.uid === uid)) return undefined;
      return (await build(uid)).pods[0];
    },
    containerMemory(pod) {
      const uid = pod.metadata.uid ?? "";
      const containers = runningContainers(uid, cri.last());
      if (!containers) return undefined;
      const dirs = cgroups.podDirs(pod, uid);
      if (dirs === undefined) return undefined;
      const time = new Date(clock.now()).toISOString();
      return containers.map(({ id, name }) => {
        const cdirs = cgroups.knownContainerDirs(dirs, id);
        const memory = cdirs && attempt(uid, `container ${name} memory`, () => cgroupMemoryStats(cdirs.memory, time));
        return memory ? { name, memory } : { name };
      });
    },
    lastPodStats: (uid) => last?.podsByUid.get(uid),
  };
}

/** What one pod's container readers share within a pass. */
interface PodScope {
  pod: PodLike;
  uid: string;
  /** The pod's cgroup, under which its containers' are found; undefined: none (yet, or any more). */
  dirs: CgroupDirs | undefined;
  /** <podLogsDir>/<namespace>_<name>_<uid>. */
  logsDir: string;
  node: NodeStats;
  pass: SummaryPass;
}

/** The pod's start time: its sandbox's creation as the runtime lists it, else the pod status's startTime. */
function podStartTime(pod: PodLike, sandbox: PodSandbox | undefined): string | undefined {
  if (sandbox?.createdAt) return isoFromNs(sandbox.createdAt);
  return (pod.status as { startTime?: string } | undefined)?.startTime;
}
