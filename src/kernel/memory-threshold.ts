// Upstream memoryThresholdNotifier (pkg/kubelet/eviction/memory_threshold_notifier.go) on top of
// the cgroup v1 threshold notifier: one per memory.available / allocatableMemory.available
// threshold (hard and soft), re-armed from fresh stats at most every 10 s by the eviction manager
// (docs/eviction-contract.md#memory-threshold-notifier). The threshold written to memory.usage_in_bytes is
//   capacity − thresholdAmount + inactive_file   (capacity = available + workingSet,
//                                                  inactive_file = usage − workingSet)
// because the kernel compares usage, which includes inactive file pages, while the kubelet's
// signal is the working set.
import { join } from "node:path";
import { armCgroupThreshold, type CgroupThresholdNotifier, type ThresholdEvent } from "./cgroup-threshold.ts";
import type { NotifierHub } from "./hub.ts";

export type MemorySignal = "memory.available" | "allocatableMemory.available";

// Structural twins of the Summary API types (stats/summary.ts): a Summary is assignable to them, and
// kernel/ stays below stats/ (docs/development.md#imports-run-down).
/** The fields of a Summary's MemoryStats a memcg threshold is computed from. */
export interface MemcgStats {
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
}
/** The part of a Summary memoryStatsForSignal reads. */
export interface MemcgSummary {
  node: { memory?: MemcgStats; systemContainers?: readonly { name: string; memory?: MemcgStats }[] };
}
/** stats/v1alpha1 SystemContainerPods. */
const SYSTEM_CONTAINER_PODS = "pods";

/** Structural twin of src/eviction's ThresholdValue: bytes, or a (float32) fraction of capacity. */
export type ThresholdAmount = { quantity: number; percentage?: undefined } | { percentage: number; quantity?: undefined };

export class MemcgThresholdError extends Error {
  override name = "MemcgThresholdError";
}

/** Bytes of a threshold value for a capacity, truncated toward zero as GetThresholdQuantity does. */
export function thresholdAmountBytes(value: ThresholdAmount, capacityBytes: number): number {
  if (value.quantity !== undefined) return value.quantity;
  return Math.trunc(capacityBytes * value.percentage);
}

/**
 * The value for memory.usage_in_bytes at which `signal` reaches the threshold. `where` names the
 * stats (e.g. `node.memory`) in the error when a field is missing.
 */
export function memcgThresholdBytes(mem: MemcgStats | undefined, value: ThresholdAmount, where = "memory stats"): number {
  if (mem?.usageBytes === undefined || mem.workingSetBytes === undefined || mem.availableBytes === undefined) {
    throw new MemcgThresholdError(`${where}: usageBytes, workingSetBytes and availableBytes are all required to compute a memcg threshold`);
  }
  const capacity = mem.availableBytes + mem.workingSetBytes;
  const inactiveFile = mem.usageBytes - mem.workingSetBytes;
  return Math.max(0, capacity - thresholdAmountBytes(value, capacity) + inactiveFile);
}

/** What the eviction manager hands over every ≤ 10 s (src/eviction/notifier-thresholds.ts NotifierTarget). */
export interface MemcgTarget {
  /** Stable per configured threshold (the eviction manager's target id). Two thresholds may share a
   * signal and description (a hard one and a soft one with 0s grace): each needs its own notifier,
   * as upstream creates one per threshold. */
  id?: string;
  signal: MemorySignal;
  cgroup: "root" | "pods";
  hard: boolean;
  description: string;
  thresholdBytes: number;
  /** capacity − threshold: the working set the cgroup v2 fast path watches for (working-set-watch.ts). */
  workingSetBytes?: number;
  /** Index of the threshold in the eviction manager's configured list (for repeatUseful). */
  thresholdIndex?: number;
}

export interface MemcgNotifierEvent extends ThresholdEvent {
  description: string;
  signal: MemorySignal;
  hard: boolean;
}

export interface MemoryThresholdNotifier {
  readonly description: string;
  readonly cgroupPath: string;
  readonly signal: MemorySignal;
  readonly hard: boolean;
  /** The armed registration's epoll token, undefined before it lands. */
  readonly token: number | undefined;
  /** Bytes currently armed, undefined before the first registration lands. */
  readonly armedBytes: number | undefined;
  /**
   * Re-arms at `thresholdBytes`, replacing the old registration once the new one is in place (no-op
   * when unchanged). The registration runs off the event loop (armCgroupThreshold); the promise
   * settles when the latest requested value is armed, or rejects with the kernel's refusal (the old
   * registration then stays). Overlapping calls share one arming loop that ends on the last value.
   */
  updateThreshold(thresholdBytes: number): Promise<void>;
  /**
   * Upstream UpdateThreshold(summary): memory stats of the node (memory.available) or of the
   * "pods" system container (allocatableMemory.available) → memcgThresholdBytes → re-arm.
   * Needs `threshold` in the options; throws MemcgThresholdError when stats are missing. Resolves
   * with the bytes once armed.
   */
  updateFromSummary(summary: MemcgSummary): Promise<number>;
  stop(): void;
}

export interface MemoryThresholdNotifierOptions {
  hub: NotifierHub;
  cgroupPath: string;
  signal: MemorySignal;
  hard: boolean;
  description: string;
  /** The eviction threshold's value, for updateFromSummary. */
  threshold?: ThresholdAmount;
  onEvent(ev: MemcgNotifierEvent): void;
  onRemoved?(cgroupPath: string): void;
}

/** The memory stats a signal's memcg threshold is computed from (docs/eviction-contract.md#memory-threshold-notifier). */
export function memoryStatsForSignal(summary: MemcgSummary, signal: MemorySignal): { mem: MemcgStats | undefined; where: string } {
  if (signal === "memory.available") return { mem: summary.node.memory, where: "node.memory" };
  const pods = summary.node.systemContainers?.find((c) => c.name === SYSTEM_CONTAINER_PODS);
  return { mem: pods?.memory, where: 'node.systemContainers["pods"].memory' };
}

export function createMemoryThresholdNotifier(opts: MemoryThresholdNotifierOptions): MemoryThresholdNotifier {
  let current: CgroupThresholdNotifier | undefined;
  /** The value the latest updateThreshold asked for. */
  let wanted: number | undefined;
  let arming: Promise<void> | undefined;
  /** Bumped by stop(): a registration that lands after it is dropped. */
  let generation = 0;
  const armedAt = (bytes: number | undefined) => current !== undefined && !current.stopped && current.thresholdBytes === bytes;

  async function armLoop(): Promise<void> {
    const gen = generation;
    while (wanted !== undefined && !armedAt(wanted) && gen === generation) {
      // Arm the new value before dropping the old one, so there is no window without a notifier.
      const next = await armCgroupThreshold(opts.hub, {
        cgroupPath: opts.cgroupPath,
        thresholdBytes: wanted,
        onEvent: (ev) => opts.onEvent({ ...ev, description: opts.description, signal: opts.signal, hard: opts.hard }),
        onRemoved: opts.onRemoved,
      });
      if (gen !== generation) {
        next.stop();
        return;
      }
      current?.stop();
      current = next;
    }
  }

  const self: MemoryThresholdNotifier = {
    description: opts.description,
    cgroupPath: opts.cgroupPath,
    signal: opts.signal,
    hard: opts.hard,
    get token() {
      return current && !current.stopped ? current.token : undefined;
    },
    get armedBytes() {
      return current && !current.stopped ? current.thresholdBytes : undefined;
    },
    updateThreshold(thresholdBytes) {
      wanted = thresholdBytes;
      if (arming) return arming;
      if (armedAt(thresholdBytes)) return Promise.resolve();
      const p = armLoop().finally(() => {
        if (arming === p) arming = undefined;
      });
      arming = p;
      return p;
    },
    async updateFromSummary(summary) {
      if (!opts.threshold) throw new MemcgThresholdError(`${opts.description}: no threshold value configured for updateFromSummary`);
      const { mem, where } = memoryStatsForSignal(summary, opts.signal);
      const bytes = memcgThresholdBytes(mem, opts.threshold, where);
      await self.updateThreshold(bytes);
      return bytes;
    },
    stop() {
      generation++;
      wanted = undefined;
      arming = undefined;
      current?.stop();
      current = undefined;
    },
  };
  return self;
}

export interface MemcgNotifierSet {
  /**
   * Reconciles with the manager's latest targets: stops vanished ones at once, arms new/changed ones
   * off the event loop. Resolves, once every arming settled, with the errors per target (never rejects).
   */
  apply(targets: readonly MemcgTarget[]): Promise<string[]>;
  readonly notifiers: ReadonlyMap<string, MemoryThresholdNotifier>;
  stop(): void;
}

export interface MemcgNotifierSetOptions {
  hub: NotifierHub;
  /** The v1 memory controller mount (default /sys/fs/cgroup/memory). */
  memoryCgroupRoot?: string;
  /** Pod cgroup root relative to the mount (e.g. "kubepods"), for allocatableMemory.available. */
  podsCgroup?: string;
  onEvent(ev: MemcgNotifierEvent): void;
  onRemoved?(cgroupPath: string): void;
}

/** The eviction manager's onNotifierTargets hook: `set.apply(targets)`; `onEvent` → manager.trigger(). */
export function createMemcgNotifierSet(opts: MemcgNotifierSetOptions): MemcgNotifierSet {
  const root = opts.memoryCgroupRoot ?? "/sys/fs/cgroup/memory";
  const notifiers = new Map<string, MemoryThresholdNotifier>();
  const keyOf = (t: MemcgTarget) => t.id ?? `${t.signal}/${t.hard ? "hard" : "soft"}/${t.description}`;
  return {
    notifiers,
    async apply(targets) {
      const errors: string[] = [];
      const armings: Promise<void>[] = [];
      const seen = new Set<string>();
      for (const t of targets) {
        const key = keyOf(t);
        seen.add(key);
        const cgroupPath = t.cgroup === "pods" ? join(root, opts.podsCgroup ?? "kubepods") : root;
        let n = notifiers.get(key);
        if (!n || n.cgroupPath !== cgroupPath) {
          n?.stop();
          n = createMemoryThresholdNotifier({
            hub: opts.hub,
            cgroupPath,
            signal: t.signal,
            hard: t.hard,
            description: t.description,
            onEvent: opts.onEvent,
            onRemoved: opts.onRemoved,
          });
          notifiers.set(key, n);
        }
        armings.push(n.updateThreshold(t.thresholdBytes).catch((e: unknown) => void errors.push(`${t.description} on ${cgroupPath}: ${(e as Error).message}`)));
      }
      for (const [key, n] of notifiers) {
        if (seen.has(key)) continue;
        n.stop();
        notifiers.delete(key);
      }
      await Promise.all(armings);
      return errors;
    },
    stop() {
      for (const n of notifiers.values()) n.stop();
      notifiers.clear();
    },
  };
}
