// Pure cgroup v2 (unified hierarchy) computations for QoS and pod cgroups: the files a ResourceConfig
// writes and their values, as upstream's container manager passes them to libcontainer's fs2 manager
// (pkg/kubelet/cm/cgroup_manager_linux.go toResources + getCPUWeight; runc libcontainer/cgroups/fs2
// setCpu/setMemory/setPids), and which controllers a new level enables (fs2 CreateCgroupPath).
import type { ResourceConfig } from "./cgroups-config.ts";

export const MAX_CPU_WEIGHT = 10_000;

/** upstream getCPUWeight: cpu.shares [2, 262144] → cpu.weight [1, 10000]. */
export function cpuWeightFromShares(shares: number): number {
  if (shares >= 262_144) return MAX_CPU_WEIGHT;
  if (shares <= 2) return 1;
  return 1 + Math.floor(((shares - 2) * 9999) / 262_142);
}

/**
 * cpu.max as fs2 setCpu writes it: "<quota|max> <period>" — "max" when the quota is unset or negative
 * (unlimited), the period only when one is set. Undefined when neither is set (nothing written).
 */
export function cpuMaxValue(quotaUs: number | undefined, periodUs: number | undefined): string | undefined {
  if (!quotaUs && !periodUs) return undefined;
  const quota = quotaUs !== undefined && quotaUs > 0 ? String(quotaUs) : "max";
  return periodUs ? `${quota} ${periodUs}` : quota;
}

export interface UnifiedFile {
  /** The controller that owns the file (must be enabled in the parent's cgroup.subtree_control). */
  controller: string;
  file: string;
  value: string;
}

/** The files a ResourceConfig writes on cgroup v2, in the order fs2 Set writes them. */
export function unifiedResourceFiles(cfg: ResourceConfig & { unified?: Record<string, string> }): UnifiedFile[] {
  const out: UnifiedFile[] = [];
  if (cfg.memoryLimitBytes !== undefined && cfg.memoryLimitBytes !== 0)
    out.push({ controller: "memory", file: "memory.max", value: cfg.memoryLimitBytes > 0 ? String(cfg.memoryLimitBytes) : "max" });
  if (cfg.cpuShares !== undefined) out.push({ controller: "cpu", file: "cpu.weight", value: String(cpuWeightFromShares(cfg.cpuShares)) });
  const cpuMax = cpuMaxValue(cfg.cpuQuotaUs, cfg.cpuPeriodUs);
  if (cpuMax !== undefined) out.push({ controller: "cpu", file: "cpu.max", value: cpuMax });
  if (cfg.pidsLimit !== undefined && cfg.pidsLimit !== 0)
    out.push({ controller: "pids", file: "pids.max", value: cfg.pidsLimit > 0 ? String(cfg.pidsLimit) : "max" });
  // upstream: `unified` entries are written last and win over the converted values.
  for (const [file, value] of Object.entries(cfg.unified ?? {})) {
    const controller = file.split(".")[0] ?? file;
    const at = out.findIndex((f) => f.file === file);
    if (at >= 0) out.splice(at, 1);
    out.push({ controller, file, value });
  }
  return out;
}

/** The "+memory +cpu …" line a level's cgroup.subtree_control gets: every controller the root offers. */
export function subtreeControlLine(rootControllers: string[]): string {
  return rootControllers.map((c) => `+${c}`).join(" ");
}

/** Parses cgroup.controllers / cgroup.subtree_control ("cpuset cpu io memory pids"). */
export function parseControllers(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

/** The controllers kubelet needs for QoS cgroups; missing ones are named in a warning, not fatal. */
export const REQUIRED_V2_CONTROLLERS = ["memory", "cpu", "pids"] as const;
