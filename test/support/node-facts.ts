// A machine as the node status tests describe it to the node-status code (NodeFacts.machine), so the
// Node they read back is known field by field.
import type { MachineInfo } from "../../src/node/machine-info.ts";

export const TEST_MACHINE: MachineInfo = {
  machineID: "mid",
  systemUUID: "uuid",
  bootID: "boot",
  kernelVersion: "6.1.0",
  osImage: "Debian GNU/Linux 12 (bookworm)",
  operatingSystem: "linux",
  architecture: "amd64",
  cpus: 2,
  memoryBytes: 2 ** 31,
  hugepagesBytes: {},
  ephemeralStorageBytes: 2 ** 34,
};

/** The node-status settings of those tests: a 200 ms status sync, a 2 s lease, upstream's other defaults. */
export const TEST_NODE_STATUS = {
  registerNode: true,
  kubeletVersion: "v1.31.0",
  kubeletPort: 10250,
  maxPods: 110,
  maxImages: 50,
  updateFrequencyMs: 200,
  reportFrequencyMs: 60_000,
  leaseDurationSeconds: 2,
};
