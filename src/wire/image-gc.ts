// Threshold-driven image garbage collection (upstream pkg/kubelet/images/image_gc_manager.go,
// started by Kubelet.StartGarbageCollection every ImageGCPeriod = 5 min). When the image filesystem
// is at least imageGCHighThresholdPercent full, unused images are removed — least recently used
// first, never one in use, pinned, the sandbox image, or first seen less than imageMinimumGCAge ago —
// until usage is down to imageGCLowThresholdPercent.
//
// The manager remembers when each image was first detected and last seen in use; everything it
// touches (CRI, clock, imagefs stats, sandbox images) is injected. Listing and removal are shared with
// the eviction manager's node-level reclaim (src/pod/kuberuntime/gc.ts).
import type { CriClient } from "../cri/client.ts";
import { kv, log } from "../log.ts";
import { every, type Clock } from "../clock.ts";
import { listImageUsage, removeImage, type ImageUsage } from "../pod/kuberuntime/gc.ts";
import type { FsStats } from "../stats/summary.ts";

/** Upstream ImageGCPeriod. */
export const IMAGE_GC_PERIOD_MS = 5 * 60_000;

export interface ImageGCPolicy {
  highThresholdPercent: number;
  lowThresholdPercent: number;
  minAgeMs: number;
}

/** What GC knows about one image. Times are epoch ms; 0 = "unknown, in the past". */
export interface ImageRecord extends ImageUsage {
  firstDetectedMs: number;
  /** Last time it was seen in use; 0 if never. */
  lastUsedMs: number;
}

export type GcTarget = { over: false; usagePercent: number } | { over: true; usagePercent: number; amountToFreeBytes: number };

/**
 * Pure: upstream's arithmetic over the imagefs stats. usage = 100 − ⌊available·100/capacity⌋ (integer
 * percent); at or over the high threshold, free capacity·(100−low)/100 − available bytes.
 */
export function imageGCTarget(
  fs: { capacityBytes: number; availableBytes: number },
  policy: Pick<ImageGCPolicy, "highThresholdPercent" | "lowThresholdPercent">,
): GcTarget {
  const capacity = fs.capacityBytes;
  if (!(capacity > 0)) throw new Error(`invalid capacity ${capacity} on image filesystem`);
  const available = Math.min(fs.availableBytes, capacity);
  const usagePercent = 100 - Math.floor((available * 100) / capacity);
  if (usagePercent < policy.highThresholdPercent) return { over: false, usagePercent };
  const amountToFreeBytes = Math.floor((capacity * (100 - policy.lowThresholdPercent)) / 100) - available;
  return { over: true, usagePercent, amountToFreeBytes };
}

export interface GcPlan {
  /** In removal order. */
  delete: ImageRecord[];
  /** Bytes of the planned images (may fall short of the target). */
  plannedBytes: number;
  /** Unused images kept only because they are younger than minAge. */
  tooYoung: ImageRecord[];
}

/**
 * Pure: which images to remove to free `bytesToFree`, as upstream freeSpace: candidates ordered by
 * last use then first detection (oldest first), skipping images in use, kept (pinned, sandbox) and
 * those first detected less than minAge ago; stop once the planned sizes reach the target.
 */
export function planImageGC(records: readonly ImageRecord[], bytesToFree: number, nowMs: number, minAgeMs: number): GcPlan {
  const candidates = records.filter((r) => !r.inUse && !r.kept).sort((a, b) => a.lastUsedMs - b.lastUsedMs || a.firstDetectedMs - b.firstDetectedMs);
  const plan: GcPlan = { delete: [], plannedBytes: 0, tooYoung: [] };
  for (const r of candidates) {
    if (plan.plannedBytes >= bytesToFree) break;
    if (nowMs - r.firstDetectedMs < minAgeMs) {
      plan.tooYoung.push(r);
      continue;
    }
    plan.delete.push(r);
    plan.plannedBytes += r.sizeBytes;
  }
  return plan;
}

/** Pure: records updated by a new listing (upstream detectImages); vanished images are dropped. */
export function detectImages(
  prev: ReadonlyMap<string, ImageRecord>,
  listing: readonly ImageUsage[],
  detectMs: number,
  nowMs: number,
): Map<string, ImageRecord> {
  const next = new Map<string, ImageRecord>();
  for (const img of listing) {
    const old = prev.get(img.id);
    next.set(img.id, {
      ...img,
      firstDetectedMs: old?.firstDetectedMs ?? detectMs,
      lastUsedMs: img.inUse ? nowMs : (old?.lastUsedMs ?? 0),
    });
  }
  return next;
}

export interface ImageGCManagerDeps {
  cri: Pick<CriClient, "listImages" | "listContainers" | "removeImage">;
  clock: Clock;
  policy: ImageGCPolicy;
  /** The image filesystem's stats (node summary's runtime.imageFs, or node.fs when images share it). */
  imageFsStats(): Promise<FsStats | undefined>;
  /** Images never collected (the sandbox/pause image). */
  keepImages(): Promise<string[]>;
  periodMs?: number;
}

export interface ImageGCResult {
  usagePercent: number;
  amountToFreeBytes: number;
  freedBytes: number;
  removed: string[];
}

export interface ImageGCManager {
  /** One GC pass; rejects when the target could not be reached (as upstream GarbageCollect errors). */
  garbageCollect(): Promise<ImageGCResult | undefined>;
  records(): ImageRecord[];
  start(): Promise<void>;
  stop(): void;
}

export function createImageGCManager(deps: ImageGCManagerDeps): ImageGCManager {
  const { cri, clock, policy } = deps;
  let records = new Map<string, ImageRecord>();
  let initialized = false;
  let stopLoop: (() => void) | undefined;
  let stopped = false;
  let prevFailed = false;

  async function detect(): Promise<void> {
    const listing = await listImageUsage(cri, await deps.keepImages());
    const now = clock.now();
    // Upstream: the first detection makes the detected time "unknown, in the past", so images that
    // were there before the agent started are not protected by minAge after every restart.
    records = detectImages(records, listing, initialized ? now : 0, now);
    initialized = true;
  }

  async function garbageCollect(): Promise<ImageGCResult | undefined> {
    const fs = await deps.imageFsStats();
    if (fs?.capacityBytes === undefined || fs.availableBytes === undefined) throw new Error("imagefs stats not available");
    if (fs.availableBytes > fs.capacityBytes)
      log.info(`Availability is larger than capacity ${kv({ available: fs.availableBytes, capacity: fs.capacityBytes })}`);
    const target = imageGCTarget({ capacityBytes: fs.capacityBytes, availableBytes: fs.availableBytes }, policy);
    await detect();
    if (!target.over) {
      log.debug(`image gc: below the high threshold ${kv({ usage: target.usagePercent, highThreshold: policy.highThresholdPercent })}`);
      return undefined;
    }
    const { usagePercent, amountToFreeBytes } = target;
    log.info(
      `Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold ${kv({ usage: usagePercent, highThreshold: policy.highThresholdPercent, amountToFree: amountToFreeBytes, lowThreshold: policy.lowThresholdPercent })}`,
    );
    const now = clock.now();
    const plan = planImageGC([...records.values()], amountToFreeBytes, now, policy.minAgeMs);
    for (const r of plan.tooYoung) {
      log.debug(
        `image gc: image younger than imageMinimumGCAge, not eligible ${kv({ image: r.name, ageMs: now - r.firstDetectedMs, minAgeMs: policy.minAgeMs })}`,
      );
    }
    const removed: string[] = [];
    let freedBytes = 0;
    for (const r of plan.delete) {
      log.info(
        `Removing image to free bytes ${kv({ imageID: r.id, image: r.name, size: r.sizeBytes, lastUsed: r.lastUsedMs ? new Date(r.lastUsedMs).toISOString() : "never", firstDetected: r.firstDetectedMs ? new Date(r.firstDetectedMs).toISOString() : "before start" })}`,
      );
      if (!(await removeImage(cri, r))) continue;
      records.delete(r.id);
      removed.push(r.name);
      freedBytes += r.sizeBytes;
    }
    const result = { usagePercent, amountToFreeBytes, freedBytes, removed };
    if (freedBytes < amountToFreeBytes) {
      throw Object.assign(
        new Error(
          `Failed to garbage collect required amount of images. Attempted to free ${amountToFreeBytes} bytes, but only found ${freedBytes} bytes eligible to free.`,
        ),
        { result },
      );
    }
    log.info(`image gc freed the required bytes ${kv({ freed: freedBytes, amountToFree: amountToFreeBytes, removed: removed.join(",") })}`);
    return result;
  }

  // Upstream StartGarbageCollection: one failure is logged as possibly stats not being ready yet,
  // repeated failures as errors; success after failure is logged again.
  async function cycle(): Promise<void> {
    try {
      await garbageCollect();
      if (prevFailed) log.info("Image garbage collection succeeded");
      else log.debug("Image garbage collection succeeded");
      prevFailed = false;
    } catch (e) {
      const error = (e as Error).message;
      if (prevFailed) log.error(`Image garbage collection failed multiple times in a row ${kv({ error })}`);
      else log.error(`Image garbage collection failed once. Stats initialization may not have completed yet ${kv({ error })}`);
      prevFailed = true;
    }
  }

  return {
    garbageCollect,
    records: () => [...records.values()],
    async start() {
      if (stopped) return;
      if (policy.highThresholdPercent >= 100) {
        log.info(`ImageGCHighThresholdPercent is set 100, Disable image GC ${kv({ imageGCHighThresholdPercent: policy.highThresholdPercent })}`);
        return;
      }
      log.info(
        `image gc every ${(deps.periodMs ?? IMAGE_GC_PERIOD_MS) / 1000}s ${kv({ highThreshold: policy.highThresholdPercent, lowThreshold: policy.lowThresholdPercent, minAgeMs: policy.minAgeMs })}`,
      );
      try {
        await detect();
      } catch (e) {
        log.warn(`image gc: first image detection failed ${kv({ error: (e as Error).message })}`);
      }
      if (stopped) return;
      await cycle();
      if (stopped) return;
      stopLoop = every(clock, deps.periodMs ?? IMAGE_GC_PERIOD_MS, cycle);
    },
    stop() {
      stopped = true;
      stopLoop?.();
      stopLoop = undefined;
    },
  };
}
