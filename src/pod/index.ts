// Public surface of the pod lifecycle for the composition root (src/agent.ts) and the HTTP server.
export { createPodLifecycle } from "./lifecycle.ts";
export {
  defaultHostIP,
  lifecycleConfigFromKubelet,
  type KillPodRequest,
  type PodAdmitHandler,
  type PodCgroups,
  type PodLifecycle,
  type PodLifecycleConfig,
  type PodLifecycleDeps,
} from "./lifecycle-types.ts";
export { detectV1Controllers } from "./cm/cgroup-v1-manager.ts";
export { createPodCgroupManager, type PodCgroupManager, type PodCgroupManagerOptions } from "./cm/container-manager.ts";
export { kubepodsConfigFromKubelet, nodeAllocatableAbsolute, podCgroupParent, podResourceConfig } from "./cgroups-config.ts";
export { createContainerLogManager, logRotationPolicy, rotateContainerLog, planLogRotation } from "./container-logs.ts";
export { decodeManifests, ManifestError } from "./manifest.ts";
export type { Pod, PodStatus, ContainerStatus, PodPhase } from "./types.ts";
export type { PodUpdate } from "./sources/update.ts";
export { createPodLifecycleFromConfig, nodeCapacity, nodeNameFrom, type NodeCapacity, type PodKubeletConfig } from "./setup.ts";
