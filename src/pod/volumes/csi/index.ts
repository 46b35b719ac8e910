// CSI volumes' public surface (upstream pkg/volume/csi), as far as bunlet has it: the registration
// handler of CSIPlugin-type plugins (the plugin manager hands it what it finds in plugins_registry),
// the node info manager that publishes each driver on the Node and its CSINode, and the CSI codec.
export { csiCodec, nodeGetInfo, type NodeGetInfo, type NodeInfo } from "./driver-client.ts";
export { MIGRATED_PLUGINS_ANNOTATION } from "./csinode.ts";
export { NODE_ID_ANNOTATION } from "./node-updates.ts";
export { createNodeInfoManager, type NodeInfoManager } from "./nodeinfo-manager.ts";
export { createCSIRegistrationHandler, type CSIDriver, type CSIRegistrationHandler } from "./registration-handler.ts";
