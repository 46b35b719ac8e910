// A fake node for synchronize/manager tests: fake clock, scripted summaries, recording kills.
import { createManualClock, type ManualClock } from "../../src/manual-clock.ts";
import { newEvictionState, synchronize, type CycleReport, type EvictionState } from "../../src/eviction/synchronize.ts";
import { evictionConfig, type EvictionConfig, type EvictionDeps, type EvictionEvent, type KillStatus, type Logger } from "../../src/eviction/types.ts";
import type { Threshold } from "../../src/eviction/threshold.ts";
import type { FsLayout } from "../../src/eviction/rank.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";
import type { Summary } from "../../src/stats/summary.ts";
import { atMs } from "./helpers.ts";

export const silent: Logger = { info() {}, warn() {}, error() {}, debug() {} };

export interface Kill {
  pod: string;
  grace: number;
  status: KillStatus;
  atMs: number;
}

export interface Harness {
  clock: ManualClock;
  deps: EvictionDeps;
  state: EvictionState;
  kills: Kill[];
  events: EvictionEvent[];
  reclaimCalls: string[];
  logs: string[];
  active: PodLike[];
  /** The summary returned next; `afterReclaim` (if set) is returned by the fetch after node reclaim. */
  current: Summary | undefined;
  afterReclaim: Summary | undefined;
  /** Sync at second s with this summary. */
  step(s: number, sum: Summary): Promise<CycleReport>;
}

export interface HarnessOpts {
  thresholds: Threshold[];
  config?: Partial<EvictionConfig>;
  pods: PodLike[];
  layout?: FsLayout;
  /** Kills never resolve unless true (default: resolve at once and remove the pod). */
  killBehaviour?: "remove" | "hang" | "keep";
}

export function harness(o: HarnessOpts): Harness {
  const clock = createManualClock(atMs(0));
  const h: Harness = {
    clock,
    kills: [],
    events: [],
    reclaimCalls: [],
    logs: [],
    active: [...o.pods],
    current: undefined,
    afterReclaim: undefined,
    deps: undefined as unknown as EvictionDeps,
    state: undefined as unknown as EvictionState,
    async step(s, sum) {
      clock.set(atMs(s));
      h.current = sum;
      const r = await synchronize(h.deps, h.state);
      await Promise.resolve();
      await Promise.resolve();
      return r;
    },
  };
  let fetches = 0;
  const logger: Logger = {
    info: (m) => h.logs.push(`I ${m}`),
    warn: (m) => h.logs.push(`W ${m}`),
    error: (m) => h.logs.push(`E ${m}`),
    debug: () => {},
  };
  h.deps = {
    config: evictionConfig({ thresholds: o.thresholds, ...o.config }),
    clock,
    summary: async () => {
      fetches++;
      if (h.afterReclaim && h.reclaimCalls.length > 0 && fetches > 0) {
        const s = h.afterReclaim;
        h.afterReclaim = undefined;
        return s;
      }
      if (!h.current) throw new Error("no summary");
      return h.current;
    },
    activePods: () => h.active,
    killPod: (pod, grace, status) => {
      h.kills.push({ pod: pod.metadata.name, grace, status, atMs: clock.now() });
      if (o.killBehaviour === "hang") return new Promise<void>(() => {});
      if (o.killBehaviour !== "keep") h.active = h.active.filter((p) => p !== pod);
      return Promise.resolve();
    },
    reclaim: {
      deleteUnusedContainers: async () => void h.reclaimCalls.push("containers"),
      deleteUnusedImages: async () => void h.reclaimCalls.push("images"),
    },
    recorder: (e) => h.events.push(e),
    logger,
    ...(o.layout ? { fsLayout: () => o.layout! } : {}),
  };
  h.state = newEvictionState(h.deps.config.thresholds);
  return h;
}
