// The record the Summary API's parts share (upstream pkg/kubelet/stats/provider.go Provider: the
// dependencies every stats provider reads through): options with defaults resolved, the clock, "log once"
// error reporting (an unreadable field is omitted and said once); and SummaryPass, one summary's reading.
import { realClock, type Clock } from "../clock.ts";
import { kv, log } from "../log.ts";
import { DEFAULT_CGROUP_MOUNT, DEFAULT_POD_LOGS_DIR, type CpuRateState } from "./pods.ts";
import type { SummaryProviderOptions } from "./summary-options.ts";

export interface SummaryContext {
  readonly opts: SummaryProviderOptions;
  readonly clock: Pick<Clock, "now">;
  /** opts.cgroupMountRoot, default /sys/fs/cgroup. */
  readonly mountRoot: string;
  /** opts.podLogsDir, default /var/log/pods. */
  readonly podLogsDir: string;
  /** Reports a field's error once per (pod, field, message) until the pod goes away. */
  fail(uid: string, field: string, e: unknown): void;
  /** Runs one reader; ENOENT (cgroup or dir not created yet, or gone) omits the field silently. */
  attempt<T>(uid: string, field: string, fn: () => T): T | undefined;
  /** Forgets what was reported for pods not in `live` (a full summary's active pods, and "node"). */
  forgetReported(live: ReadonlySet<string>): void;
}

/** The CPU rate states one pass sampled, by cgroup directory (passes may overlap: each samples into its own). */
export type CpuRound = Map<string, CpuRateState>;

/** One summary's reading of the node: its time, its CPU samples and every directory it looked at. */
export interface SummaryPass {
  time: string;
  nowMs: number;
  round: CpuRound;
  /** Volume and log directories, and container cgroup keys, this pass read: a full pass forgets the rest. */
  seen: Set<string>;
}

export const isEnoent = (e: unknown) => (e as NodeJS.ErrnoException)?.code === "ENOENT";

export function createSummaryContext(opts: SummaryProviderOptions): SummaryContext {
  const onError = opts.onError ?? ((m: string) => log.warn(m));
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
  return {
    opts,
    clock: opts.clock ?? realClock,
    mountRoot: opts.cgroupMountRoot ?? DEFAULT_CGROUP_MOUNT,
    podLogsDir: opts.podLogsDir ?? DEFAULT_POD_LOGS_DIR,
    fail,
    attempt<T>(uid: string, field: string, fn: () => T): T | undefined {
      try {
        return fn();
      } catch (e) {
        if (!isEnoent(e)) fail(uid, field, e);
        return undefined;
      }
    },
    forgetReported(live) {
      for (const uid of reported.keys()) if (!live.has(uid)) reported.delete(uid);
    },
  };
}
