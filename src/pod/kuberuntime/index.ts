// Public surface of the CRI-backed runtime (src/pod/runtime.ts implementation).
export { createKubeRuntime, MINIMUM_GRACE_PERIOD_SECONDS, type KubeRuntimeOptions, type PodApiObjectsSource, type StorageOperation } from "./manager.ts";
export type { KubeContainer, KubePod } from "./types.ts";
export { createDirectSignaller, DIRECT_SIGNAL_MAX_GRACE_SECONDS, type DirectSignaller, type DirectSignalEvent } from "./direct-signal.ts";
export { deleteUnusedContainers, deleteUnusedImages, type GcResult } from "./gc.ts";
export { containerGcPolicyFromFlags } from "./container-gc.ts";
export { hashContainer } from "./hash.ts";
export * from "./labels.ts";
