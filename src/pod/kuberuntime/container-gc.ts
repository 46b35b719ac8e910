// Periodic container garbage collection (upstream pkg/kubelet/container/container_gc.go +
// kuberuntime/kuberuntime_gc.go, run every minute by the kubelet, not only under disk pressure).
// Policy (GCPolicy): MinAge 0 (--minimum-container-ttl-duration), MaxPerPodContainer 1
// (--maximum-dead-containers-per-container), MaxContainers -1 (--maximum-dead-containers).
//   1. Dead containers (exited/unknown/created, older than MinAge) grouped per (pod UID, container name):
//      all of a removed pod's once sources are ready; else beyond MaxPerPodContainer, oldest first;
//      then beyond MaxContainers globally.
//   2. Sandboxes not ready and holding no container: all of a removed pod's; else all but the newest.
//   3. Pod log directories (<podLogsDir>/<ns>_<name>_<uid>) of removed pods: those this runtime held
//      (seen by an earlier pass), and — for pods removed while bunlet was down — those untouched for an
//      hour. Upstream removes every unknown one at once, owning podLogsDir alone; the hour keeps bunlet
//      from deleting the live logs of another agent sharing /var/log/pods (e.g. test agents on one host).
// The plan is pure (planContainerGc); runContainerGc carries it out over the CRI.
import { readdirSync, rmSync, statSync } from "node:fs";
import { dirname, basename, join } from "node:path";
import { durationMs } from "../../config/duration.ts";
import type { CriClient } from "../../cri/client.ts";
import type { Container, PodSandbox } from "../../cri/types.ts";
import { kv, log } from "../../log.ts";
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from "./labels.ts";

export interface ContainerGcPolicy {
  minAgeMs: number;
  /** Dead containers kept per (pod, container name); negative = no limit. */
  maxPerPodContainer: number;
  /** Dead containers kept in all; negative = no limit. */
  maxContainers: number;
}

export const DEFAULT_CONTAINER_GC_POLICY: ContainerGcPolicy = { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 };

/** Upstream GCPolicy from the deprecated --minimum-container-ttl-duration / --maximum-dead-containers(-per-container) flags. */
export function containerGcPolicyFromFlags(f: {
  minimumContainerTTLDuration?: string;
  maximumDeadContainersPerContainer?: number;
  maximumDeadContainers?: number;
}): ContainerGcPolicy {
  return {
    minAgeMs: f.minimumContainerTTLDuration ? durationMs(f.minimumContainerTTLDuration) : DEFAULT_CONTAINER_GC_POLICY.minAgeMs,
    maxPerPodContainer: f.maximumDeadContainersPerContainer ?? DEFAULT_CONTAINER_GC_POLICY.maxPerPodContainer,
    maxContainers: f.maximumDeadContainers ?? DEFAULT_CONTAINER_GC_POLICY.maxContainers,
  };
}
/** Upstream ContainerGCPeriod. */
export const CONTAINER_GC_PERIOD_MS = 60_000;

export interface GcPodState {
  /** The pod is gone: no source wants it and its worker finished (upstream ShouldPodContentBeRemoved). */
  contentRemovable(uid: string): boolean;
  /** Every pod source delivered its pods once: an unknown UID is really gone (upstream allSourcesReady). */
  allSourcesReady: boolean;
}

export interface GcPlan {
  containers: string[];
  sandboxes: string[];
}

const nsToMs = (ns: number) => ns / 1e6;
const dead = (c: Container) => c.state !== "CONTAINER_RUNNING";

/** Pure: what one GC pass removes. */
export function planContainerGc(
  containers: readonly Container[],
  sandboxes: readonly PodSandbox[],
  policy: ContainerGcPolicy,
  pods: GcPodState,
  nowMs: number,
): GcPlan {
  const units = new Map<string, Container[]>();
  for (const c of containers) {
    if (!dead(c) || nsToMs(c.createdAt) > nowMs - policy.minAgeMs) continue;
    const uid = c.labels[POD_UID_LABEL];
    if (!uid) continue; // not created by a kubelet
    const key = `${uid}\u0000${c.labels[CONTAINER_NAME_LABEL] ?? c.metadata?.name ?? ""}`;
    units.set(key, [...(units.get(key) ?? []), c]);
  }
  const remove = new Set<string>();
  const keep: Container[][] = [];
  for (const [key, unit] of units) {
    unit.sort((a, b) => b.createdAt - a.createdAt); // newest first
    const uid = key.slice(0, key.indexOf("\u0000"));
    if (pods.allSourcesReady && pods.contentRemovable(uid)) {
      for (const c of unit) remove.add(c.id);
      continue;
    }
    const n = policy.maxPerPodContainer >= 0 ? policy.maxPerPodContainer : unit.length;
    for (const c of unit.slice(n)) remove.add(c.id);
    keep.push(unit.slice(0, n));
  }
  const total = keep.reduce((n, u) => n + u.length, 0);
  if (policy.maxContainers >= 0 && total > policy.maxContainers) {
    // Upstream: an equal share per unit (at least 1) first, then the oldest overall.
    const share = Math.max(1, Math.floor(policy.maxContainers / keep.length));
    for (const u of keep) for (const c of u.slice(share)) remove.add(c.id);
    const left = keep.flatMap((u) => u.slice(0, share)).sort((a, b) => b.createdAt - a.createdAt);
    for (const c of left.slice(policy.maxContainers)) remove.add(c.id);
  }
  return { containers: [...remove], sandboxes: planSandboxGc(containers, sandboxes, remove, pods) };
}

function planSandboxGc(containers: readonly Container[], sandboxes: readonly PodSandbox[], removedContainers: Set<string>, pods: GcPodState): string[] {
  const holding = new Set(containers.filter((c) => !removedContainers.has(c.id)).map((c) => c.podSandboxId));
  const byPod = new Map<string, PodSandbox[]>();
  for (const s of sandboxes) {
    const uid = s.labels[POD_UID_LABEL] ?? s.metadata?.uid;
    if (!uid) continue;
    byPod.set(uid, [...(byPod.get(uid) ?? []), s]);
  }
  const out: string[] = [];
  for (const [uid, list] of byPod) {
    list.sort((a, b) => b.createdAt - a.createdAt);
    // A live pod keeps its newest sandbox (even dead); a removed pod keeps none.
    const candidates = pods.allSourcesReady && pods.contentRemovable(uid) ? list : list.slice(1);
    for (const s of candidates) if (s.state !== "SANDBOX_READY" && !holding.has(s.id)) out.push(s.id);
  }
  return out;
}

/** upstream ParsePodUIDFromLogsDirectory: the part after the last "_". */
export const podUidFromLogsDirectory = (name: string) => name.slice(name.lastIndexOf("_") + 1);

/** A log directory with no change for this long belongs to no live pod of anyone. */
export const ABANDONED_LOG_DIR_MS = 3_600_000;

/**
 * One GC pass over the CRI; every failure is logged and the pass goes on. `seen` (kept by the caller
 * across passes) collects the pod UIDs this runtime held.
 */
export async function runContainerGc(
  cri: CriClient,
  policy: ContainerGcPolicy,
  pods: GcPodState,
  podLogsDir: string,
  nowMs: number,
  seen: Set<string> = new Set(),
): Promise<GcPlan> {
  const [containers, sandboxes] = await Promise.all([cri.listContainers(), cri.listPodSandbox()]);
  for (const x of [...containers, ...sandboxes]) {
    const uid = x.labels[POD_UID_LABEL];
    if (uid) seen.add(uid);
  }
  const plan = planContainerGc(containers, sandboxes, policy, pods, nowMs);
  const done: GcPlan = { containers: [], sandboxes: [] };
  for (const id of plan.containers) {
    try {
      await removeContainerLogs(cri, id);
      await cri.removeContainer(id);
      done.containers.push(id);
    } catch (e) {
      log.warn(`container gc: remove container failed ${kv({ id: id.slice(0, 13), err: (e as Error).message })}`);
    }
  }
  for (const id of plan.sandboxes) {
    try {
      await cri.removePodSandbox(id);
      done.sandboxes.push(id);
    } catch (e) {
      log.warn(`container gc: remove sandbox failed ${kv({ id: id.slice(0, 13), err: (e as Error).message })}`);
    }
  }
  const gone = new Set([...done.containers, ...done.sandboxes]);
  const left = (xs: readonly { id: string }[]) => xs.filter((x) => !gone.has(x.id));
  const dirs = pods.allSourcesReady ? removePodLogDirs(podLogsDir, pods, left(containers) as Container[], left(sandboxes) as PodSandbox[], seen, nowMs) : 0;
  if (done.containers.length + done.sandboxes.length + dirs > 0)
    log.info(`container gc ${kv({ containers: done.containers.length, sandboxes: done.sandboxes.length, podLogDirs: dirs })}`);
  return done;
}

/** upstream removeContainerLog: the container's log file and its rotated files go with it. */
async function removeContainerLogs(cri: CriClient, id: string): Promise<void> {
  const path = (await cri.containerStatus(id).catch(() => undefined))?.status?.logPath;
  if (!path) return;
  const dir = dirname(path);
  const base = basename(path);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) if (n === base || n.startsWith(`${base}.`)) rmSync(join(dir, n), { force: true });
}

/** Log directories of removed pods that the runtime no longer holds anything of. */
function removePodLogDirs(
  root: string,
  pods: GcPodState,
  containers: readonly Container[],
  sandboxes: readonly PodSandbox[],
  seen: Set<string>,
  nowMs: number,
): number {
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return 0;
  }
  const inRuntime = new Set([...containers.map((c) => c.labels[POD_UID_LABEL]), ...sandboxes.map((s) => s.labels[POD_UID_LABEL])]);
  let n = 0;
  for (const name of entries) {
    const uid = podUidFromLogsDirectory(name);
    if (!name.includes("_") || !uid || inRuntime.has(uid) || !pods.contentRemovable(uid)) continue;
    if (!seen.has(uid) && nowMs - lastChangeMs(join(root, name)) < ABANDONED_LOG_DIR_MS) continue;
    try {
      rmSync(join(root, name), { recursive: true, force: true });
      seen.delete(uid);
      n++;
    } catch (e) {
      log.warn(`container gc: remove pod log directory failed ${kv({ dir: join(root, name), err: (e as Error).message })}`);
    }
  }
  return n;
}

/** Newest mtime of a pod log directory, its container directories and their files. */
function lastChangeMs(dir: string): number {
  let newest = 0;
  const visit = (p: string, depth: number) => {
    let st;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    newest = Math.max(newest, st.mtimeMs);
    if (st.isDirectory() && depth < 2) for (const e of readdirSync(p)) visit(join(p, e), depth + 1);
  };
  visit(dir, 0);
  return newest;
}
