// When the kernel notifier thread may hold a plan to evict on its own (kernel/fast-evict.ts), and what
// the plan names; wire/fast-eviction.ts builds and publishes it with the fds it holds. Upstream
// semantics decide where the thread may act at all: hard memory thresholds only (grace 0: no grace
// clock to consult); only from a calm state — no eviction in flight, no threshold met at the last cycle
// (then the main thread's cycles are already the path); the candidates are the active pods minus exempt
// ones, in active-pods order, as the cycle ranks them. Pure: state and pods in, a reason or parts out.
import { dirname, join } from "node:path";
import type { ArmedThreshold } from "../kernel/memory-notifiers.ts";
import type { PodLike } from "../pod/pod-like.ts";
import type { PodStatus } from "../pod/types.ts";
import { exemptFromEviction } from "./policy.ts";
import { isMemorySignal } from "./signals.ts";
import type { EvictionState } from "./state.ts";
import { isHardThreshold, type Observation, thresholdAmount, type Threshold } from "./threshold.ts";

/** Why there is no plan; transient: worth retrying soon (a notifier armed later, cgroups not made yet). */
export interface NoPlan {
  reason: string;
  transient: boolean;
}

/** The hard memory thresholds a plan is for, or why no plan may exist in this state. */
export function planThresholds(st: Pick<EvictionState, "initialized" | "lastSummary" | "inFlight" | "thresholdsMet" | "thresholds">): Threshold[] | NoPlan {
  if (!st.initialized || !st.lastSummary) return { reason: "no cycle has run yet", transient: false };
  if (st.inFlight.size > 0) return { reason: "an eviction is in flight", transient: false };
  if (st.thresholdsMet.length > 0) return { reason: "a threshold was met at the last cycle", transient: false };
  const hard = st.thresholds.filter((t) => isHardThreshold(t) && isMemorySignal(t.signal));
  if (hard.length === 0) return { reason: "no hard memory threshold", transient: false };
  return hard;
}

/** What the plan says of one threshold, short of the fds on its cgroup's files. */
export interface PlanThresholdSpec {
  token: number;
  cgroupPath: string;
  files: NonNullable<ArmedThreshold["files"]>;
  capacityBytes: number;
  valueBytes: number;
}

/**
 * A hard threshold's part of the plan: the notifier armed for its signal (by its token) and the threshold
 * in bytes at the last observation's capacity; or why there is none (a notifier is armed off the event
 * loop after the cycle: transient).
 */
export function planThreshold(
  t: Threshold,
  armed: readonly ArmedThreshold[],
  observations: Partial<Record<string, Observation>>,
  cgroupVersion: 1 | 2,
): PlanThresholdSpec | NoPlan {
  const a = armed.find((x) => x.hard && x.signal === t.signal);
  const o = observations[t.signal];
  if (!a) return { reason: `no ${cgroupVersion === 2 ? "working-set" : "memcg"} notifier armed for ${t.signal}`, transient: true };
  if (!o) return { reason: `no observation of ${t.signal}`, transient: false };
  return { token: a.token, cgroupPath: a.cgroupPath, files: a.files ?? "v1", capacityBytes: o.capacity, valueBytes: thresholdAmount(t.value, o.capacity) };
}

/** The pods a plan may name: the active pods the cycle could evict, in active-pods order. */
export function planCandidates<P extends PodLike>(activePods: readonly P[], evictStaticPods: boolean): P[] {
  return activePods.filter((p) => !exemptFromEviction(p, evictStaticPods));
}

/** The runtime IDs of a pod's running containers (init containers first), from its API status. */
export function runningContainerIds(status: PodStatus | undefined): string[] {
  return runningContainers(status).map((c) => c.id);
}

/** The running containers (init containers first) with their names, as runningContainerIds. */
export function runningContainers(status: PodStatus | undefined): { id: string; name: string }[] {
  const out: { id: string; name: string }[] = [];
  for (const c of [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? [])]) {
    if (!c.state?.running || !c.containerID) continue;
    const at = c.containerID.indexOf("://");
    out.push({ id: at >= 0 ? c.containerID.slice(at + 3) : c.containerID, name: c.name });
  }
  return out;
}

/** The QoS parents of pod cgroups (kubepods, its burstable and besteffort children) for a pod-path function. */
export function qosDirs(memoryRoot: string, podCgroupPath: (pod: PodLike) => string | undefined): string[] {
  const probe = (resources?: Record<string, Record<string, string>>): PodLike => ({
    metadata: { name: "p", uid: "probe" },
    spec: { containers: [{ name: "c", resources }] },
  });
  const pods = [probe({ requests: { cpu: "1", memory: "1Mi" }, limits: { cpu: "1", memory: "1Mi" } }), probe({ requests: { memory: "1Mi" } }), probe()];
  const dirs = new Set<string>();
  for (const p of pods) {
    const rel = podCgroupPath(p);
    if (rel !== undefined) dirs.add(dirname(join(memoryRoot, rel)));
  }
  return [...dirs];
}
