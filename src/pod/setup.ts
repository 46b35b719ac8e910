// Builds the pod lifecycle (and its QoS/pod cgroups) from the loaded kubelet configuration, so the
// composition root only supplies the runtime: node name (hostnameOverride or hostname, lowercased as
// upstream), host IP (--node-ip or the first non-internal IPv4), sources, frequencies, cgroups.
import type { AllocationManager } from "./allocation/index.ts";
import type { EventRecorder } from "../events/types.ts";
import { existsSync, readFileSync } from "node:fs";
import { availableParallelism, hostname } from "node:os";
import { kv, log } from "../log.ts";
import { kubepodsConfigFromKubelet, type CgroupDriver } from "./cgroups-config.ts";
import { detectV1Controllers } from "./cm/cgroup-v1-manager.ts";
import { isUnifiedMount, rootControllers } from "./cm/cgroup-v2-manager.ts";
import { createPodCgroupManager, type PodCgroupManager, type PodCgroupManagerOptions } from "./cm/container-manager.ts";
import { createSystemdDBus, type SystemdUnits } from "./systemd-dbus.ts";
import type { Clock } from "../clock.ts";
import { createPodLifecycle } from "./lifecycle.ts";
import { defaultHostIP, lifecycleConfigFromKubelet, type PodAdmitHandler, type PodCgroups, type PodLifecycle } from "./lifecycle-types.ts";
import type { LifecycleKubeletConfig, PodLifecycleDeps } from "./lifecycle-types.ts";
import type { PodLifecycleMetrics } from "./lifecycle-metrics.ts";
import type { Runtime } from "./runtime.ts";

/** The KubeletConfiguration fields the pod side reads: the lifecycle's plus the QoS cgroups' (v1beta1 names, defaults applied). */
export interface PodKubeletConfig extends LifecycleKubeletConfig {
  cgroupsPerQOS?: boolean;
  cgroupRoot?: string;
  cgroupDriver?: string;
  podPidsLimit?: number;
  cpuCFSQuota?: boolean;
  enforceNodeAllocatable?: string[];
  systemReserved?: Record<string, string>;
  kubeReserved?: Record<string, string>;
}

export interface NodeCapacity {
  memoryBytes: number;
  cpus: number;
  pids?: number;
  /** SwapTotal of /proc/meminfo (cAdvisor machineInfo.SwapCapacity); 0 without swap. */
  swapBytes?: number;
}

export function nodeCapacity(): NodeCapacity {
  let memoryBytes = 0;
  let swapBytes = 0;
  let pids: number | undefined;
  try {
    const meminfo = readFileSync("/proc/meminfo", "utf8");
    const m = /^MemTotal:\s+(\d+) kB/m.exec(meminfo);
    memoryBytes = m ? Number(m[1]) * 1024 : 0;
    swapBytes = Number(/^SwapTotal:\s+(\d+) kB/m.exec(meminfo)?.[1] ?? 0) * 1024;
    pids = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8").trim()) || undefined;
  } catch {
    // not Linux: limits stay unset
  }
  return { memoryBytes, cpus: availableParallelism(), pids, swapBytes };
}

const SYSTEMD_RUNTIME_DIR = "/run/systemd/system";
/** libcontainer's systemd.IsRunningSystemd. */
function systemdRunning(): boolean {
  return existsSync(SYSTEMD_RUNTIME_DIR);
}

/** Upstream nodeutil.GetHostname: the override or the hostname, trimmed and lowercased. */
export function nodeNameFrom(hostnameOverride?: string): string {
  return (hostnameOverride?.trim() || hostname()).toLowerCase();
}

/**
 * The QoS/pod cgroup manager for this host: cgroup v2 when `mountRoot` is a cgroup2 mount, else the v1
 * controllers mounted under it; undefined (with one warning) when neither offers a memory controller.
 */
export function createQoSCgroupManager(
  config: PodKubeletConfig,
  mountRoot: string,
  capacity?: NodeCapacity,
  systemdUnits: () => SystemdUnits = () => createSystemdDBus(),
): PodCgroupManager | undefined {
  const unified = isUnifiedMount(mountRoot);
  const controllers = unified ? rootControllers(mountRoot) : detectV1Controllers(mountRoot);
  if (!controllers.includes("memory")) {
    const what = unified ? `the cgroup v2 root ${mountRoot} offers no memory controller` : `no cgroup v1 memory controller under ${mountRoot}`;
    log.warn(`cgroupsPerQOS: ${what}; pods run without QoS cgroups`);
    return undefined;
  }
  const driver: CgroupDriver = config.cgroupDriver === "systemd" ? "systemd" : "cgroupfs";
  const kubepods = kubepodsConfigFromKubelet(config, capacity ?? nodeCapacity());
  const opts: PodCgroupManagerOptions = {
    mountRoot,
    cgroupVersion: unified ? 2 : 1,
    cgroupRoot: config.cgroupRoot || "/",
    driver,
    controllers,
    podPidsLimit: config.podPidsLimit !== undefined && config.podPidsLimit > 0 ? config.podPidsLimit : undefined,
    cpuCFSQuota: config.cpuCFSQuota,
    kubepods,
    // systemd: slices go through systemd over D-Bus as upstream (libcontainer's systemd managers). On v1
    // without systemd running (libcontainer IsRunningSystemd: /run/systemd/system) the slice-named
    // directories are made directly, with a warning.
    systemd: driver === "systemd" && (unified || systemdRunning()) ? systemdUnits() : undefined,
  };
  if (driver === "systemd" && !opts.systemd)
    log.warn(
      `cgroupDriver systemd but systemd is not running (no ${SYSTEMD_RUNTIME_DIR}): QoS and pod cgroups are slice-named directories made without systemd`,
    );
  log.debug(`pod cgroups ${kv({ driver, cgroupVersion: unified ? 2 : 1, cgroupRoot: opts.cgroupRoot, kubepodsMemoryLimit: kubepods.memoryLimitBytes })}`);
  return createPodCgroupManager(opts);
}

export function createPodLifecycleFromConfig(input: {
  config: PodKubeletConfig;
  flags: { hostnameOverride?: string; nodeIP?: string };
  runtime: Runtime;
  clock?: Clock;
  capacity?: NodeCapacity;
  admitHandlers?: PodAdmitHandler[];
  /** Sources fed through handleUpdate that must report before orphan cleanup (e.g. "api"). */
  extraSources?: string[];
  /** Where cgroups are mounted (v1 controllers or a cgroup2 mount; tests); default /sys/fs/cgroup. */
  cgroupMountRoot?: string;
  /** Lifecycle hooks and a cgroup manager decorator (src/metrics). */
  metrics?: { lifecycle: PodLifecycleMetrics; instrumentCgroups<C extends PodCgroups>(c: C): C };
  events?: EventRecorder;
  allocation?: AllocationManager;
  userns?: PodLifecycleDeps["userns"];
  orphanedPodDirs?: PodLifecycleDeps["orphanedPodDirs"];
}): { lifecycle: PodLifecycle; cgroups?: PodCgroupManager; nodeName: string; hostIP?: string } {
  const { config, flags } = input;
  const nodeName = nodeNameFrom(flags.hostnameOverride);
  const hostIP = flags.nodeIP?.split(",")[0]?.trim() || defaultHostIP();
  let cgroups: PodCgroupManager | undefined;
  if (config.cgroupsPerQOS !== false) {
    const mountRoot = input.cgroupMountRoot ?? "/sys/fs/cgroup";
    cgroups = createQoSCgroupManager(config, mountRoot, input.capacity);
  }
  if (cgroups && input.metrics) cgroups = input.metrics.instrumentCgroups(cgroups);
  const lifecycle = createPodLifecycle({
    runtime: input.runtime,
    clock: input.clock,
    metrics: input.metrics?.lifecycle,
    cgroups,
    admitHandlers: input.admitHandlers,
    events: input.events,
    allocation: input.allocation,
    userns: input.userns,
    orphanedPodDirs: input.orphanedPodDirs,
    config: { ...lifecycleConfigFromKubelet(config, { nodeName, hostIP }), extraSources: input.extraSources },
  });
  return { lifecycle, cgroups, nodeName, hostIP };
}
