// The nine eviction signals and what each one means (docs/eviction-contract.md#signals, #conditions).
export const SIGNALS = [
  "memory.available",
  "allocatableMemory.available",
  "nodefs.available",
  "nodefs.inodesFree",
  "imagefs.available",
  "imagefs.inodesFree",
  "containerfs.available",
  "containerfs.inodesFree",
  "pid.available",
] as const;

export type Signal = (typeof SIGNALS)[number];

export type StarvedResource = "memory" | "ephemeral-storage" | "inodes" | "pids";

export type NodeConditionType = "MemoryPressure" | "DiskPressure" | "PIDPressure";

/** Fixed reporting order of conditions (upstream iterates a map; we pick a stable order). */
export const CONDITION_ORDER: readonly NodeConditionType[] = ["MemoryPressure", "DiskPressure", "PIDPressure"];

export const SIGNAL_RESOURCE: Record<Signal, StarvedResource> = {
  "memory.available": "memory",
  "allocatableMemory.available": "memory",
  "nodefs.available": "ephemeral-storage",
  "nodefs.inodesFree": "inodes",
  "imagefs.available": "ephemeral-storage",
  "imagefs.inodesFree": "inodes",
  "containerfs.available": "ephemeral-storage",
  "containerfs.inodesFree": "inodes",
  "pid.available": "pids",
};

export const SIGNAL_CONDITION: Record<Signal, NodeConditionType> = {
  "memory.available": "MemoryPressure",
  "allocatableMemory.available": "MemoryPressure",
  "nodefs.available": "DiskPressure",
  "nodefs.inodesFree": "DiskPressure",
  "imagefs.available": "DiskPressure",
  "imagefs.inodesFree": "DiskPressure",
  "containerfs.available": "DiskPressure",
  "containerfs.inodesFree": "DiskPressure",
  "pid.available": "PIDPressure",
};

export function isSignal(s: string): s is Signal {
  return (SIGNALS as readonly string[]).includes(s);
}

export function isMemorySignal(s: Signal): boolean {
  return s === "memory.available" || s === "allocatableMemory.available";
}

/** Counts (inodes, pids) print as decimal quantities; bytes as binary ones. */
export function signalIsCount(s: Signal): boolean {
  return s.endsWith(".inodesFree") || s === "pid.available";
}

/** Node condition reasons and messages the node-status setters publish (docs/eviction-contract.md#conditions). */
export const NODE_CONDITION_TEXT: Record<NodeConditionType, { true: { reason: string; message: string }; false: { reason: string; message: string } }> = {
  MemoryPressure: {
    true: { reason: "KubeletHasInsufficientMemory", message: "kubelet has insufficient memory available" },
    false: { reason: "KubeletHasSufficientMemory", message: "kubelet has sufficient memory available" },
  },
  DiskPressure: {
    true: { reason: "KubeletHasDiskPressure", message: "kubelet has disk pressure" },
    false: { reason: "KubeletHasNoDiskPressure", message: "kubelet has no disk pressure" },
  },
  PIDPressure: {
    true: { reason: "KubeletHasInsufficientPID", message: "kubelet has insufficient PID available" },
    false: { reason: "KubeletHasSufficientPID", message: "kubelet has sufficient PID available" },
  },
};
