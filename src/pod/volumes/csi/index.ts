// CSI volumes' public surface (upstream pkg/volume/csi): the registration
// handler of CSIPlugin-type plugins (the plugin manager hands it what it finds in plugins_registry),
// the node info manager that publishes each driver on the Node and its CSINode, the CSI codec, and the
// volume manager that stages and publishes pods' CSI volumes and tears them down; the CSIDriver,
// VolumeAttachment and Secret objects it reads, by their API paths.
export { csiCodec, nodeGetInfo, type NodeGetInfo, type NodeInfo } from "./driver-client.ts";
export { MIGRATED_PLUGINS_ANNOTATION } from "./csinode.ts";
export { NODE_ID_ANNOTATION } from "./node-updates.ts";
export { createNodeInfoManager, type NodeInfoManager } from "./nodeinfo-manager.ts";
export { createCSIRegistrationHandler, type CSIDriver, type CSIRegistrationHandler } from "./registration-handler.ts";
export { createCSINodeClient, type CSINodeClient, type VolumeUsage } from "./node-client.ts";
export { createCSIVolumeManager, uniqueVolumeName, type CSIVolumeManager, type CSIVolumeManagerDeps, type CSIVolumeSetUp } from "./csi-mounter.ts";
export { secretPath, secretRefOfPath } from "./credentials.ts";
export { CSI_POD_PLUGIN_DIR, deviceMountPath, podMountPath } from "./csi-util.ts";
export { csiDriverObjectSchema, csiDriverPath, csiObjectOfPath, volumeAttachmentPath, volumeAttachmentSchema } from "./csi-driver-object.ts";
export {
  csiPersistentVolumeSourceSchema,
  csiVolumeSourceSchema,
  ephemeralCSIVolumeSpec,
  persistentCSIVolumeSpec,
  type CSIPersistentVolumeSource,
  type CSIVolumeSource,
  type CSIVolumeSpec,
} from "./volume-spec.ts";
