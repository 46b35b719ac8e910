// Pod side of the agent: the pod lifecycle (static pods from staticPodPath/staticPodURL) over the
// CRI runtime, with QoS/pod cgroups under cgroupRoot (kubepods limited to node allocatable when
// enforceNodeAllocatable has "pods"), and where each pod's cgroup lives for the stats.
import type { EventRecorder } from "../events/types.ts";
import type { AllocationManager } from "../pod/allocation/index.ts";
import { cgroupDirPath, podCgroupName, type CgroupDriver } from "../pod/cgroups-config.ts";
import type { PodCgroupManager } from "../pod/cm/container-manager.ts";
import type { KubeletMetrics } from "../metrics/index.ts";
import type { PodLifecycle, PodLifecycleDeps } from "../pod/lifecycle-types.ts";
import type { PodLike } from "../pod/pod-like.ts";
import { getPodQOS } from "../pod/qos.ts";
import type { Runtime } from "../pod/runtime.ts";
import { createPodLifecycleFromConfig, type NodeCapacity, type PodKubeletConfig } from "../pod/setup.ts";

export interface PodsWiring {
  lifecycle: PodLifecycle;
  cgroups?: PodCgroupManager;
  nodeName: string;
  /** kubepods relative to a controller mount ("kubepods", "bunlet-demo/kubepods"); undefined without QoS cgroups. */
  podsCgroup?: string;
  /** A pod's cgroup relative to a controller mount ("/kubepods/besteffort/pod<uid>"). */
  podCgroupPath(pod: PodLike): string | undefined;
}

/** Pure: where QoS cgroups put kubepods and a pod's cgroup (cgroupfs or systemd layout). */
export function cgroupPaths(driver: CgroupDriver, cgroupRoot: string) {
  const root = cgroupRoot || "/";
  return {
    podsCgroup: cgroupDirPath(driver, root, ["kubepods"]).replace(/^\/+/, ""),
    podCgroupPath: (pod: PodLike): string | undefined =>
      pod.metadata.uid ? cgroupDirPath(driver, root, podCgroupName(getPodQOS(pod), pod.metadata.uid)) : undefined,
  };
}

export function createPodsWiring(input: {
  config: PodKubeletConfig;
  flags: { hostnameOverride?: string; nodeIP?: string };
  runtime: Runtime;
  capacity?: NodeCapacity;
  metrics?: KubeletMetrics;
  /** Sources fed through handleUpdate (["api"] in API-server mode). */
  extraSources?: string[];
  events?: EventRecorder;
  /** In-place resize's allocation manager. */
  allocation?: AllocationManager;
  /** The pods' user namespace ranges, released with the pods. */
  userns?: PodLifecycleDeps["userns"];
  /** Removes the directories of pods gone while bunlet was away. */
  orphanedPodDirs?: PodLifecycleDeps["orphanedPodDirs"];
}): PodsWiring {
  const { lifecycle, cgroups, nodeName } = createPodLifecycleFromConfig({
    config: input.config,
    flags: input.flags,
    runtime: input.runtime,
    capacity: input.capacity,
    metrics: input.metrics,
    extraSources: input.extraSources,
    events: input.events,
    allocation: input.allocation,
    userns: input.userns,
    orphanedPodDirs: input.orphanedPodDirs,
  });
  input.metrics?.observeNode(nodeName, lifecycle);
  if (!cgroups) return { lifecycle, nodeName, podCgroupPath: () => undefined };
  const driver: CgroupDriver = input.config.cgroupDriver === "systemd" ? "systemd" : "cgroupfs";
  const paths = cgroupPaths(driver, input.config.cgroupRoot ?? "");
  return { lifecycle, cgroups, nodeName, ...paths };
}
