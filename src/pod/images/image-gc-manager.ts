// Threshold-driven image garbage collection (upstream pkg/kubelet/images/image_gc_manager.go,
// started by Kubelet.StartGarbageCollection every ImageGCPeriod = 5 min). When the image filesystem
// is at least imageGCHighThresholdPercent full, unused images are removed as the policy plans them
// (image-gc-policy.ts) until usage is down to imageGCLowThresholdPercent.
//
// The manager remembers when each image was first detected and last seen in use; everything it
// touches (CRI, clock, imagefs stats, sandbox images) is injected. Listing and removal are shared with
// the eviction manager's node-level reclaim (src/pod/kuberuntime/gc.ts).
import { type Clock, every } from "../../clock.ts";
import type { CriClient } from "../../cri/client.ts";
import { kv, log } from "../../log.ts";
import { listImageUsage, removeImage } from "../kuberuntime/gc.ts";
import { detectImages, type ImageGCPolicy, type ImageRecord, imageGCTarget, planImageGC } from "./image-gc-policy.ts";

/** Upstream ImageGCPeriod. */
export const IMAGE_GC_PERIOD_MS = 5 * 60_000;

/** The image filesystem's capacity and what is available on it (a stats Summary's FsStats is one). */
export interface ImageFsStats {
  capacityBytes?: number;
  availableBytes?: number;
}

export interface ImageGCManagerDeps {
  cri: Pick<CriClient, "listImages" | "listContainers" | "removeImage">;
  clock: Clock;
  policy: ImageGCPolicy;
  /** The image filesystem's stats (node summary's runtime.imageFs, or node.fs when images share it). */
  imageFsStats(): Promise<ImageFsStats | undefined>;
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

/** The image GC manager; start() runs a pass at once and then every periodMs. */
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
