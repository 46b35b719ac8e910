// API-server mode for the node (upstream pkg/kubelet/nodestatus, kubelet_node_status.go, nodelease):
// registration, node status and the lease heartbeat. (src/node/shutdown/ is graceful node shutdown.)
export { createNodeApiMode, type NodeApiMode, type NodeApiModeSettings, type NodeFacts } from "./api-mode.ts";
export { nodeAddresses, parseNodeIPs, validateNodeIP, detectNodeIP, NodeIPError, type NodeAddress } from "./addresses.ts";
export { readMachineInfo, goArch, type MachineInfo } from "./machine-info.ts";
export {
  buildNodeStatus,
  nodeAllocatable,
  nodeCapacity,
  nodeConditions,
  nodeStatusHasChanged,
  type NodeStatusInput,
  type ContainerImage,
  type DevicePluginResources,
} from "./node-status.ts";
export { initialNode, reconcileExisting, type NodeRegistration, type Taint } from "./node-object.ts";
export { createNodeStatusController, type NodeStatusController } from "./status-controller.ts";
export { createLeaseController, NODE_LEASE_NAMESPACE, type LeaseController } from "./lease-controller.ts";
export { runtimeReadiness, readinessErrors, type RuntimeReadiness } from "../pod/runtime-state.ts";
