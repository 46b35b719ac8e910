// The runtime's side of the Summary API (upstream pkg/kubelet/stats/cri_stats_provider.go): one CRI
// listing (sandboxes, running containers, their stats) grouped by pod UID, cached for criTtlMs and refreshed
// behind the summary; and makeContainerStats, a listed container's entry from its cgroup's figures or the runtime's.
import type { ContainerStats as CriContainerStats, Container as CriContainer, PodSandbox } from "../cri/client.ts";
import { kv, log } from "../log.ts";
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from "../pod/kuberuntime/labels.ts";
import { fsUsage } from "./pods.ts";
import type { SummaryContext } from "./summary-context.ts";
import type { SummaryCri } from "./summary-options.ts";
import type { ContainerStats, CPUStats, FsStats, MemoryStats, SwapStats } from "./summary.ts";

/** A listed container's name: its metadata, else the kubelet's label, else its id. */
export const criContainerName = (c: CriContainer): string => c.metadata?.name ?? c.labels?.[CONTAINER_NAME_LABEL] ?? c.id;

/** The runtime's view of the node, grouped by pod UID. */
export interface CriSnapshot {
  sandboxByUid: Map<string, PodSandbox>;
  containersByUid: Map<string, CriContainer[]>;
  statsById: Map<string, CriContainerStats>;
}

export const isoFromNs = (ns: number) => new Date(Math.floor(ns / 1e6)).toISOString();
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

/** What a listed container's stats are made of. */
export interface ContainerStatsSources {
  /** The runtime's ListContainerStats entry for it. */
  criStats: CriContainerStats | undefined;
  /** Its cgroup's figures, each undefined when unreadable; undefined when it has no cgroup found. */
  cgroup: { memory?: MemoryStats; cpu?: CPUStats; swap?: SwapStats } | undefined;
  logs: FsStats | undefined;
  /** The filesystem the writable layer is on (containerfs, else imagefs, else nodefs). */
  rootfsFs: FsStats | undefined;
  time: string;
}

/**
 * Pure: one listed container's stats (upstream makeContainerStats): memory and CPU from its cgroup when
 * read there (same clock and source as the pod's figures), else the runtime's; the writable layer on
 * the runtime's filesystem; its logs; its cgroup's swap.
 */
export function makeContainerStats(c: CriContainer, from: ContainerStatsSources): ContainerStats {
  const { criStats, cgroup, time } = from;
  const cs: ContainerStats = { name: criContainerName(c) };
  if (c.createdAt) cs.startTime = isoFromNs(c.createdAt);
  const memory = cgroup?.memory || criMemoryStats(criStats, time);
  if (memory) cs.memory = memory;
  const cpu = cgroup?.cpu || criCpuStats(criStats, time);
  if (cpu) cs.cpu = cpu;
  const wl = criStats?.writableLayer;
  if (wl) cs.rootfs = fsUsage(from.rootfsFs, { usedBytes: u64(wl.usedBytes) ?? 0, inodesUsed: u64(wl.inodesUsed) ?? 0 }, time);
  if (from.logs) cs.logs = from.logs;
  if (cgroup?.swap) cs.swap = cgroup.swap;
  return cs;
}

export interface CriListing {
  /** The listing, fresh within criTtlMs; after the first try never waited on (served stale, refreshed behind). Undefined without a CRI client. */
  snapshot(): Promise<CriSnapshot | undefined>;
  /** The last listing got, no I/O. */
  last(): CriSnapshot | undefined;
}

export function createCriListing(ctx: SummaryContext): CriListing {
  const { clock } = ctx;
  const criTtlMs = ctx.opts.criTtlMs ?? 2000;
  const criTimeoutMs = ctx.opts.criTimeoutMs ?? 2000;
  let cri: { snapshot?: CriSnapshot; at: number; pending?: Promise<CriSnapshot>; everTried: boolean; failed?: string } = { at: 0, everTried: false };
  const refresh = (client: SummaryCri): Promise<CriSnapshot> => {
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
        if (cri.failed !== msg)
          log.warn(`pod stats: CRI listing failed; containers, rootfs and sandbox start times are omitted or stale ${kv({ error: msg })}`);
        cri.failed = msg;
        throw e;
      })
      .finally(() => {
        cri.pending = undefined;
      });
    return cri.pending;
  };
  return {
    async snapshot() {
      const client = ctx.opts.cri;
      if (!client) return undefined;
      const fresh = cri.snapshot && clock.now() - cri.at < criTtlMs;
      if (fresh) return cri.snapshot;
      if (cri.everTried) {
        // Never make a summary wait on the runtime twice: serve what we have, refresh behind.
        refresh(client).catch(() => undefined);
        return cri.snapshot;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), criTimeoutMs)));
      try {
        return await Promise.race([refresh(client).catch(() => undefined), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    last: () => cri.snapshot,
  };
}
