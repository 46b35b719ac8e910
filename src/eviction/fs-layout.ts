// Filesystem layout and the thresholds and reclaim work that depend on it
// (docs/eviction-contract.md#filesystems-and-layouts, #containerfs-thresholds, #node-level-reclaim).
import type { FsStats, Summary } from "../stats/summary.ts";
import type { FsLayout } from "./rank.ts";
import type { Signal } from "./signals.ts";
import { isHardThreshold, type Threshold } from "./threshold.ts";

const sameFs = (a: FsStats | undefined, b: FsStats | undefined): boolean =>
  !!a && !!b && a.capacityBytes === b.capacityBytes && a.availableBytes === b.availableBytes && a.inodes === b.inodes;

/**
 * Layout from a Summary alone, for when no runtime/device information is injected (simulate,
 * tests): imagefs is dedicated when its section differs from node.fs; writable layers are split
 * when a containerFs section differs from imageFs. Upstream asks the CRI and compares devices.
 */
export function detectFsLayout(summary: Summary): FsLayout {
  const img = summary.node.runtime?.imageFs;
  const cfs = summary.node.runtime?.containerFs;
  const dedicatedImageFs = img !== undefined && !sameFs(img, summary.node.fs);
  const splitContainerImageFs = dedicatedImageFs && cfs !== undefined && !sameFs(cfs, img);
  return { dedicatedImageFs, splitContainerImageFs };
}

/**
 * UpdateContainerFsThresholds (docs/eviction-contract.md#containerfs-thresholds): containerfs.* thresholds are copies of nodefs.* (single fs,
 * split) or imagefs.* (image fs) ones, hard from hard and soft from soft. User containerfs
 * thresholds are replaced (with a warning). Upstream appends an empty, never-met threshold when the
 * source is missing; we leave it out, which behaves the same.
 */
export function updateContainerFsThresholds(thresholds: readonly Threshold[], layout: FsLayout): { thresholds: Threshold[]; warnings: string[] } {
  if (!layout.dedicatedImageFs && layout.splitContainerImageFs) return { thresholds: [...thresholds], warnings: [] };
  const source = layout.dedicatedImageFs && !layout.splitContainerImageFs ? "imagefs" : "nodefs";
  const warnings: string[] = [];
  const out: Threshold[] = [];
  for (const t of thresholds) {
    if (t.signal.startsWith("containerfs.")) {
      warnings.push(`${isHardThreshold(t) ? "hard" : "soft"} ${t.signal} threshold is derived from ${source}; the configured one is replaced`);
      continue;
    }
    out.push(t);
  }
  for (const hard of [true, false]) {
    for (const kind of ["available", "inodesFree"] as const) {
      const src = thresholds.find((t) => t.signal === `${source}.${kind}` && isHardThreshold(t) === hard);
      if (!src) continue;
      out.push({ ...src, signal: `containerfs.${kind}` as Signal });
    }
  }
  return { thresholds: out, warnings };
}

export type ReclaimStep = "deleteUnusedContainers" | "deleteUnusedImages";

/** Node-level reclaim per signal and layout (upstream buildSignalToNodeReclaimFuncs); memory and pid have none. */
export function reclaimStepsFor(signal: Signal, layout: FsLayout): ReclaimStep[] {
  const family = signal.split(".")[0];
  if (family !== "nodefs" && family !== "imagefs" && family !== "containerfs") return [];
  if (!layout.dedicatedImageFs) return ["deleteUnusedContainers", "deleteUnusedImages"];
  if (!layout.splitContainerImageFs) return family === "nodefs" ? [] : ["deleteUnusedContainers", "deleteUnusedImages"];
  return family === "imagefs" ? ["deleteUnusedImages"] : ["deleteUnusedContainers"];
}
