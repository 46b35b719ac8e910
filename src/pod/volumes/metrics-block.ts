// The size of a raw block volume (upstream pkg/volume/metrics_block.go MetricsBlock): a block device has
// a capacity and nothing else — no usage, no inodes. Upstream seeks to the device's end; bunlet reads the
// same figure from sysfs without opening the device: the device number of the path (a pod's link to a
// local device, or a CSI driver's publish file) names /sys/dev/block/<major>:<minor>/size, in 512-byte
// sectors whatever the device's logical block size (Documentation/ABI/stable/sysfs-block).
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";

/** The unit of /sys/dev/block/<dev>/size: the kernel's sector, always 512 bytes. */
export const SECTOR_BYTES = 512;

/** glibc gnu_dev_major/gnu_dev_minor: the major and minor numbers of a Linux dev_t. */
export function deviceNumbers(rdev: bigint): { major: number; minor: number } {
  const major = ((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & 0xfffff000n);
  const minor = (rdev & 0xffn) | ((rdev >> 12n) & 0xffffff00n);
  return { major: Number(major), minor: Number(minor) };
}

/** A sysfs `size` file's sectors as bytes. */
export function sectorsToBytes(sysfsSize: string, file = "size"): number {
  const text = sysfsSize.trim();
  if (!/^\d+$/.test(text)) throw new Error(`${file}: ${JSON.stringify(text)} is not a number of sectors`);
  return Number(text) * SECTOR_BYTES;
}

/** The bytes of the block device at `path` (symlinks followed); fails when it is none. */
export async function blockDeviceBytes(path: string, sysDevBlock = "/sys/dev/block"): Promise<number> {
  const s = await stat(path, { bigint: true });
  if (!s.isBlockDevice()) throw new Error(`unable to detect the size of ${path}: not a block device`);
  const { major, minor } = deviceNumbers(s.rdev);
  const file = join(sysDevBlock, `${major}:${minor}`, "size");
  return sectorsToBytes(await readFile(file, "utf8"), file);
}
