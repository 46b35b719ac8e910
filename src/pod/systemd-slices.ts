// Pure: the transient slice units the systemd cgroup driver asks systemd for over D-Bus
// (org.freedesktop.systemd1.Manager.StartTransientUnit), as upstream's container manager does through
// libcontainer's systemd manager: kubelet names a cgroup "kubepods-burstable-pod<uid_>.slice" with
// parent "kubepods-burstable.slice" (cm/cgroup_manager_linux.go libctCgroupConfig), and libcontainer
// starts it with Wants=<parent>, accounting on, DefaultDependencies=no and the resources as unit
// properties (runc libcontainer/cgroups/systemd v2.go Apply + genV2ResourcesProperties, common.go
// addCPUQuota; on cgroup v1 v1.go genV1ResourcesProperties). The D-Bus transport is systemd-dbus.ts.
import { systemdSliceName, type ResourceConfig } from "./cgroups-config.ts";
import { cpuWeightFromShares } from "./unified-resources.ts";

/** systemd's "infinity" for uint64 properties (USEC_INFINITY, CGROUP_LIMIT_MAX). */
export const UINT64_MAX = 18_446_744_073_709_551_615n;
/** systemd versions below this ignore CPUQuotaPeriodUSec (libcontainer logs and skips it). */
export const CPU_QUOTA_PERIOD_MIN_SYSTEMD = 242;

/** One D-Bus unit property: name, D-Bus signature and value ("t" values are bigint: they exceed 2^53). */
export type UnitProperty =
  | { name: string; signature: "s"; value: string }
  | { name: string; signature: "as"; value: string[] }
  | { name: string; signature: "b"; value: boolean }
  | { name: string; signature: "t"; value: bigint };

export interface TransientUnit {
  /** e.g. "kubepods-burstable-podab_cd.slice". */
  name: string;
  /** The parent slice ("-.slice" for a top-level one). */
  parent: string;
  /** StartTransientUnit mode, as libcontainer: "replace". */
  mode: "replace";
  properties: UnitProperty[];
}

const u64 = (name: string, value: bigint | number): UnitProperty => ({ name, signature: "t", value: BigInt(value) });
const bool = (name: string, value: boolean): UnitProperty => ({ name, signature: "b", value });

/** Parent slice of a cgroup name (upstream: path.Split of ToSystemd, "/" → "-.slice"). */
export function parentSlice(name: string[]): string {
  return name.length <= 1 ? "-.slice" : systemdSliceName(name.slice(0, -1));
}

/**
 * CPUQuotaPerSecUSec from a CFS quota/period (libcontainer addCPUQuota): systemd keeps whole percents of
 * a CPU, so the value is rounded up to 10 ms per second; a negative quota is "no limit" (infinity).
 * Also returns the quota the cgroupfs write must then use so both agree.
 */
export function cpuQuotaPerSecUSec(quotaUs: number, periodUs: number): { perSecUSec: bigint; quotaUs: number } {
  if (quotaUs <= 0) return { perSecUSec: UINT64_MAX, quotaUs };
  let perSec = Math.floor((quotaUs * 1_000_000) / periodUs);
  if (perSec % 10_000 !== 0) {
    perSec = (Math.floor(perSec / 10_000) + 1) * 10_000;
    quotaUs = Math.floor((perSec * periodUs) / 1_000_000);
  }
  return { perSecUSec: BigInt(perSec), quotaUs };
}

/** The CPU quota and the tasks limit, the same properties on v1 and v2 (libcontainer addCPUQuota, TasksMax). */
function quotaAndTasksProperties(cfg: ResourceConfig, systemdVersion: number): UnitProperty[] {
  const props: UnitProperty[] = [];
  const quota = cfg.cpuQuotaUs ?? 0;
  const period = cfg.cpuPeriodUs ?? 0;
  if (period !== 0 && systemdVersion >= CPU_QUOTA_PERIOD_MIN_SYSTEMD) props.push(u64("CPUQuotaPeriodUSec", period));
  if (quota !== 0 || period !== 0) props.push(u64("CPUQuotaPerSecUSec", cpuQuotaPerSecUSec(quota, period || 100_000).perSecUSec));
  if (cfg.pidsLimit !== undefined && (cfg.pidsLimit > 0 || cfg.pidsLimit === -1)) props.push(u64("TasksMax", cfg.pidsLimit > 0 ? cfg.pidsLimit : UINT64_MAX));
  return props;
}

/** The resource properties of a slice on cgroup v2 (libcontainer genV2ResourcesProperties subset kubelet uses). */
export function v2ResourceProperties(cfg: ResourceConfig, systemdVersion: number): UnitProperty[] {
  const props: UnitProperty[] = [];
  if (cfg.memoryLimitBytes !== undefined && cfg.memoryLimitBytes !== 0)
    props.push(u64("MemoryMax", cfg.memoryLimitBytes > 0 ? cfg.memoryLimitBytes : UINT64_MAX));
  if (cfg.cpuShares !== undefined) props.push(u64("CPUWeight", cpuWeightFromShares(cfg.cpuShares)));
  return [...props, ...quotaAndTasksProperties(cfg, systemdVersion)];
}

/**
 * The resource properties of a slice on cgroup v1 (libcontainer genV1ResourcesProperties subset kubelet
 * uses): MemoryLimit, CPUShares, the CPU quota as on v2, TasksMax. libcontainer's v1 manager then also
 * writes the cgroupfs files itself (fs Set), as bunlet does after starting the unit.
 */
export function v1ResourceProperties(cfg: ResourceConfig, systemdVersion: number): UnitProperty[] {
  const props: UnitProperty[] = [];
  if (cfg.memoryLimitBytes !== undefined && cfg.memoryLimitBytes !== 0)
    props.push(u64("MemoryLimit", cfg.memoryLimitBytes > 0 ? cfg.memoryLimitBytes : UINT64_MAX));
  if (cfg.cpuShares !== undefined && cfg.cpuShares !== 0) props.push(u64("CPUShares", cfg.cpuShares));
  return [...props, ...quotaAndTasksProperties(cfg, systemdVersion)];
}

/** The resource properties of a slice for this cgroup version (v1ResourceProperties / v2ResourceProperties). */
export function resourceProperties(cfg: ResourceConfig, opts: { systemdVersion: number; cgroupVersion?: 1 | 2 }): UnitProperty[] {
  return opts.cgroupVersion === 1 ? v1ResourceProperties(cfg, opts.systemdVersion) : v2ResourceProperties(cfg, opts.systemdVersion);
}

/** The StartTransientUnit request for a QoS or pod cgroup name (["kubepods", "burstable", "pod<uid>"]); cgroup v2 unless `cgroupVersion: 1`. */
export function transientSlice(name: string[], cfg: ResourceConfig, opts: { systemdVersion: number; cgroupVersion?: 1 | 2 }): TransientUnit {
  const unit = systemdSliceName(name);
  const parent = parentSlice(name);
  return {
    name: unit,
    parent,
    mode: "replace",
    properties: [
      { name: "Description", signature: "s", value: `libcontainer container ${unit}` },
      // A slice's parent is given by Wants= (a scope would use Slice=).
      { name: "Wants", signature: "as", value: [parent] },
      bool("MemoryAccounting", true),
      bool("CPUAccounting", true),
      // v1: blkio's accounting switch (libcontainer v1 Apply), v2: io's.
      bool(opts.cgroupVersion === 1 ? "BlockIOAccounting" : "IOAccounting", true),
      bool("TasksAccounting", true),
      bool("DefaultDependencies", false),
      ...resourceProperties(cfg, opts),
    ],
  };
}
