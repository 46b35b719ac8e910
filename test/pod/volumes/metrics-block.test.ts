// A raw block volume's size (upstream pkg/volume/metrics_block.go): the device number decoded as glibc
// does, sysfs sectors as bytes, and the size of a device node on this host read through a symlink.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blockDeviceBytes, deviceNumbers, sectorsToBytes } from "../../../src/pod/volumes/metrics-block.ts";

const root = mkdtempSync(join(tmpdir(), "metrics-block-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("deviceNumbers", () => {
  test.each([
    [0x0700n, 7, 0], // loop0
    [0xfc01n, 252, 1],
    [0x10300n, 259, 0], // nvme0n1: major 259 spills into bits 8-19
    [0x1000_0000_0500n, 0x1005, 0], // a major above 4095 lives from bit 44
    [0x103_00n | (0x12n << 20n), 259, 0x12 << 8], // a minor above 255 lives at bit 20
  ])("rdev %p → %p:%p", (rdev, major, minor) => {
    expect(deviceNumbers(rdev)).toEqual({ major, minor });
  });
});

describe("sectorsToBytes", () => {
  test("512-byte sectors, a trailing newline allowed", () => {
    expect(sectorsToBytes("2048\n")).toBe(1024 * 1024);
    expect(sectorsToBytes("0")).toBe(0);
  });
  test("anything else names the file", () => {
    expect(() => sectorsToBytes("x", "/sys/dev/block/7:0/size")).toThrow('/sys/dev/block/7:0/size: "x" is not a number of sectors');
  });
});

describe("blockDeviceBytes", () => {
  test("a regular file is not a block device", async () => {
    const file = join(root, "file");
    writeFileSync(file, "x");
    await expect(blockDeviceBytes(file)).rejects.toThrow(`unable to detect the size of ${file}: not a block device`);
  });
  test("a missing link fails with ENOENT", async () => {
    await expect(blockDeviceBytes(join(root, "none"))).rejects.toMatchObject({ code: "ENOENT" });
  });
  // A device node of this host whose sysfs size is readable (loop devices and disks have one).
  const device = existsSync("/sys/block") ? readdirSync("/sys/block").find((n) => existsSync(join("/dev", n))) : undefined;
  test.skipIf(!device)("a device through a symlink: its sysfs size, from a sysfs root given", async () => {
    const link = join(root, "link");
    symlinkSync(join("/dev", device!), link);
    expect(await blockDeviceBytes(link)).toBe(Number(readFileSync(join("/sys/block", device!, "size"), "utf8")) * 512);
    const dev = readFileSync(join("/sys/block", device!, "dev"), "utf8").trim();
    mkdirSync(join(root, "sys", dev), { recursive: true });
    writeFileSync(join(root, "sys", dev, "size"), "8\n");
    expect(await blockDeviceBytes(link, join(root, "sys"))).toBe(4096);
  });
});
