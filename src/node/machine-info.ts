// What the node reports about the machine (upstream: cAdvisor MachineInfo + nodestatus.MachineInfo
// and VersionInfo setters): machine-id, product_uuid, boot_id, kernel, the OS image from
// os-release, CPUs, memory, swap, hugepages, and the pod filesystem's size for ephemeral-storage.
import { readdir, readFile } from "node:fs/promises";
import { release } from "node:os";
import { nodeCapacity } from "../pod/setup.ts";
import { fsStats } from "../stats/fs.ts";

export interface MachineInfo {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  operatingSystem: string;
  architecture: string;
  cpus: number;
  memoryBytes: number;
  /** SwapTotal of /proc/meminfo (cAdvisor SwapCapacity); 0 without swap. */
  swapCapacityBytes?: number;
  /** Page size name ("2Mi", "1Gi") → bytes reserved in hugepages of that size. */
  hugepagesBytes: Record<string, number>;
  /** Capacity of the filesystem holding the kubelet root dir (ephemeral-storage), if statfs worked. */
  ephemeralStorageBytes?: number;
}

const readTrim = (p: string) =>
  readFile(p, "utf8").then(
    (s) => s.trim(),
    () => "",
  );

/** Go's GOARCH for process.arch. */
export const goArch = (arch: string = process.arch): string =>
  ({ x64: "amd64", ia32: "386", arm64: "arm64", arm: "arm", ppc64: "ppc64le", s390x: "s390x", riscv64: "riscv64" })[arch] ?? arch;

async function osImage(): Promise<string> {
  const text = (await readTrim("/etc/os-release")) || (await readTrim("/usr/lib/os-release"));
  const m = /^PRETTY_NAME=(?:"([^"]*)"|(.*))$/m.exec(text);
  return m ? (m[1] ?? m[2] ?? "").trim() : "Linux";
}

async function hugepages(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let dirs: string[] = [];
  try {
    dirs = await readdir("/sys/kernel/mm/hugepages");
  } catch {
    return out;
  }
  for (const d of dirs) {
    const kb = Number(/^hugepages-(\d+)kB$/.exec(d)?.[1]);
    if (!kb) continue;
    const n = Number(await readTrim(`/sys/kernel/mm/hugepages/${d}/nr_hugepages`)) || 0;
    const name = kb % (1024 * 1024) === 0 ? `${kb / 1024 / 1024}Gi` : kb % 1024 === 0 ? `${kb / 1024}Mi` : `${kb}Ki`;
    out[name] = n * kb * 1024;
  }
  return out;
}

export async function readMachineInfo(rootDir: string): Promise<MachineInfo> {
  const cap = nodeCapacity();
  const hp = await hugepages();
  let ephemeralStorageBytes: number | undefined;
  try {
    ephemeralStorageBytes = fsStats(rootDir, new Date().toISOString()).capacityBytes ?? undefined;
  } catch {}
  return {
    machineID: await readTrim("/etc/machine-id"),
    systemUUID: (await readTrim("/sys/class/dmi/id/product_uuid")).toLowerCase(),
    bootID: await readTrim("/proc/sys/kernel/random/boot_id"),
    kernelVersion: release(),
    osImage: await osImage(),
    operatingSystem: "linux",
    architecture: goArch(),
    cpus: cap.cpus,
    memoryBytes: cap.memoryBytes,
    swapCapacityBytes: cap.swapBytes ?? 0,
    hugepagesBytes: hp,
    ephemeralStorageBytes,
  };
}
