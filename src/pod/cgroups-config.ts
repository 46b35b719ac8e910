// Pure cgroup computations for QoS and pod cgroups (upstream cm/helpers_linux.go ResourceConfigForPod,
// MilliCPUToShares/Quota; cm/node_container_manager_linux.go getNodeAllocatableAbsolute; cgroup names
// from cm/pod_container_manager_linux.go and cgroup_manager_linux.go).
import { parseQuantity, quantityMilliValue, quantityValue } from "../config/quantity.ts";
import type { ContainerLike, PodLike } from "./pod-like.ts";
import { getPodQOS, type QOSClass } from "./qos.ts";

export const MIN_SHARES = 2;
export const MAX_SHARES = 262_144;
export const SHARES_PER_CPU = 1024;
export const QUOTA_PERIOD_US = 100_000;
export const MIN_QUOTA_PERIOD_US = 1000;

export interface ResourceConfig {
  cpuShares?: number;
  cpuQuotaUs?: number;
  cpuPeriodUs?: number;
  memoryLimitBytes?: number;
  pidsLimit?: number;
}

export function milliCPUToShares(milliCPU: number): number {
  if (milliCPU === 0) return MIN_SHARES;
  const shares = Math.floor((milliCPU * SHARES_PER_CPU) / 1000);
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, shares));
}

export function milliCPUToQuota(milliCPU: number, periodUs = QUOTA_PERIOD_US): number {
  if (milliCPU === 0) return 0;
  return Math.max(MIN_QUOTA_PERIOD_US, Math.floor((milliCPU * periodUs) / 1000));
}

const qty = (list: Record<string, string | number> | undefined, name: string): string | undefined => {
  const v = list?.[name];
  return v === undefined ? undefined : String(v);
};
const milli = (s: string | undefined) => (s === undefined ? 0 : quantityMilliValue(parseQuantity(s)));
const bytes = (s: string | undefined) => (s === undefined ? 0 : quantityValue(parseQuantity(s)));

interface PodTotals {
  cpuRequestMilli: number;
  cpuLimitMilli: number;
  memoryLimitBytes: number;
  cpuLimitsDeclared: boolean;
  memoryLimitsDeclared: boolean;
}

/**
 * Pod totals as upstream PodRequests/PodLimits: regular containers summed, then the max with each init
 * container (they run one at a time), plus spec.overhead (to requests always, to a limit only when
 * non-zero). A resource counts as "limited" only if every container limits it.
 */
export function podTotals(pod: PodLike): PodTotals {
  const t = containerTotals(pod);
  const overhead = pod.spec.overhead;
  if (!overhead) return t;
  const cpu = milli(qty(overhead, "cpu"));
  const memory = bytes(qty(overhead, "memory"));
  return {
    ...t,
    cpuRequestMilli: t.cpuRequestMilli + cpu,
    cpuLimitMilli: t.cpuLimitMilli > 0 ? t.cpuLimitMilli + cpu : 0,
    memoryLimitBytes: t.memoryLimitBytes > 0 ? t.memoryLimitBytes + memory : 0,
  };
}

function containerTotals(pod: PodLike): PodTotals {
  const sum = (cs: ContainerLike[], f: (c: ContainerLike) => number) => cs.reduce((a, c) => a + f(c), 0);
  const regular = pod.spec.containers;
  const init = pod.spec.initContainers ?? [];
  const req = (c: ContainerLike, r: string) => qty(c.resources?.requests, r) ?? qty(c.resources?.limits, r);
  const maxInit = (f: (c: ContainerLike) => number) => init.reduce((a, c) => Math.max(a, f(c)), 0);
  const cpuReq = (c: ContainerLike) => milli(req(c, "cpu"));
  const cpuLim = (c: ContainerLike) => milli(qty(c.resources?.limits, "cpu"));
  const memLim = (c: ContainerLike) => bytes(qty(c.resources?.limits, "memory"));
  const all = [...regular, ...init];
  return {
    cpuRequestMilli: Math.max(sum(regular, cpuReq), maxInit(cpuReq)),
    cpuLimitMilli: Math.max(sum(regular, cpuLim), maxInit(cpuLim)),
    memoryLimitBytes: Math.max(sum(regular, memLim), maxInit(memLim)),
    cpuLimitsDeclared: all.every((c) => qty(c.resources?.limits, "cpu") !== undefined),
    memoryLimitsDeclared: all.every((c) => qty(c.resources?.limits, "memory") !== undefined),
  };
}

/** Upstream ResourceConfigForPod (CFS quota enforced, as the kubelet default cpuCFSQuota=true). */
export function podResourceConfig(pod: PodLike, opts: { podPidsLimit?: number; cpuCFSQuota?: boolean } = {}): ResourceConfig {
  const qos = getPodQOS(pod);
  const t = podTotals(pod);
  const cfg: ResourceConfig = {};
  const quota = opts.cpuCFSQuota === false ? undefined : milliCPUToQuota(t.cpuLimitMilli);
  if (qos === "Guaranteed") {
    cfg.cpuShares = milliCPUToShares(t.cpuRequestMilli);
    if (quota) Object.assign(cfg, { cpuQuotaUs: quota, cpuPeriodUs: QUOTA_PERIOD_US });
    cfg.memoryLimitBytes = t.memoryLimitBytes;
  } else if (qos === "Burstable") {
    cfg.cpuShares = milliCPUToShares(t.cpuRequestMilli);
    if (t.cpuLimitsDeclared && quota) Object.assign(cfg, { cpuQuotaUs: quota, cpuPeriodUs: QUOTA_PERIOD_US });
    if (t.memoryLimitsDeclared) cfg.memoryLimitBytes = t.memoryLimitBytes;
  } else {
    cfg.cpuShares = MIN_SHARES;
  }
  if (opts.podPidsLimit !== undefined && opts.podPidsLimit > 0) cfg.pidsLimit = opts.podPidsLimit;
  return cfg;
}

export type CgroupDriver = "cgroupfs" | "systemd";

/** Path components below the cgroup root: ["kubepods", "burstable", "pod<uid>"]; Guaranteed pods sit at the top. */
export function podCgroupName(qos: QOSClass, uid: string): string[] {
  const pod = `pod${uid}`;
  return qos === "Guaranteed" ? ["kubepods", pod] : ["kubepods", qos.toLowerCase(), pod];
}

export function qosCgroupName(qos: QOSClass): string[] {
  return qos === "Guaranteed" ? ["kubepods"] : ["kubepods", qos.toLowerCase()];
}

/** Joins cgroupRoot ("/" by default) and the name as cgroupfs paths: "/kubepods/burstable/pod<uid>". */
export function cgroupfsPath(cgroupRoot: string, name: string[]): string {
  const root = cgroupRoot.replace(/\/+$/, "");
  return `${root}/${name.join("/")}`.replace(/\/+/g, "/");
}

/** The systemd driver's slice name (upstream ToSystemd): kubepods-burstable-pod<uid_>.slice. */
export function systemdSliceName(name: string[]): string {
  const parts = name.map((n) => n.replaceAll("-", "_"));
  return `${parts.join("-")}.slice`;
}

/**
 * Directory of a cgroup below a controller's mount. cgroupfs: "<root>/kubepods/burstable/pod<uid>";
 * systemd (upstream ToSystemd + slice expansion): "/kubepods.slice/kubepods-burstable.slice/
 * kubepods-burstable-pod<uid_>.slice".
 */
export function cgroupDirPath(driver: CgroupDriver, cgroupRoot: string, name: string[]): string {
  if (driver === "cgroupfs") return cgroupfsPath(cgroupRoot, name);
  const dirs: string[] = [];
  for (let i = 1; i <= name.length; i++) dirs.push(systemdSliceName(name.slice(0, i)));
  return `/${dirs.join("/")}`;
}

/** A pod cgroup directory's UID: "pod<uid>" (cgroupfs) or "kubepods-burstable-pod<uid_>.slice" (systemd, "_" for "-"). */
export function podUidFromDir(dirName: string): string | undefined {
  if (dirName.startsWith("pod")) return dirName.slice(3);
  const m = /(?:^|-)pod([^-]+)\.slice$/.exec(dirName);
  return m ? m[1]!.replaceAll("_", "-") : undefined;
}

/** cgroup_parent for CRI's LinuxPodSandboxConfig (upstream GetPodCgroupParent: the name's cgroupfs form, expanded slices with systemd). */
export function podCgroupParent(pod: PodLike, opts: { cgroupRoot?: string; driver?: CgroupDriver } = {}): string {
  return cgroupDirPath(opts.driver ?? "cgroupfs", opts.cgroupRoot ?? "/", podCgroupName(getPodQOS(pod), pod.metadata.uid ?? ""));
}

/**
 * kubepods limits when enforceNodeAllocatable has "pods": capacity − systemReserved − kubeReserved,
 * per resource, floored at 0 (upstream getNodeAllocatableAbsolute; the hard eviction threshold is NOT
 * subtracted here — it only lowers status.allocatable, so eviction can act before the cgroup limit bites).
 */
export function nodeAllocatableAbsolute(
  capacity: Record<string, string>,
  systemReserved: Record<string, string> = {},
  kubeReserved: Record<string, string> = {},
): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const [k, v] of Object.entries(capacity)) {
    let n = parseQuantity(v).nanos;
    if (systemReserved[k]) n -= parseQuantity(systemReserved[k]).nanos;
    if (kubeReserved[k]) n -= parseQuantity(kubeReserved[k]).nanos;
    out[k] = n < 0n ? 0n : n;
  }
  return out;
}

/** The kubepods cgroup's resource config from node allocatable (or capacity when "pods" is not enforced). */
export function kubepodsResourceConfig(allocatable: Record<string, bigint>): ResourceConfig {
  const NANO = 1_000_000_000n;
  const cfg: ResourceConfig = {};
  if (allocatable.memory !== undefined) cfg.memoryLimitBytes = Number(allocatable.memory / NANO);
  if (allocatable.cpu !== undefined) cfg.cpuShares = milliCPUToShares(Number(allocatable.cpu / 1_000_000n));
  if (allocatable.pid !== undefined) cfg.pidsLimit = Number(allocatable.pid / NANO);
  return cfg;
}

/** Burstable QoS cgroup cpu.shares = shares of the summed cpu requests of burstable pods (upstream setCPUCgroupConfig). */
export function burstableCpuShares(pods: PodLike[]): number {
  const milliTotal = pods.filter((p) => getPodQOS(p) === "Burstable").reduce((a, p) => a + podTotals(p).cpuRequestMilli, 0);
  return milliCPUToShares(milliTotal);
}

/**
 * kubepods limits from KubeletConfiguration (upstream createNodeAllocatableCgroups): node allocatable
 * when enforceNodeAllocatable has "pods", else plain capacity (still written: the default cpu.shares
 * of a new cgroup would starve pods).
 */
export function kubepodsConfigFromKubelet(
  cfg: { enforceNodeAllocatable?: string[]; systemReserved?: Record<string, string>; kubeReserved?: Record<string, string> },
  capacity: { memoryBytes: number; cpus: number; pids?: number },
): ResourceConfig {
  const cap: Record<string, string> = { memory: String(capacity.memoryBytes), cpu: String(capacity.cpus) };
  if (capacity.pids !== undefined) cap.pid = String(capacity.pids);
  const enforce = (cfg.enforceNodeAllocatable ?? ["pods"]).includes("pods");
  return kubepodsResourceConfig(enforce ? nodeAllocatableAbsolute(cap, cfg.systemReserved, cfg.kubeReserved) : nodeAllocatableAbsolute(cap));
}
