// The CPU manager's public surface (upstream pkg/kubelet/cm/cpumanager).
export { createCPUManager, type CPUManager, type CPUManagerOptions, type CPUManagerRuntime, type RunningContainer } from "./cpu-manager.ts";
export { formatCPUSet, parseCPUSet, type CPUSet } from "../../../config/cpuset.ts";
export { CPU_MANAGER_STATE_FILE } from "./state-checkpoint.ts";
export { discoverTopology, type CPUTopology, type SysfsReader } from "./topology.ts";
