// Generic PLEG (upstream pkg/kubelet/pleg/generic.go): relist the runtime every second, diff each
// container's state against the previous relist, and emit lifecycle events the sync loop turns into
// pod syncs — how bunlet notices a container exit (crash, OOM kill) without waiting for syncFrequency.
import { kv, log } from "../log.ts";
import { every, type Clock } from "../clock.ts";
import type { PodLifecycleMetrics } from "./lifecycle-metrics.ts";
import type { ContainerState, Runtime, RuntimePod, RuntimePodStatus } from "./runtime.ts";

export type PlegEventType = "ContainerStarted" | "ContainerDied" | "ContainerRemoved" | "ContainerChanged";

export interface PlegEvent {
  podUid: string;
  type: PlegEventType;
  containerId: string;
}

/** container id → state, per pod uid. */
export type RelistSnapshot = Map<string, Map<string, ContainerState>>;

export function snapshot(pods: RuntimePod[]): RelistSnapshot {
  const s: RelistSnapshot = new Map();
  for (const p of pods) {
    const m = new Map<string, ContainerState>();
    for (const c of p.containers) m.set(c.id, c.state);
    s.set(p.uid, m);
  }
  return s;
}

type PlegState = "running" | "exited" | "unknown" | "non-existent";
const plegState = (s: ContainerState | undefined): PlegState =>
  s === undefined ? "non-existent" : s === "running" ? "running" : s === "exited" ? "exited" : "unknown";

/** Upstream generateEvents for one container: old → new state. Created containers count as unknown. */
export function containerEvents(podUid: string, id: string, oldS: ContainerState | undefined, newS: ContainerState | undefined): PlegEvent[] {
  const o = plegState(oldS);
  const n = plegState(newS);
  if (o === n) return [];
  const ev = (type: PlegEventType): PlegEvent => ({ podUid, type, containerId: id });
  switch (n) {
    case "running":
      return [ev("ContainerStarted")];
    case "exited":
      return [ev("ContainerDied")];
    case "unknown":
      return [ev("ContainerChanged")];
    case "non-existent":
      // A container that vanished while running died first.
      return o === "exited" ? [ev("ContainerRemoved")] : [ev("ContainerDied"), ev("ContainerRemoved")];
  }
}

export function diffSnapshots(prev: RelistSnapshot, next: RelistSnapshot): PlegEvent[] {
  const events: PlegEvent[] = [];
  const uids = new Set([...prev.keys(), ...next.keys()]);
  for (const uid of uids) {
    const o = prev.get(uid) ?? new Map();
    const n = next.get(uid) ?? new Map();
    const ids = new Set([...o.keys(), ...n.keys()]);
    for (const id of ids) events.push(...containerEvents(uid, id, o.get(id), n.get(id)));
  }
  return events;
}

export interface Pleg {
  start(): void;
  stop(): void;
  relist(): Promise<PlegEvent[]>;
  /** Time of the last successful relist (upstream Healthy(): relist within 3 min). */
  lastRelistMs(): number | undefined;
  /**
   * The runtime pods of the last relist when it is at most `maxAgeMs` old, else a fresh listing
   * (upstream runtimeCache, 2 s): housekeeping shares the PLEG's CRI listing instead of its own.
   */
  runtimePods(maxAgeMs: number): Promise<RuntimePod[]>;
  /** The last successful relist: when it started listing, and the runtime pods it saw by UID. */
  relisted(): { startMs: number; pods: ReadonlyMap<string, RuntimePod> } | undefined;
}

/**
 * True when the relist shows exactly the sandboxes and containers (ids, readiness, states) of a pod
 * status read earlier: nothing of the pod changed in the runtime since, so that status still holds.
 * Container and sandbox ids are never reused, and a state only moves forward, so equal ids and
 * states mean no change in between.
 */
export function statusMatchesRelist(status: RuntimePodStatus, pod: RuntimePod | undefined): boolean {
  if (!pod) return status.sandboxes.length === 0 && status.containers.length === 0;
  if (pod.sandboxIds.length !== status.sandboxes.length || pod.containers.length !== status.containers.length) return false;
  const ready = status.sandboxes.filter((s) => s.state === "ready").length;
  if ((pod.readySandboxes ?? 0) !== ready) return false;
  const sandboxIds = new Set(pod.sandboxIds);
  if (!status.sandboxes.every((s) => sandboxIds.has(s.id))) return false;
  const states = new Map(pod.containers.map((c) => [c.id, c.state]));
  return status.containers.every((c) => states.get(c.id) === c.state);
}

export function createPleg(opts: {
  runtime: Runtime;
  clock: Clock;
  relistPeriodMs?: number;
  onEvents: (events: PlegEvent[]) => void;
  /** After every relist attempt, successful or not (runtime reachability). */
  onRelist?: (ok: boolean) => void;
  metrics?: Pick<PodLifecycleMetrics, "relisted">;
}): Pleg {
  let prev: RelistSnapshot = new Map();
  let last: number | undefined;
  let stopTimer: (() => void) | undefined;
  let failing = false;
  let lastPods: RuntimePod[] = [];
  let lastStartMs = 0;
  let byUid: Map<string, RuntimePod> | undefined;

  const relist = async (): Promise<PlegEvent[]> => {
    let pods: RuntimePod[];
    const startMs = opts.clock.now();
    try {
      pods = await opts.runtime.getPods(true);
    } catch (e) {
      if (!failing) log.error(`PLEG relist failed ${kv({ error: (e as Error).message })}`);
      failing = true;
      opts.onRelist?.(false);
      return [];
    }
    failing = false;
    last = opts.clock.now();
    // The runtime returns the very array of the last listing when nothing in it changed: no diff.
    const unchanged = pods === lastPods;
    lastPods = pods;
    lastStartMs = startMs;
    if (!unchanged) byUid = undefined;
    opts.metrics?.relisted?.({ startMs, endMs: last, pods });
    if (unchanged) {
      opts.onRelist?.(true);
      return [];
    }
    const next = snapshot(pods);
    const events = diffSnapshots(prev, next);
    prev = next;
    opts.onRelist?.(true);
    if (events.length > 0) {
      for (const e of events) log.debug(`PLEG event ${kv({ podUid: e.podUid, type: e.type, container: e.containerId })}`);
      opts.onEvents(events);
    }
    return events;
  };

  return {
    start() {
      stopTimer ??= every(opts.clock, opts.relistPeriodMs ?? 1000, async () => void (await relist()));
    },
    stop() {
      stopTimer?.();
      stopTimer = undefined;
    },
    relist,
    lastRelistMs: () => last,
    relisted() {
      if (last === undefined) return undefined;
      byUid ??= new Map(lastPods.map((p) => [p.uid, p]));
      return { startMs: lastStartMs, pods: byUid };
    },
    async runtimePods(maxAgeMs) {
      if (last !== undefined && opts.clock.now() - last <= maxAgeMs) return lastPods;
      return opts.runtime.getPods(true);
    },
  };
}
