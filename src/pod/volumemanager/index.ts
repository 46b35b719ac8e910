// The volume manager's public surface (upstream pkg/kubelet/volumemanager): volumes reconstructed from a
// pod's directory, and the teardown of the volumes of a pod that is gone (run by the orphaned pod
// directory sweep after a restart).
export {
  createOrphanVolumeTearDown,
  getVolumesFromPodDir,
  nodeOrphanVolumesFs,
  type OrphanVolumeTearDown,
  type OrphanVolumeTearDownDeps,
  type OrphanVolumesFs,
  type VolumeReconstructionMetrics,
} from "./orphan-volumes.ts";
export { reconstructVolume, volumeTearDownPlan, type PodVolume, type Reconstruction, type TearDownKind, type VolumeTearDownPlan } from "./reconstruct.ts";
