// makeSignalObservations (docs/eviction-contract.md#signals): one Summary → available/capacity/time per signal.
// A signal is absent when any of its source fields is missing; its thresholds are then skipped.
import type { ContainerStats, FsStats, PodStats, Summary } from "../stats/summary.ts";
import { SYSTEM_CONTAINER_PODS } from "../stats/summary.ts";
import type { Signal } from "./signals.ts";
import type { Observations, Threshold } from "./threshold.ts";

/** RFC 3339 → ms; missing, unparsable or Go's zero time ("0001-01-01T00:00:00Z") → 0. */
export function statsTimeMs(time: string | undefined): number {
  if (!time) return 0;
  const ms = Date.parse(time);
  if (!Number.isFinite(ms) || ms <= -62135596800000) return 0;
  return ms;
}

function fsObservations(fs: FsStats | undefined, bytes: string, inodes: string, out: Record<string, unknown>): void {
  if (!fs) return;
  const timeMs = statsTimeMs(fs.time);
  if (fs.availableBytes !== undefined && fs.capacityBytes !== undefined) {
    out[bytes] = { available: fs.availableBytes, capacity: fs.capacityBytes, timeMs };
  }
  if (fs.inodesFree !== undefined && fs.inodes !== undefined) {
    out[inodes] = { available: fs.inodesFree, capacity: fs.inodes, timeMs };
  }
}

export interface ObservationResult {
  observations: Observations;
  /** Problems worth one log line (missing `pods` system container). */
  warnings: string[];
}

export function makeSignalObservations(summary: Summary): ObservationResult {
  const out: Observations = {};
  const warnings: string[] = [];
  const node = summary.node;
  const mem = node.memory;
  if (mem && mem.availableBytes !== undefined && mem.workingSetBytes !== undefined) {
    out["memory.available"] = { available: mem.availableBytes, capacity: mem.availableBytes + mem.workingSetBytes, timeMs: statsTimeMs(mem.time) };
  }
  const pods = podsSystemContainer(summary);
  if (!pods) {
    warnings.push(`failed to construct signal allocatableMemory.available: system container "${SYSTEM_CONTAINER_PODS}" not found in summary`);
  } else if (pods.memory && pods.memory.availableBytes !== undefined && pods.memory.workingSetBytes !== undefined) {
    out["allocatableMemory.available"] = {
      available: pods.memory.availableBytes,
      capacity: pods.memory.availableBytes + pods.memory.workingSetBytes,
      timeMs: statsTimeMs(pods.memory.time),
    };
  }
  fsObservations(node.fs, "nodefs.available", "nodefs.inodesFree", out);
  fsObservations(node.runtime?.imageFs, "imagefs.available", "imagefs.inodesFree", out);
  fsObservations(node.runtime?.containerFs, "containerfs.available", "containerfs.inodesFree", out);
  const rl = node.rlimit;
  if (rl && rl.maxpid !== undefined && rl.curproc !== undefined) {
    out["pid.available"] = { available: rl.maxpid - rl.curproc, capacity: rl.maxpid, timeMs: statsTimeMs(rl.time) };
  }
  return { observations: out, warnings };
}

export function podsSystemContainer(summary: Summary): ContainerStats | undefined {
  return summary.node.systemContainers?.find((c) => c.name === SYSTEM_CONTAINER_PODS);
}

/** Per-pod stats keyed by pod UID (upstream cachedStatsFunc). */
export function podStatsByUid(summary: Summary): Map<string, PodStats> {
  const m = new Map<string, PodStats>();
  for (const p of summary.pods ?? []) m.set(p.podRef.uid, p);
  return m;
}

/** kubelet_eviction_stats_age_seconds: how old the stats behind each threshold are at `now` (a zero time has no age). */
export function statsAgeSeconds(thresholds: readonly Threshold[], obs: Observations, now: number): Partial<Record<Signal, number>> {
  const out: Partial<Record<Signal, number>> = {};
  for (const t of thresholds) {
    const o = obs[t.signal]!;
    if (o.timeMs !== 0) out[t.signal] = Math.max(0, now - o.timeMs) / 1000;
  }
  return out;
}
