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
import type { Runtime, RuntimePod } from "./runtime.ts";
import type { StatusManager } from "./status-manager.ts";
import type { Pod } from "./types.ts";
import { podKeyOf } from "./pod-like.ts";

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
  /** All runtime pods, possibly from a recent relist (upstream runtimeCache); default a fresh getPods. */
  runtimePods?: () => Promise<RuntimePod[]>;
  /** Skips the pod cgroup scan while nothing it depends on changed (see createCgroupScanGate). */
  cgroupScan?: CgroupScanGate;
}

export interface CgroupScanGate {
  /** Whether a scan is due for this state of the node (`key`). */
  due(key: string): boolean;
  /** A scan of `key` ran; `clean`: it left nothing behind (removed all it wanted, no error). */
  done(key: string, clean: boolean): void;
}

/**
 * Upstream scans the pod cgroups for orphans every housekeeping (2 s); with 100 pods those readdirs
 * are a tenth of bunlet's idle CPU. A scan finds an orphan only after a pod left the
 * desired set, a worker moved on, or a runtime pod came or went, so it is skipped while the state
 * key (those sets) is the one of the last clean scan — and still run every `maxIntervalMs` to
 * catch anything else (a cgroup made behind our back).
 */
export function createCgroupScanGate(nowMs: () => number, maxIntervalMs = 60_000): CgroupScanGate {
  let cleanKey: string | undefined;
  let lastMs = 0;
  return {
    due: (key) => key !== cleanKey || nowMs() - lastMs >= maxIntervalMs,
    done(key, clean) {
      cleanKey = clean ? key : undefined;
      lastMs = nowMs();
    },
  };
}

/** The state a cgroup scan's outcome depends on: desired pods, workers' states, runtime pods, foreign pods. */
export function cgroupScanKey(
  desired: ReadonlySet<string>,
  known: Iterable<string>,
  workerState: (uid: string) => string | undefined,
  running: readonly RuntimePod[],
  foreign: ReadonlySet<string>,
): string {
  const workers = [...known].map((uid) => `${uid}=${workerState(uid) ?? ""}`);
  return [
    [...desired].sort().join(","),
    workers.sort().join(","),
    running
      .map((r) => r.uid)
      .sort()
      .join(","),
    [...foreign].sort().join(","),
  ].join("|");
}

export async function runHousekeeping(ctx: HousekeepingContext): Promise<void> {
  const { podManager, workers, statuses, probes, known } = ctx;
  const desired = podManager.uids();
  workers.syncKnownPods(desired);
  ctx.backOff.gc(ctx.clock.now());
  // upstream CleanupPods(possiblyRunningPods): a pod still stopping keeps its readiness probes.
  for (const uid of probes.pods()) if (!desired.has(uid) && !workers.couldHaveRunningContainers(uid)) probes.removePod(uid);
  // Statuses of pods neither desired nor terminating.
  for (const uid of statuses.uids()) if (!desired.has(uid) && workers.state(uid) === undefined) statuses.delete(uid);
  for (const uid of known.keys()) if (!desired.has(uid) && workers.state(uid) === undefined) known.delete(uid);
  // Until every source delivered its pods, an unknown runtime pod may just be not-yet-read.
  if (!ctx.sourcesReady()) return;
  const orphaned = (rp: RuntimePod) => !desired.has(rp.uid) && workers.state(rp.uid) === undefined;
  let running;
  try {
    // A recent listing serves while it shows nothing to do; an apparent orphan (perhaps a pod that
    // finished since that listing) is confirmed by a fresh one before anything is killed.
    running = await (ctx.runtimePods?.() ?? ctx.runtime.getPods(true));
    if (ctx.runtimePods && running.some(orphaned)) running = await ctx.runtime.getPods(true);
  } catch (e) {
    log.error(`housekeeping: listing runtime pods failed ${kv({ error: (e as Error).message })}`);
    return;
  }
  for (const rp of running) {
    if (!orphaned(rp)) continue;
    log.info(`killing orphaned pod ${kv({ pod: podKeyOf(rp.namespace, rp.name), uid: rp.uid, containers: rp.containers.length })}`);
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
    // Another live agent's pods (same cgroupRoot) are not orphans: their cgroups stay (kuberuntime/owner.ts).
    const foreign = ctx.runtime.foreignPodUids?.() ?? new Set<string>();
    const key = ctx.cgroupScan ? cgroupScanKey(desired, known.keys(), (uid) => workers.state(uid), running, foreign) : "";
    if (ctx.cgroupScan && !ctx.cgroupScan.due(key)) return;
    let clean = true;
    try {
      const runningUids = new Set(running.map((r) => r.uid));
      for (const uid of await ctx.cgroups.listPodUids())
        if (!desired.has(uid) && !foreign.has(uid) && !workers.couldHaveRunningContainers(uid) && !runningUids.has(uid)) {
          await ctx.cgroups.removePod(uid);
          clean = false; // confirm the removal at the next housekeeping
        }
    } catch (e) {
      clean = false;
      log.warn(`housekeeping: pod cgroup cleanup failed ${kv({ error: (e as Error).message })}`);
    }
    ctx.cgroupScan?.done(key, clean);
  }
}
