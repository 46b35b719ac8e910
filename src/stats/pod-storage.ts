// A pod's storage for the Summary API: its emptyDir volumes from cached directory walks (upstream
// pkg/kubelet/stats volume_stat_calculator.go) and its container and pod log directories (upstream
// cri_stats_provider.go getContainerLogStats / getPodLogStats), each as used bytes and inodes on the nodefs.
import { join } from "node:path";
import type { PodLike } from "../pod/pod-like.ts";
import { createDirUsageCache, createFlatDirUsageReader } from "./dir-usage.ts";
import { emptyDirPath, fsUsage } from "./pods.ts";
import { isEnoent, type SummaryContext, type SummaryPass } from "./summary-context.ts";
import type { FsStats, VolumeStats } from "./summary.ts";

/** How long a freshVolumes summary waits for each volume's walk before serving the cached value. */
const FRESH_VOLUME_WAIT_MS = 2000;

/** How long one pass waits for volume walks: a never-walked tree (firstWalk), a fresh walk (fresh, freshVolumes only). */
export interface VolumeDeadlines {
  firstWalk: Promise<undefined>;
  fresh?: Promise<undefined>;
  /** Ends the timers once the pass is done. */
  clear(): void;
}

export interface PodVolumes {
  /** Every emptyDir with a usage (memory-backed ones without disk capacity). */
  volumes: VolumeStats[];
  /** The disk-backed ones: what counts toward ephemeral-storage. */
  diskVolumes: VolumeStats[];
}

export interface PodStorageStats {
  /** The deadlines of one pass's volume walks (freshVolumes: walked afresh, waited for up to 2 s each). */
  deadlines(freshVolumes: boolean): VolumeDeadlines;
  /** The pod's emptyDir volumes; a walk not done by its deadline lands in the cache for the next pass. */
  volumes(pod: PodLike, uid: string, nodefs: FsStats | undefined, pass: SummaryPass, deadlines: VolumeDeadlines): Promise<PodVolumes>;
  /** A container's log directory (<pod logs dir>/<container>), with its subdirectories; undefined when unreadable. */
  containerLogs(uid: string, name: string, podLogsDir: string, nodefs: FsStats | undefined, pass: SummaryPass): FsStats | undefined;
  /** The pod log directory's own files. */
  podLogs(uid: string, podLogsDir: string, nodefs: FsStats | undefined, pass: SummaryPass): FsStats | undefined;
  /** After a full pass: forgets the directories it did not see. */
  retain(seen: ReadonlySet<string>): void;
}

export function createPodStorageStats(ctx: SummaryContext): PodStorageStats {
  const { opts, clock } = ctx;
  const volumeWaitMs = opts.volumeWaitMs ?? 250;
  const dirUsage = opts.dirUsage ?? createDirUsageCache({ now: () => clock.now(), ttlMs: opts.volumeTtlMs });
  const logDirs = createFlatDirUsageReader();
  const logStats = (dir: string, nodefs: FsStats | undefined, pass: SummaryPass, filesOnly: boolean): FsStats => {
    pass.seen.add(dir);
    return fsUsage(nodefs, logDirs.usage(dir, { filesOnly }), pass.time);
  };
  const deadline = (ms: number, set: (t: ReturnType<typeof setTimeout>) => void) => new Promise<undefined>((r) => set(setTimeout(() => r(undefined), ms)));

  return {
    deadlines(freshVolumes) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let freshTimer: ReturnType<typeof setTimeout> | undefined;
      const firstWalk = deadline(volumeWaitMs, (t) => (timer = t));
      const fresh = freshVolumes ? deadline(FRESH_VOLUME_WAIT_MS, (t) => (freshTimer = t)) : undefined;
      return {
        firstWalk,
        fresh,
        clear() {
          clearTimeout(timer);
          clearTimeout(freshTimer);
        },
      };
    },
    async volumes(pod, uid, nodefs, pass, deadlines) {
      const volumes: VolumeStats[] = [];
      const diskVolumes: VolumeStats[] = [];
      for (const v of pod.spec.volumes ?? []) {
        if (!v.emptyDir || !uid) continue;
        const path = emptyDirPath(opts.rootDir, uid, v.name);
        pass.seen.add(path);
        const memoryBacked = v.emptyDir.medium === "Memory";
        let usage;
        try {
          // A never-walked big tree must not hold up the summary: it lands in the cache for the next one.
          if (deadlines.fresh) usage = await Promise.race([dirUsage.get(path, { fresh: true }), deadlines.fresh]);
          usage ??= await Promise.race([dirUsage.get(path), deadlines.firstWalk]);
        } catch (e) {
          if (!isEnoent(e)) ctx.fail(uid, `volume ${v.name}`, e);
          continue;
        }
        if (!usage) continue;
        // A memory-backed emptyDir has no disk capacity: its pages are charged to the pod's memory cgroup.
        const vs: VolumeStats = { name: v.name, ...fsUsage(memoryBacked ? undefined : nodefs, usage, pass.time) };
        volumes.push(vs);
        if (!memoryBacked) diskVolumes.push(vs);
      }
      return { volumes, diskVolumes };
    },
    containerLogs: (uid, name, podLogsDir, nodefs, pass) =>
      ctx.attempt(uid, `container ${name} logs`, () => logStats(join(podLogsDir, name), nodefs, pass, false)),
    podLogs: (uid, podLogsDir, nodefs, pass) => ctx.attempt(uid, "pod logs", () => logStats(podLogsDir, nodefs, pass, true)),
    retain(seen) {
      dirUsage.retain(seen);
      logDirs.retain(seen);
    },
  };
}
