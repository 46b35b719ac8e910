import { expect, test } from "bun:test";
import { cpusPerCore, discoverTopology } from "../../../../src/pod/cm/cpumanager/topology.ts";

/** A sysfs reader over a table of files. */
const sysfs = (files: Record<string, string>) => async (path: string) => files[path];

test("two sockets, two cores each, hyperthreads; NUMA node per socket", async () => {
  const files: Record<string, string> = {
    "/sys/devices/system/cpu/online": "0-7",
    "/sys/devices/system/node/online": "0-1",
    "/sys/devices/system/node/node0/cpulist": "0-1,4-5",
    "/sys/devices/system/node/node1/cpulist": "2-3,6-7",
  };
  for (let cpu = 0; cpu < 8; cpu++) {
    files[`/sys/devices/system/cpu/cpu${cpu}/topology/physical_package_id`] = String(Math.floor((cpu % 4) / 2));
    files[`/sys/devices/system/cpu/cpu${cpu}/topology/core_id`] = String(cpu % 2);
  }
  const t = await discoverTopology(sysfs(files));
  expect([t.numCPUs, t.numCores, t.numSockets, t.numNUMANodes]).toEqual([8, 4, 2, 2]);
  expect(cpusPerCore(t)).toBe(2);
  // Core ids are the lowest CPU of the core: cores 0 and 1 of socket 1 are 2 and 3.
  expect(t.details.get(6)).toEqual({ numaNodeId: 1, socketId: 1, coreId: 2 });
  expect(t.details.get(5)).toEqual({ numaNodeId: 0, socketId: 0, coreId: 1 });
});

test("no NUMA directory: every CPU on node 0", async () => {
  const t = await discoverTopology(
    sysfs({
      "/sys/devices/system/cpu/online": "0-1",
      "/sys/devices/system/cpu/cpu0/topology/physical_package_id": "0",
      "/sys/devices/system/cpu/cpu0/topology/core_id": "0",
      "/sys/devices/system/cpu/cpu1/topology/physical_package_id": "0",
      "/sys/devices/system/cpu/cpu1/topology/core_id": "1",
    }),
  );
  expect([t.numCPUs, t.numCores, t.numSockets, t.numNUMANodes]).toEqual([2, 2, 1, 1]);
  expect(t.details.get(1)).toEqual({ numaNodeId: 0, socketId: 0, coreId: 1 });
});

test("no online file: refused", async () => {
  await expect(discoverTopology(sysfs({}))).rejects.toThrow("could not detect number of cpus");
});
