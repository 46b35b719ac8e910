// Pure decisions of graceful node shutdown (upstream pkg/kubelet/nodeshutdown): which grace period
// each priority range gets, which group a pod falls in, and the grace period a pod is killed with.
// shutdownGracePeriod/shutdownGracePeriodCriticalPods become two groups (priority 0 and
// SystemCriticalPriority), exactly as upstream's migrateConfig; shutdownGracePeriodByPodPriority is
// taken as given. Groups run in ascending priority order, so regular pods stop before critical ones.
import { durationMs } from "../../config/duration.ts";
import { SYSTEM_CRITICAL_PRIORITY, type PodLike } from "../../pod/pod-like.ts";

/** Upstream kubeletconfig.ShutdownGracePeriodByPodPriority. */
export interface ShutdownGracePeriodByPodPriority {
  priority: number;
  shutdownGracePeriodSeconds: number;
}

export interface PodShutdownGroup<P> extends ShutdownGracePeriodByPodPriority {
  pods: P[];
}

/** Pod status reason/message and the admission refusal, worded as upstream's manager. */
export const NODE_SHUTDOWN_REASON = "Terminated";
export const NODE_SHUTDOWN_MESSAGE = "Pod was terminated in response to imminent node shutdown.";
export const NODE_SHUTDOWN_NOT_ADMITTED_REASON = "NodeShutdown";
export const NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE = "Pod was rejected as the node is shutting down.";
/** What ShutdownStatus() returns while shutting down; the node's Ready condition carries it. */
export const NODE_SHUTTING_DOWN_ERROR = "node is shutting down";

/** scheduling.DefaultPriorityWhenNoDefaultClassExists */
const DEFAULT_PRIORITY = 0;

/**
 * The priority groups from the kubelet configuration, ascending by priority; empty when graceful
 * shutdown is off (all periods zero). Durations are the validated Go duration strings.
 */
export function shutdownGroupsFromConfig(c: {
  shutdownGracePeriod?: string;
  shutdownGracePeriodCriticalPods?: string;
  shutdownGracePeriodByPodPriority?: readonly ShutdownGracePeriodByPodPriority[];
}): ShutdownGracePeriodByPodPriority[] {
  const byPriority = c.shutdownGracePeriodByPodPriority ?? [];
  if (byPriority.length > 0)
    return [...byPriority]
      .map((g) => ({ priority: g.priority, shutdownGracePeriodSeconds: g.shutdownGracePeriodSeconds }))
      .sort((a, b) => a.priority - b.priority);
  const totalSeconds = Math.floor(durationMs(c.shutdownGracePeriod ?? "0s") / 1000);
  const criticalSeconds = Math.floor(durationMs(c.shutdownGracePeriodCriticalPods ?? "0s") / 1000);
  if (totalSeconds === 0 && criticalSeconds === 0) return [];
  return [
    { priority: DEFAULT_PRIORITY, shutdownGracePeriodSeconds: totalSeconds - criticalSeconds },
    { priority: SYSTEM_CRITICAL_PRIORITY, shutdownGracePeriodSeconds: criticalSeconds },
  ];
}

/** The whole delay asked of logind: the sum of the groups' periods (upstream periodRequested). */
export function periodRequestedSeconds(groups: readonly ShutdownGracePeriodByPodPriority[]): number {
  return groups.reduce((s, g) => s + g.shutdownGracePeriodSeconds, 0);
}

/**
 * Pods sorted into the groups (ascending priority). A pod goes to the highest group whose priority
 * is ≤ its own; one below every group goes to the lowest, one above every group to the highest.
 */
export function groupByPriority<P extends PodLike>(groups: readonly ShutdownGracePeriodByPodPriority[], pods: readonly P[]): PodShutdownGroup<P>[] {
  const out: PodShutdownGroup<P>[] = groups.map((g) => ({ ...g, pods: [] }));
  if (out.length === 0) return out;
  for (const pod of pods) {
    const priority = pod.spec.priority ?? DEFAULT_PRIORITY;
    let index = 0;
    for (let i = 0; i < out.length; i++) if (out[i]!.priority <= priority) index = i;
    out[index]!.pods.push(pod);
  }
  return out;
}

/** The grace period a pod is killed with: its group's, or its own terminationGracePeriodSeconds when shorter. */
export function podShutdownGracePeriodSeconds(group: ShutdownGracePeriodByPodPriority, pod: PodLike): number {
  const own = pod.spec.terminationGracePeriodSeconds;
  return own !== undefined && own <= group.shutdownGracePeriodSeconds ? own : group.shutdownGracePeriodSeconds;
}
