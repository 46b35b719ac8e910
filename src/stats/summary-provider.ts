// The Summary API provider (upstream pkg/kubelet/server/stats/summary.go + pkg/kubelet/stats
// cri_stats_provider.go): node stats from KERNEL's node provider, then one PodStats per active pod
// from its cgroups (memory, cpu, pids), its log directory, its emptyDir volumes and — when a CRI
// client is given — the runtime's container list and writable-layer usage. Serves the eviction
// manager and the HTTP /stats/summary.
//
// Cost: per pod a handful of small cgroup file reads, one readdir + stats of its log dirs, and
// cached volume walks (re-walked at most every volumeTtlMs, stale value served meanwhile). The CRI
// listing is cached for criTtlMs and refreshed in the background, so a slow or absent runtime never
// delays a summary after the first one. One pod's bad data never fails the summary: the field is
// omitted and the reason logged once.
//
// summary({ memoryOnly: true }) is the pressure path's (a kernel memcg event): node, allocatable
// (`pods`) and per-pod memory read fresh from the cgroups — a few small file reads, no await —
// and everything else (fs, rlimit, cpu, containers, volumes, logs) taken from the last full summary
// with its original timestamps, so eviction's staleness filter does not act twice on a disk or pid
// sample it already saw. Stats that old are what the periodic path works with anyway.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { realClock, type Clock } from "../clock.ts";
import type { ContainerStats as CriContainerStats, CriClient, Container as CriContainer, PodSandbox } from "../cri/client.ts";
import { kv, log } from "../log.ts";
import type { PodLike } from "../pod/pod-like.ts";
import { cgroupMemoryStats } from "./cgroup.ts";
import { createKeptFiles } from "./kept-files.ts";
import { readNetworkStats } from "./network.ts";
import { readOwnCgroupDirs } from "./own-cgroup.ts";
import type { NodeStatsRequest } from "./node.ts";
import { createDirUsageCache, createFlatDirUsageReader, type DirUsageCache } from "./dir-usage.ts";
import {
  cgroupDirs,
  cpuStats,
  DEFAULT_CGROUP_MOUNT,
  DEFAULT_POD_LOGS_DIR,
  emptyDirPath,
  ephemeralStorage,
  fsUsage,
  nextCpuRate,
  podLogsDirectory,
  podProcessCount,
  firstPid,
  readCpuUsageNs,
  type CgroupDirs,
  type CpuRateState,
} from "./pods.ts";
import {
  SYSTEM_CONTAINER_KUBELET,
  SYSTEM_CONTAINER_PODS,
  type ContainerStats,
  type CPUStats,
  type FsStats,
  type MemoryStats,
  type NodeStats,
  type PodStats,
  type Summary,
  type SummaryRequest,
  type VolumeStats,
} from "./summary.ts";

// Labels the kubelet puts on CRI objects (upstream kubelet/types/labels.go); same strings as kuberuntime/labels.ts.
const POD_UID_LABEL = "io.kubernetes.pod.uid";
const CONTAINER_NAME_LABEL = "io.kubernetes.container.name";
/** A listed container's name: its metadata, else the kubelet's label, else its id. */
const criContainerName = (c: CriContainer): string => c.metadata?.name ?? c.labels?.[CONTAINER_NAME_LABEL] ?? c.id;

export type SummaryCri = Pick<CriClient, "listPodSandbox" | "listContainers" | "listContainerStats">;

export interface SummaryProviderOptions {
  nodeName: string;
  /** KERNEL's createNodeStatsProvider(...).nodeStats; asked for memory only on the pressure path. */
  nodeStats: (req?: NodeStatsRequest) => NodeStats;
  /** Pods admitted and not yet terminated (PODS' pod manager). */
  activePods: () => readonly PodLike[];
  /** The pod's cgroup relative to each controller's mount ("kubepods/burstable/pod<uid>"); undefined = none yet. */
  podCgroupPath: (pod: PodLike) => string | undefined;
  cri?: SummaryCri;
  /** kubelet podLogsDir (default /var/log/pods). */
  podLogsDir?: string;
  /** kubelet --root-dir: emptyDir volumes live in <rootDir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>. */
  rootDir: string;
  /** Where cgroup controllers are mounted (default /sys/fs/cgroup; v1 per-controller dirs or a v2 unified mount). */
  cgroupMountRoot?: string;
  /** Where /proc is (tests): a pod's network is read from /proc/<one of its pids>/net/dev. */
  procRoot?: string;
  /** The "kubelet" system container: bunlet's own cgroup (from /proc/self/cgroup, default) or none (false). */
  kubeletContainer?: boolean;
  /** Start time of the "kubelet" system container (default: this process's start). */
  kubeletStartTime?: string;
  /** kubepods cgroup (relative, e.g. "kubepods"): adds the "pods" system container when nodeStats has none, and its cpu. */
  podsCgroup?: string;
  clock?: Pick<Clock, "now">;
  /** A volume directory is re-walked at most this often (default 10 s). */
  volumeTtlMs?: number;
  /** The CRI listing is reused for this long (default 2 s) and refreshed in the background. */
  criTtlMs?: number;
  /** The first summary waits this long for CRI at most (default 2 s). */
  criTimeoutMs?: number;
  /** How long a summary waits for the first walk of a volume directory (default 250 ms); later walks never block. */
  volumeWaitMs?: number;
  /** Minimum window for usageNanoCores (default 1 s). */
  minCpuWindowMs?: number;
  /** A pod's field could not be read (called once per pod, field and message); default: log.warn. */
  onError?: (message: string) => void;
  dirUsage?: DirUsageCache;
}

/** How long a freshVolumes summary waits for each volume's walk before serving the cached value. */
const FRESH_VOLUME_WAIT_MS = 2000;

export interface SummaryProvider {
  summary(req?: SummaryRequest): Promise<Summary>;
  /** Stats of one active pod, or undefined when no active pod has that UID. */
  podStats(uid: string): Promise<PodStats | undefined>;
  /**
   * The pod's running containers with their memory read now from their cgroups (synchronous, a few
   * small reads): the eviction message's per-container figures. A memory-only summary carries the
   * containers of the last full one, whose figures may predate the ramp that crossed the line, and none
   * for a pod started since. Undefined when the runtime's listing does not know the pod yet.
   */
  containerMemory(pod: PodLike): ContainerStats[] | undefined;
  /** The pod as the last full summary saw it (containers, cpu, volumes), no I/O; undefined before one did. */
  lastPodStats(uid: string): PodStats | undefined;
}

/** The runtime's view of the node, grouped by pod UID. */
interface CriSnapshot {
  sandboxByUid: Map<string, PodSandbox>;
  containersByUid: Map<string, CriContainer[]>;
  statsById: Map<string, CriContainerStats>;
}

const isoFromNs = (ns: number) => new Date(Math.floor(ns / 1e6)).toISOString();
const u64 = (v: { value: number } | null | undefined) => (v ? v.value : undefined);

/** Pure: groups a CRI listing by pod UID: the newest sandbox per pod, running containers only (upstream removeTerminatedContainers). */
export function groupCriListing(sandboxes: readonly PodSandbox[], containers: readonly CriContainer[], stats: readonly CriContainerStats[]): CriSnapshot {
  const sandboxByUid = new Map<string, PodSandbox>();
  const uidBySandbox = new Map<string, string>();
  for (const s of sandboxes) {
    const uid = s.metadata?.uid || s.labels?.[POD_UID_LABEL];
    if (!uid) continue;
    uidBySandbox.set(s.id, uid);
    const cur = sandboxByUid.get(uid);
    if (!cur || s.createdAt > cur.createdAt) sandboxByUid.set(uid, s);
  }
  const containersByUid = new Map<string, CriContainer[]>();
  for (const c of containers) {
    if (c.state !== "CONTAINER_RUNNING") continue;
    const uid = uidBySandbox.get(c.podSandboxId) ?? c.labels?.[POD_UID_LABEL];
    if (!uid) continue;
    const list = containersByUid.get(uid) ?? [];
    list.push(c);
    containersByUid.set(uid, list);
  }
  const statsById = new Map<string, CriContainerStats>();
  for (const s of stats) if (s.attributes?.id) statsById.set(s.attributes.id, s);
  return { sandboxByUid, containersByUid, statsById };
}

/** Pure: CRI container stats → Summary memory (undefined when the runtime gave none). */
export function criMemoryStats(s: CriContainerStats | undefined, time: string): MemoryStats | undefined {
  const m = s?.memory;
  if (!m) return undefined;
  const out: MemoryStats = { time };
  const set = (k: keyof Omit<MemoryStats, "time">, v: { value: number } | null) => {
    const n = u64(v);
    if (n !== undefined) out[k] = n;
  };
  set("usageBytes", m.usageBytes);
  set("workingSetBytes", m.workingSetBytes);
  set("availableBytes", m.availableBytes);
  set("rssBytes", m.rssBytes);
  set("pageFaults", m.pageFaults);
  set("majorPageFaults", m.majorPageFaults);
  return out;
}

export function criCpuStats(s: CriContainerStats | undefined, time: string): CPUStats | undefined {
  const c = s?.cpu;
  if (!c) return undefined;
  const out: CPUStats = { time };
  const total = u64(c.usageCoreNanoSeconds);
  if (total !== undefined) out.usageCoreNanoSeconds = total;
  const rate = u64(c.usageNanoCores);
  if (rate !== undefined) out.usageNanoCores = rate;
  return out;
}

const isEnoent = (e: unknown) => (e as NodeJS.ErrnoException)?.code === "ENOENT";

export function createSummaryProvider(opts: SummaryProviderOptions): SummaryProvider {
  const clock = opts.clock ?? realClock;
  const mountRoot = opts.cgroupMountRoot ?? DEFAULT_CGROUP_MOUNT;
  const podLogsDir = opts.podLogsDir ?? DEFAULT_POD_LOGS_DIR;
  const criTtlMs = opts.criTtlMs ?? 2000;
  const criTimeoutMs = opts.criTimeoutMs ?? 2000;
  const volumeWaitMs = opts.volumeWaitMs ?? 250;
  const dirUsage = opts.dirUsage ?? createDirUsageCache({ now: () => clock.now(), ttlMs: opts.volumeTtlMs });
  const onError = opts.onError ?? ((m: string) => log.warn(m));
  // Cgroup v1 vs v2 is a property of the mount: detect once.
  let cgroupVersion: 1 | 2 | undefined;
  const dirsOf = (rel: string): CgroupDirs => {
    const d = cgroupDirs(mountRoot, rel, cgroupVersion);
    cgroupVersion = d.version;
    return d;
  };

  // "Log once": a (pod, field, message) seen before stays quiet until the pod goes away.
  const reported = new Map<string, Set<string>>();
  const fail = (uid: string, field: string, e: unknown) => {
    const msg = (e as Error)?.message ?? String(e);
    const seen = reported.get(uid) ?? new Set<string>();
    reported.set(uid, seen);
    const key = `${field}\0${msg}`;
    if (seen.has(key)) return;
    seen.add(key);
    onError(`pod stats: field omitted ${kv({ uid, field, error: msg })}`);
  };
  /** Runs one reader; ENOENT (cgroup or dir not created yet, or gone) omits the field silently. */
  const attempt = <T>(uid: string, field: string, fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (e) {
      if (!isEnoent(e)) fail(uid, field, e);
      return undefined;
    }
  };

  // CPU rate state per cgroup directory. Each build samples into its own map (builds may overlap);
  // a full summary then replaces the state, so cgroups that went away are forgotten.
  let cpuStates = new Map<string, CpuRateState>();
  type CpuRound = Map<string, CpuRateState>;
  const sampleCpu = (round: CpuRound, dirs: CgroupDirs, time: string, nowMs: number): CPUStats => {
    const sample = { usageNs: readCpuUsageNs(dirs), timeMs: nowMs };
    const state = nextCpuRate(round.get(dirs.cpu) ?? cpuStates.get(dirs.cpu), sample, opts.minCpuWindowMs);
    round.set(dirs.cpu, state);
    return cpuStats(sample, state, time);
  };

  // The last full summary, the base of memory-only ones; the memory cgroup of each pod it found.
  let last: { summary: Summary; podsByUid: Map<string, PodStats> } | undefined;
  const memoryDirs = new Map<string, string>();
  /** Pod memory files kept open for the pressure path (stats/kept-files.ts); 3 per pod. */
  const podFiles = createKeptFiles(4096);
  // Each running container's cgroup as found once (two existsSync and four joins per container per
  // summary otherwise); a full summary forgets the containers it did not see.
  const containerDirs = new Map<string, CgroupDirs>();
  const containerDirsOf = (pod: CgroupDirs, id: string, seen: Set<string>): CgroupDirs | undefined => {
    const key = `${pod.memory}\0${id}`;
    seen.add(key);
    let d = containerDirs.get(key);
    if (d === undefined) {
      d = containerCgroupDirs(pod, id);
      if (d) containerDirs.set(key, d);
    }
    return d;
  };

  // CRI listing cache.
  let cri: { snapshot?: CriSnapshot; at: number; pending?: Promise<CriSnapshot>; everTried: boolean; failed?: string } = { at: 0, everTried: false };
  const refreshCri = (client: SummaryCri): Promise<CriSnapshot> => {
    if (cri.pending) return cri.pending;
    const started = clock.now();
    cri.everTried = true;
    cri.pending = Promise.all([client.listPodSandbox(), client.listContainers({ state: { state: "CONTAINER_RUNNING" } }), client.listContainerStats()])
      .then(([s, c, st]) => {
        const snapshot = groupCriListing(s, c, st);
        if (cri.failed) log.info(`pod stats: CRI listing works again ${kv({ after: cri.failed })}`);
        cri = { ...cri, snapshot, at: started, failed: undefined };
        return snapshot;
      })
      .catch((e) => {
        const msg = (e as Error).message;
        if (cri.failed !== msg) log.warn(`pod stats: CRI listing failed; containers, rootfs and sandbox start times are omitted or stale ${kv({ error: msg })}`);
        cri.failed = msg;
        throw e;
      })
      .finally(() => {
        cri.pending = undefined;
      });
    return cri.pending;
  };
  const criSnapshot = async (): Promise<CriSnapshot | undefined> => {
    const client = opts.cri;
    if (!client) return undefined;
    const fresh = cri.snapshot && clock.now() - cri.at < criTtlMs;
    if (fresh) return cri.snapshot;
    if (cri.everTried) {
      // Never make a summary wait on the runtime twice: serve what we have, refresh behind.
      refreshCri(client).catch(() => undefined);
      return cri.snapshot;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), criTimeoutMs)));
    try {
      return await Promise.race([refreshCri(client).catch(() => undefined), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };

  const logDirs = createFlatDirUsageReader();
  const logStats = (dir: string, nodefs: FsStats | undefined, time: string, filesOnly: boolean, seen: Set<string>): FsStats => {
    seen.add(dir);
    return fsUsage(nodefs, logDirs.usage(dir, { filesOnly }), time);
  };

  async function onePod(pod: PodLike, node: NodeStats, snap: CriSnapshot | undefined, time: string, nowMs: number, seenDirs: Set<string>, firstWalkDeadline: Promise<undefined>, round: CpuRound, freshDeadline?: Promise<undefined>): Promise<PodStats> {
    const uid = pod.metadata.uid ?? "";
    const ref = { name: pod.metadata.name, namespace: pod.metadata.namespace ?? "default", uid };
    const stats: PodStats = { podRef: ref };
    const nodefs = node.fs;
    const rootfsFs = node.runtime?.containerFs ?? node.runtime?.imageFs ?? nodefs;
    const sandbox = snap?.sandboxByUid.get(uid);
    const status = pod.status as { startTime?: string } | undefined;
    if (sandbox?.createdAt) stats.startTime = isoFromNs(sandbox.createdAt);
    else if (status?.startTime) stats.startTime = status.startTime;

    const rel = attempt(uid, "cgroup", () => opts.podCgroupPath(pod));
    // No cgroup yet (pod not started) or any more (torn down): nothing to report, nothing wrong.
    const dirs = rel === undefined ? undefined : dirsOf(rel);
    if (dirs && existsSync(dirs.memory)) {
      memoryDirs.set(uid, dirs.memory);
      const memory = attempt(uid, "memory", () => cgroupMemoryStats(dirs.memory, time, podFiles));
      if (memory) stats.memory = memory;
      const cpu = attempt(uid, "cpu", () => sampleCpu(round, dirs, time, nowMs));
      if (cpu) stats.cpu = cpu;
      const count = attempt(uid, "process_stats", () => podProcessCount(dirs));
      if (count !== undefined) stats.process_stats = { process_count: count };
      // The pod's own network namespace (a hostNetwork pod's is the node's, reported there).
      if (!(pod.spec as { hostNetwork?: boolean }).hostNetwork) {
        const network = attempt(uid, "network", () => {
          const pid = firstPid(dirs.memory);
          return pid === undefined ? undefined : readNetworkStats(pid, time, opts.procRoot);
        });
        if (network) stats.network = network;
      }
    }

    const logsDir = podLogsDirectory(podLogsDir, ref);
    const containers: ContainerStats[] = [];
    const criContainers = snap?.containersByUid.get(uid);
    if (snap) {
      for (const c of criContainers ?? []) {
        const name = criContainerName(c);
        const cs: ContainerStats = { name };
        if (c.createdAt) cs.startTime = isoFromNs(c.createdAt);
        const criStats = snap.statsById.get(c.id);
        // Prefer the container's own cgroup (same clock and source as the pod's figures).
        const cdirs = dirs && containerDirsOf(dirs, c.id, seenDirs);
        const memory = (cdirs && attempt(uid, `container ${name} memory`, () => cgroupMemoryStats(cdirs.memory, time))) || criMemoryStats(criStats, time);
        if (memory) cs.memory = memory;
        const cpu = (cdirs && attempt(uid, `container ${name} cpu`, () => sampleCpu(round, cdirs, time, nowMs))) || criCpuStats(criStats, time);
        if (cpu) cs.cpu = cpu;
        const wl = criStats?.writableLayer;
        if (wl) cs.rootfs = fsUsage(rootfsFs, { usedBytes: u64(wl.usedBytes) ?? 0, inodesUsed: u64(wl.inodesUsed) ?? 0 }, time);
        const logs = attempt(uid, `container ${name} logs`, () => logStats(join(logsDir, name), nodefs, time, false, seenDirs));
        if (logs) cs.logs = logs;
        containers.push(cs);
      }
    } else {
      // No runtime view: the spec's containers, with what the node alone can tell (their logs).
      for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
        const logs = attempt(uid, `container ${c.name} logs`, () => logStats(join(logsDir, c.name), nodefs, time, false, seenDirs));
        if (logs) containers.push({ name: c.name, logs });
      }
    }
    if (containers.length > 0 || snap) stats.containers = containers;

    const volumes: VolumeStats[] = [];
    const diskVolumes: VolumeStats[] = [];
    for (const v of pod.spec.volumes ?? []) {
      if (!v.emptyDir || !uid) continue;
      const path = emptyDirPath(opts.rootDir, uid, v.name);
      seenDirs.add(path);
      const memoryBacked = v.emptyDir.medium === "Memory";
      let usage;
      try {
        // A never-walked big tree must not hold up the summary: it lands in the cache for the next one.
        if (freshDeadline) usage = await Promise.race([dirUsage.get(path, { fresh: true }), freshDeadline]);
        usage ??= await Promise.race([dirUsage.get(path), firstWalkDeadline]);
      } catch (e) {
        if (!isEnoent(e)) fail(uid, `volume ${v.name}`, e);
        continue;
      }
      if (!usage) continue;
      // A memory-backed emptyDir has no disk capacity: its pages are charged to the pod's memory cgroup.
      const vs: VolumeStats = { name: v.name, ...fsUsage(memoryBacked ? undefined : nodefs, usage, time) };
      volumes.push(vs);
      if (!memoryBacked) diskVolumes.push(vs);
    }
    if (volumes.length > 0) stats.volume = volumes;

    const podLogs = attempt(uid, "pod logs", () => logStats(logsDir, nodefs, time, true, seenDirs));
    stats["ephemeral-storage"] = ephemeralStorage(containers, diskVolumes, podLogs, nodefs, time);
    return stats;
  }

  // bunlet's own cgroup, found once (and not again when /proc/self/cgroup could not be read).
  let kubeletDirs: CgroupDirs | null | undefined = opts.kubeletContainer === false ? null : undefined;
  const kubeletStartTime = opts.kubeletStartTime ?? new Date(performance.timeOrigin).toISOString();
  const kubeletContainer = (time: string, nowMs: number, round: CpuRound): ContainerStats | undefined => {
    if (kubeletDirs === undefined) {
      kubeletDirs = attempt("node", "kubelet cgroup", () => {
        const version = cgroupVersion ?? cgroupDirs(mountRoot, "").version;
        return readOwnCgroupDirs(mountRoot, version, opts.procRoot);
      }) ?? null;
    }
    if (!kubeletDirs) return undefined;
    const dirs = kubeletDirs;
    const c: ContainerStats = { name: SYSTEM_CONTAINER_KUBELET, startTime: kubeletStartTime };
    const memory = attempt("node", "kubelet memory", () => cgroupMemoryStats(dirs.memory, time));
    if (memory) c.memory = memory;
    const cpu = attempt("node", "kubelet cpu", () => sampleCpu(round, dirs, time, nowMs));
    if (cpu) c.cpu = cpu;
    return c;
  };

  function nodeLevel(time: string, nowMs: number, round: CpuRound): NodeStats {
    const node: NodeStats = { ...opts.nodeStats(), nodeName: opts.nodeName };
    if (!node.cpu) {
      const cpu = attempt("node", "cpu", () => sampleCpu(round, dirsOf(""), time, nowMs));
      if (cpu) node.cpu = cpu;
    }
    if (opts.podsCgroup !== undefined) {
      const dirs = dirsOf(opts.podsCgroup);
      const sys = [...(node.systemContainers ?? [])];
      let pods = sys.find((c) => c.name === SYSTEM_CONTAINER_PODS);
      if (!pods) {
        pods = { name: SYSTEM_CONTAINER_PODS };
        const memory = attempt("node", "pods memory", () => cgroupMemoryStats(dirs.memory, time));
        if (memory) pods.memory = memory;
        sys.push(pods);
      } else {
        pods = { ...pods };
        sys[sys.findIndex((c) => c.name === SYSTEM_CONTAINER_PODS)] = pods;
      }
      if (!pods.cpu) {
        const cpu = attempt("node", "pods cpu", () => sampleCpu(round, dirs, time, nowMs));
        if (cpu) pods.cpu = cpu;
      }
      node.systemContainers = sys;
    }
    if (!node.systemContainers?.some((c) => c.name === SYSTEM_CONTAINER_KUBELET)) {
      const kubelet = kubeletContainer(time, nowMs, round);
      if (kubelet) node.systemContainers = [kubelet, ...(node.systemContainers ?? [])];
    }
    return node;
  }

  async function build(only?: string, freshVolumes = false): Promise<Summary> {
    // No pod, no use for the CRI listing (three calls, one of them ListContainerStats): an empty
    // node's eviction loop does not list the runtime every 10 s.
    const snap = opts.activePods().length > 0 ? await criSnapshot() : undefined;
    // Sampled after the (possibly slow, first-time) CRI wait so CPU rates use the real read time.
    const nowMs = clock.now();
    const time = new Date(nowMs).toISOString();
    const all = opts.activePods();
    const pods = only === undefined ? all : all.filter((p) => p.metadata.uid === only);
    const round: CpuRound = new Map();
    const node = nodeLevel(time, nowMs, round);
    const seenDirs = new Set<string>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const firstWalkDeadline = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), volumeWaitMs)));
    let freshTimer: ReturnType<typeof setTimeout> | undefined;
    const freshDeadline = freshVolumes ? new Promise<undefined>((r) => (freshTimer = setTimeout(() => r(undefined), FRESH_VOLUME_WAIT_MS))) : undefined;
    const results = await Promise.all(
      pods.map((pod) =>
        onePod(pod, node, snap, time, nowMs, seenDirs, firstWalkDeadline, round, freshDeadline).catch((e) => {
          fail(pod.metadata.uid ?? pod.metadata.name, "pod", e);
          return undefined;
        }),
      ),
    );
    clearTimeout(timer);
    clearTimeout(freshTimer);
    const out = results.filter((p): p is PodStats => p !== undefined);
    if (only === undefined) {
      // A full summary saw every live cgroup and volume: forget the rest.
      last = { summary: { node, pods: out }, podsByUid: new Map(out.map((p) => [p.podRef.uid, p])) };
      cpuStates = round;
      dirUsage.retain(seenDirs);
      logDirs.retain(seenDirs);
      const live = new Set(all.map((p) => p.metadata.uid ?? ""));
      live.add("node");
      for (const uid of reported.keys()) if (!live.has(uid)) reported.delete(uid);
      for (const key of containerDirs.keys()) if (!seenDirs.has(key)) containerDirs.delete(key);
      for (const [uid, dir] of memoryDirs) {
        if (live.has(uid)) continue;
        memoryDirs.delete(uid);
        podFiles.forget(dir);
      }
    } else {
      for (const [k, v] of round) cpuStates.set(k, v);
    }
    return { node, pods: out };
  }

  /** A pod cgroup that went away since it was found (pod torn down) is no error: the field is omitted. */
  const podMemory = (uid: string, dir: string, time: string): MemoryStats | undefined => {
    try {
      return cgroupMemoryStats(dir, time, podFiles);
    } catch (e) {
      podFiles.forget(dir);
      if (!existsSync(dir)) memoryDirs.delete(uid);
      else if (!isEnoent(e)) fail(uid, "memory", e);
      return undefined;
    }
  };

  /** Synchronous: fresh memory over the last full summary (see the header). */
  function buildMemoryOnly(base: Summary, podsByUid: ReadonlyMap<string, PodStats>): Summary {
    const nowMs = clock.now();
    const time = new Date(nowMs).toISOString();
    const fresh = attempt("node", "node stats", () => opts.nodeStats({ memoryOnly: true }));
    const node: NodeStats = { ...base.node };
    if (fresh?.memory) node.memory = fresh.memory;
    if (node.systemContainers || opts.podsCgroup !== undefined) {
      const freshPods =
        fresh?.systemContainers?.find((c) => c.name === SYSTEM_CONTAINER_PODS)?.memory ??
        (opts.podsCgroup === undefined ? undefined : attempt("node", "pods memory", () => cgroupMemoryStats(dirsOf(opts.podsCgroup!).memory, time)));
      const sys = node.systemContainers ? node.systemContainers.slice() : [];
      const i = sys.findIndex((c) => c.name === SYSTEM_CONTAINER_PODS);
      if (i >= 0) sys[i] = freshPods ? { ...sys[i]!, memory: freshPods } : sys[i]!;
      else if (freshPods) sys.push({ name: SYSTEM_CONTAINER_PODS, memory: freshPods });
      node.systemContainers = sys;
    }
    const active = opts.activePods();
    const pods: PodStats[] = [];
    for (const pod of active) {
      const uid = pod.metadata.uid ?? "";
      const prev = podsByUid.get(uid);
      const stats: PodStats = prev ? { ...prev } : { podRef: { name: pod.metadata.name, namespace: pod.metadata.namespace ?? "default", uid } };
      // The pod's memory cgroup as the last full summary found it; a new pod's is looked up once.
      let dir = memoryDirs.get(uid);
      if (dir === undefined) {
        const rel = attempt(uid, "cgroup", () => opts.podCgroupPath(pod));
        const d = rel === undefined ? undefined : dirsOf(rel).memory;
        if (d !== undefined && existsSync(d)) memoryDirs.set(uid, (dir = d));
      }
      const memory = dir === undefined ? undefined : podMemory(uid, dir, time);
      if (memory) stats.memory = memory;
      else delete stats.memory;
      pods.push(stats);
    }
    return { node, pods };
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
      const listed = cri.snapshot?.containersByUid.get(uid);
      if (!listed) return undefined;
      const rel = attempt(uid, "cgroup", () => opts.podCgroupPath(pod));
      if (rel === undefined) return undefined;
      const dirs = dirsOf(rel);
      const time = new Date(clock.now()).toISOString();
      const out: ContainerStats[] = [];
      for (const c of listed) {
        const name = criContainerName(c);
        const cdirs = containerDirs.get(`${dirs.memory}\0${c.id}`) ?? containerCgroupDirs(dirs, c.id);
        const memory = cdirs && attempt(uid, `container ${name} memory`, () => cgroupMemoryStats(cdirs.memory, time));
        out.push(memory ? { name, memory } : { name });
      }
      return out;
    },
    lastPodStats: (uid) => last?.podsByUid.get(uid),
  };
}

/** A container's cgroup under its pod's: cgroupfs names it by container ID, the systemd driver a cri-containerd-<id>.scope. */
export function containerCgroupDirs(pod: CgroupDirs, id: string): CgroupDirs | undefined {
  for (const name of [id, `cri-containerd-${id}.scope`]) {
    if (existsSync(join(pod.memory, name))) return { version: pod.version, memory: join(pod.memory, name), cpu: join(pod.cpu, name), pids: join(pod.pids, name), io: join(pod.io, name) };
  }
  return undefined;
}
