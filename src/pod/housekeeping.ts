// Housekeeping (upstream kubelet_pods.go HandlePodCleanups, every 2 s): forget finished workers of
// removed pods, drop their probes and statuses, kill runtime pods no source wants (orphans — e.g.
// left by a bunlet that stopped while their manifest was deleted), and remove leftover pod cgroups.
// Runtime pods whose UID a source still wants are adopted, not killed: that is restart safety.
import { kv, log } from "../log.ts";
import type { ContainerBackOff } from "./backoff.ts";
import type { Clock } from "../clock.ts";
import type { PodCgroups } from "./lifecycle-types.ts";
import type { PodManager } from "./pod-manager.ts";
import type { PodWorkers, UpdateType } from "./pod-workers.ts";
import type { ProbeManager } from "./prober/manager.ts";
import type { Runtime } from "./runtime.ts";
import type { StatusManager } from "./status-manager.ts";
import type { Pod } from "./types.ts";

export interface HousekeepingContext {
  clock: Clock;
  runtime: Runtime;
  podManager: PodManager;
  workers: PodWorkers;
  statuses: StatusManager;
  probes: ProbeManager;
  backOff: ContainerBackOff;
  /** Pods the lifecycle has dispatched (desired or still terminating). */
  known: Map<string, Pod>;
  cgroups?: PodCgroups;
  sourcesReady: () => boolean;
  dispatch: (pod: Pod, type: UpdateType) => void;
}

export async function runHousekeeping(ctx: HousekeepingContext): Promise<void> {
  const { podManager, workers, statuses, probes, known } = ctx;
  const desired = podManager.uids();
  workers.syncKnownPods(desired);
  ctx.backOff.gc(ctx.clock.now());
  for (const uid of probes.pods()) if (!desired.has(uid)) probes.removePod(uid);
  // Statuses of pods neither desired nor terminating.
  for (const uid of statuses.uids()) if (!desired.has(uid) && workers.state(uid) === undefined) statuses.delete(uid);
  for (const uid of known.keys()) if (!desired.has(uid) && workers.state(uid) === undefined) known.delete(uid);
  // Until every source delivered its pods, an unknown runtime pod may just be not-yet-read.
  if (!ctx.sourcesReady()) return;
  let running;
  try {
    running = await ctx.runtime.getPods(true);
  } catch (e) {
    log.error(`housekeeping: listing runtime pods failed ${kv({ error: (e as Error).message })}`);
    return;
  }
  for (const rp of running) {
    if (desired.has(rp.uid) || workers.state(rp.uid) !== undefined) continue;
    log.info(`killing orphaned pod ${kv({ pod: `${rp.namespace}/${rp.name}`, uid: rp.uid, containers: rp.containers.length })}`);
    const stub = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: rp.name, namespace: rp.namespace, uid: rp.uid },
      // Upstream kills spec-less running pods with the minimum grace period (2 s).
      spec: { containers: [], restartPolicy: "Always", terminationGracePeriodSeconds: 2, hostNetwork: false },
    } as unknown as Pod;
    ctx.dispatch(stub, "kill");
  }
  if (ctx.cgroups?.listPodUids) {
    try {
      // Another live agent's pods (same cgroupRoot) are not orphans: their cgroups stay (issue 14 finding 11).
      const foreign = ctx.runtime.foreignPodUids?.() ?? new Set<string>();
      for (const uid of await ctx.cgroups.listPodUids())
        if (!desired.has(uid) && !foreign.has(uid) && !workers.couldHaveRunningContainers(uid) && !running.some((r) => r.uid === uid)) await ctx.cgroups.removePod(uid);
    } catch (e) {
      log.warn(`housekeeping: pod cgroup cleanup failed ${kv({ error: (e as Error).message })}`);
    }
  }
}
