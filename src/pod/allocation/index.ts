// In-place pod resize's allocation side (upstream pkg/kubelet/allocation): the allocation manager,
// its checkpoints, and the actuated state kuberuntime reads and writes.
import type { ActuatedResources } from "../kuberuntime/context.ts";
import { type AllocationManager, resourceInfoForPod } from "./manager.ts";

export { type AllocationManager, createAllocationManager, podFromAllocation, resourceInfoForPod } from "./manager.ts";
export { CheckpointError, parseCheckpoint, serializeCheckpoint } from "./state.ts";

/** The manager's actuated state as kuberuntime uses it (upstream InitializeActuatedPod included). */
export function actuatedResources(m: AllocationManager): ActuatedResources {
  return {
    get: (uid, name) => m.actuated.getContainer(uid, name),
    set: (uid, name, r) => m.actuated.setContainer(uid, name, r),
    initPod(pod) {
      const uid = pod.metadata.uid ?? "";
      if (!m.actuated.get(uid)) m.actuated.setPod(uid, resourceInfoForPod(pod));
    },
  };
}
