// Image garbage collection's policy (upstream pkg/kubelet/images/image_gc_manager.go): how full the
// image filesystem is against the thresholds, which unused images to remove to get back under the low
// one — least recently used first, never one in use, pinned, the sandbox image, or first seen less than
// imageMinimumGCAge ago — and what is known of each image from one listing to the next. Pure.
import type { ImageUsage } from "../kuberuntime/gc.ts";

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
