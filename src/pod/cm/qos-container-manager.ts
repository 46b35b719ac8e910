// The QoS cgroups (upstream cm/qos_container_manager_linux.go): kubepods with node allocatable's limits
// (node-container-manager.ts), kubepods/burstable and kubepods/besteffort below it (Guaranteed pods sit
// in kubepods itself); as pods come and go the burstable cpu shares follow the summed cpu requests of
// the burstable pods and besteffort keeps the minimum (UpdateCgroups → setCPUCgroupConfig).
import { kv, log } from "../../log.ts";
import { burstableCpuShares, cgroupDirPath, MIN_SHARES, qosCgroupName, type CgroupDriver, type ResourceConfig } from "../cgroups-config.ts";
import type { PodLike } from "../pod-like.ts";
import type { CgroupManager } from "./cgroup-manager.ts";
import type { NodeContainerManager } from "./node-container-manager.ts";

export interface QOSContainerManager {
  /** Makes the QoS cgroups and writes their limits, once (a setup that failed runs again at the next call). */
  setup(): Promise<void>;
  /** The QoS levels' resources from the pods placed now (upstream UpdateCgroups). */
  updateCgroups(): Promise<void>;
}

export interface QOSContainerManagerDeps {
  cgroups: CgroupManager;
  nodeAllocatable: NodeContainerManager;
  /** kubepods limits (from kubepodsResourceConfig), given to kubepods as it is made. */
  kubepods?: ResourceConfig;
  /** The pods that have a pod cgroup. */
  activePods(): PodLike[];
  /** Where the QoS cgroups are and their layout, for the log line. */
  cgroupRoot: string;
  driver: CgroupDriver;
}

export function createQOSContainerManager(deps: QOSContainerManagerDeps): QOSContainerManager {
  const { cgroups, nodeAllocatable, driver } = deps;

  async function updateCgroups() {
    const pods = deps.activePods();
    await cgroups.update(qosCgroupName("Burstable"), { cpuShares: burstableCpuShares(pods) }, "burstable");
    await cgroups.update(qosCgroupName("BestEffort"), { cpuShares: MIN_SHARES }, "besteffort");
  }

  let setupDone: Promise<void> | undefined;
  const setup = () =>
    (setupDone ??= (async () => {
      await cgroups.create(["kubepods"], deps.kubepods ?? {});
      await cgroups.create(qosCgroupName("Burstable"), { cpuShares: burstableCpuShares([]) });
      await cgroups.create(qosCgroupName("BestEffort"), { cpuShares: MIN_SHARES });
      await cgroups.validate(["kubepods"]);
      await nodeAllocatable.enforceNodeAllocatable();
      await updateCgroups();
      // The limit the kernel holds, read back — not the one asked for.
      const root = cgroupDirPath(driver, deps.cgroupRoot, ["kubepods"]);
      const cgroupVersion = cgroups.version === 2 ? 2 : undefined;
      log.info(`QoS cgroups ready ${kv({ root, driver, cgroupVersion, controllers: cgroups.controllers().join(","), ...nodeAllocatable.readyFields() })}`);
    })().catch((e) => {
      setupDone = undefined;
      throw e;
    }));

  return { setup, updateCgroups };
}
