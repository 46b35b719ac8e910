// Public surface of pod volumes (upstream pkg/volume/*): hostPath type checks, persistentVolumeClaim
// volumes backed by hostPath and local PVs, the downward API
// (env values and downwardAPI/projected volume files, written atomically), secret/configMap/projected
// payloads from the API objects fetched for a sync, and safe sub paths.
export { checkHostPathType, type HostPathType } from "./host-path.ts";
export {
  ENV_FIELD_PATHS,
  VOLUME_FIELD_PATHS,
  fieldRefValue,
  findContainer,
  formatMap,
  isSupportedFieldPath,
  resourceFieldRefValue,
  type DownwardContext,
  type DownwardPod,
  type ResourceFieldRef,
} from "./downward-api.ts";
export { timestampedDirName, writeAtomically, type PayloadFile } from "./atomic-writer.ts";
export { expandSubPathExpr, hasBacksteps, prepareSubPath, subPathError } from "./subpath.ts";
export { cleanSubPaths, prepareSafeSubPath, subPathBindTarget, type SubPathRequest } from "./subpath-bind.ts";
export { mountPointsUnder } from "./mount-points.ts";
export { downwardApiPayload, type DownwardApiItem } from "./downward-api.ts";
export { lookupClaimedVolume, setUpClaimedLocalVolume, setUpPodVolume, type PodVolumeSpec, type VolumeSetUpContext } from "./setup.ts";
export {
  claimedVolume,
  checkVolumeMode,
  isReadWriteOncePodOnly,
  READ_WRITE_ONCE_POD_IN_USE,
  podVolumeNames,
  usedVolumeNames,
  persistentVolumeClaimSchema,
  persistentVolumeSchema,
  unmountedVolumesMessage,
  volumeClaimSource,
  type ClaimedVolume,
  type ClaimOwnerPod,
  type PersistentVolumeMode,
  type VolumeUsage,
  type VolumeClaimSource,
  type PersistentVolumeClaimObject,
  type PersistentVolumeObject,
} from "./persistent-volume.ts";
export { MapVolumeError, MountDeviceError, volumeOperationStep } from "./operation-error.ts";
export {
  ObjectNotFoundError,
  configMapPayload,
  lookupConfigMap,
  lookupSecret,
  projectedPayload,
  secretPayload,
  tokenKey,
  trustBundleKey,
  type ClusterTrustBundleProjection,
  type ConfigMapObject,
  type PodApiObjects,
  type ProjectedSource,
  type SecretObject,
} from "./api-objects.ts";
export { volumePluginName } from "./plugin-name.ts";
export { mapPodDevice, unmapPodDevices, VOLUME_DEVICES_DIR } from "./block-volume.ts";
export { unmountUnusedLocalDevices } from "./local-device.ts";
