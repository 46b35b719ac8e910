// The pod cgroup manager the agent holds (upstream cm/container_manager_linux.go NewContainerManager):
// the back end for the host's hierarchy — cgroup v1 or v2, under systemd's slices with cgroupDriver
// "systemd" when systemd is there to ask — and over it, once for all of them, the QoS cgroups
// (qos-container-manager.ts), the kubepods limits (node-container-manager.ts) and the pod cgroups
// (pod-container-manager.ts). The runtime then places containers under the cgroup_parent ensurePod returns.
import type { CgroupDriver, ResourceConfig } from "../cgroups-config.ts";
import type { SystemdUnits } from "../systemd-dbus.ts";
import type { CgroupManager } from "./cgroup-manager.ts";
import { createSystemdCgroupManager } from "./cgroup-systemd-manager.ts";
import { createCgroupV1Manager, detectV1Controllers } from "./cgroup-v1-manager.ts";
import { createCgroupV2Manager, isUnifiedMount, rootControllers } from "./cgroup-v2-manager.ts";
import { createNodeContainerManager, type KubepodsMemoryLimit } from "./node-container-manager.ts";
import { createPodContainerManager, type PodContainerManager } from "./pod-container-manager.ts";
import { createQOSContainerManager, type QOSContainerManager } from "./qos-container-manager.ts";

export interface PodCgroupManagerOptions {
  /** Where cgroups are mounted (the v1 controllers' mounts or a cgroup2 mount); default /sys/fs/cgroup. */
  mountRoot?: string;
  /** 1 or 2; default: what is mounted at mountRoot. */
  cgroupVersion?: 1 | 2;
  /** KubeletConfiguration cgroupRoot; default "/". */
  cgroupRoot?: string;
  driver?: CgroupDriver;
  /** Controllers to use (default: v1, every V1_CONTROLLERS entry mounted under mountRoot; v2, those the root offers). */
  controllers?: string[];
  podPidsLimit?: number;
  cpuCFSQuota?: boolean;
  /** kubepods limits (from kubepodsResourceConfig) written at setup. */
  kubepods?: ResourceConfig;
  /** How often a kubepods memory limit the kernel refused (EBUSY: usage above it) is retried; default 10 s. */
  limitRetryMs?: number;
  /** cgroupDriver systemd: slices are created and stopped as transient units through this (systemd-dbus.ts). */
  systemd?: SystemdUnits;
}

export interface PodCgroupManager extends Omit<PodContainerManager, "activePods"> {
  /** Creates kubepods, kubepods/burstable, kubepods/besteffort and writes the kubepods limits. */
  setup: QOSContainerManager["setup"];
  /** Absolute directory of a cgroup (relative name) in one controller. */
  dir(controller: string, name: string[]): string;
  controllers(): string[];
  /** undefined before setup or without a kubepods memory limit. */
  kubepodsMemoryLimit(): KubepodsMemoryLimit | undefined;
  /** Stops the retry of a refused limit and the systemd connection. */
  close(): void;
}

/** The back end of the hierarchy at mountRoot, systemd's slices over it with the systemd driver and a connection. */
export function hostCgroupManager(opts: PodCgroupManagerOptions): CgroupManager {
  const mountRoot = opts.mountRoot ?? "/sys/fs/cgroup";
  const version = opts.cgroupVersion ?? (isUnifiedMount(mountRoot) ? 2 : 1);
  const driver = opts.driver ?? "cgroupfs";
  const hierarchy = {
    mountRoot,
    cgroupRoot: opts.cgroupRoot || "/",
    driver,
    controllers: opts.controllers ?? (version === 2 ? rootControllers(mountRoot) : detectV1Controllers(mountRoot)),
  };
  const fs = version === 2 ? createCgroupV2Manager(hierarchy) : createCgroupV1Manager(hierarchy);
  // Without a connection to systemd (v1 without systemd running) the slice-named directories are made directly.
  return driver === "systemd" && opts.systemd ? createSystemdCgroupManager(fs, opts.systemd) : fs;
}

export function createPodCgroupManager(opts: PodCgroupManagerOptions = {}): PodCgroupManager {
  const cgroups = hostCgroupManager(opts);
  const cgroupRoot = opts.cgroupRoot || "/";
  const driver = opts.driver ?? "cgroupfs";
  const nodeAllocatable = createNodeContainerManager(cgroups, { kubepods: opts.kubepods, limitRetryMs: opts.limitRetryMs });
  const qos = createQOSContainerManager({ cgroups, nodeAllocatable, kubepods: opts.kubepods, activePods: () => pods.activePods(), cgroupRoot, driver });
  const pods = createPodContainerManager({ cgroups, qos, cgroupRoot, driver, podPidsLimit: opts.podPidsLimit, cpuCFSQuota: opts.cpuCFSQuota });
  return {
    setup: qos.setup,
    dir: cgroups.dir,
    controllers: () => cgroups.controllers(),
    kubepodsMemoryLimit: () => nodeAllocatable.memoryLimit(),
    close() {
      nodeAllocatable.close();
      cgroups.close();
    },
    ensurePod: pods.ensurePod,
    removePod: pods.removePod,
    onPodRemoved: pods.onPodRemoved,
    listPodUids: pods.listPodUids,
    resize: pods.resize,
  };
}
