import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDeviceNamer, devnameFromUevent, IoStatsError, parseBlkio, parseIoStat, readCgroupIo, type DeviceIo } from "../../src/stats/io.ts";

const io = (device: string, readBytes: number, writeBytes: number, reads: number, writes: number): DeviceIo => ({
  device,
  readBytes,
  writeBytes,
  reads,
  writes,
});

describe("parseIoStat (cgroup v2 io.stat)", () => {
  test.each<[string, string, DeviceIo[]]>([
    ["empty (no I/O yet)", "", []],
    ["one device", "8:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n", [io("8:0", 4096, 8192, 1, 2)]],
    [
      "several devices, and fields a kernel adds later ignored",
      "259:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6 cost.vrate=100.00 cost.usage=7\n253:1 rbytes=10 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n",
      [io("259:0", 1, 2, 3, 4), io("253:1", 10, 0, 1, 0)],
    ],
    ["a device with only some keys", "7:3 rbytes=512 rios=1\n", [io("7:3", 512, 0, 1, 0)]],
  ])("%s", (_name, text, want) => {
    expect(parseIoStat(text)).toEqual(want);
  });

  test.each([
    ["sda rbytes=1", /does not start with MAJ:MIN/],
    ["8:0 rbytes=x", /"rbytes=x" in "8:0 rbytes=x" is not an integer counter/],
    ["8:0 rbytes", /"rbytes" in "8:0 rbytes" is not key=value/],
  ])("bad line %p is an error naming it", (text, re) => {
    expect(() => parseIoStat(text, "/cg/io.stat")).toThrow(IoStatsError);
    expect(() => parseIoStat(text, "/cg/io.stat")).toThrow(re);
  });
});

describe("parseBlkio (cgroup v1 blkio.throttle.*)", () => {
  test.each<[string, string, string, DeviceIo[]]>([
    ["empty (Total 0 only)", "Total 0\n", "Total 0\n", []],
    [
      "read/write per device from both files",
      "8:0 Read 4096\n8:0 Write 8192\n8:0 Sync 0\n8:0 Async 12288\n8:0 Discard 0\n8:0 Total 12288\n8:16 Read 1\n8:16 Total 1\nTotal 12289\n",
      "8:0 Read 1\n8:0 Write 2\n8:0 Total 3\n8:16 Read 1\n8:16 Total 1\nTotal 4\n",
      [io("8:0", 4096, 8192, 1, 2), io("8:16", 1, 0, 1, 0)],
    ],
  ])("%s", (_name, bytes, ops, want) => {
    expect(parseBlkio(bytes, ops)).toEqual(want);
  });

  test("a malformed line names the file", () => {
    expect(() => parseBlkio("8:0 Read\n", "")).toThrow(/blkio.throttle.io_service_bytes: "8:0 Read" is not "MAJ:MIN Op N"/);
  });
});

describe("reading a cgroup and naming devices", () => {
  const root = mkdtempSync(join(tmpdir(), `bunlet-io-${process.pid}-`));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test("v2 reads io.stat, v1 the blkio files", () => {
    mkdirSync(join(root, "v2"));
    writeFileSync(join(root, "v2", "io.stat"), "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0\n");
    mkdirSync(join(root, "v1"));
    writeFileSync(join(root, "v1", "blkio.throttle.io_service_bytes"), "8:0 Read 1\n8:0 Write 2\nTotal 3\n");
    writeFileSync(join(root, "v1", "blkio.throttle.io_serviced"), "8:0 Read 3\n8:0 Write 4\nTotal 7\n");
    expect(readCgroupIo(2, join(root, "v2"))).toEqual([io("8:0", 1, 2, 3, 4)]);
    expect(readCgroupIo(1, join(root, "v1"))).toEqual([io("8:0", 1, 2, 3, 4)]);
    expect(() => readCgroupIo(2, join(root, "gone"))).toThrow(/ENOENT/);
  });

  test("devices are named /dev/<DEVNAME> from sysfs, MAJ:MIN when unknown", () => {
    expect(devnameFromUevent("MAJOR=259\nMINOR=0\nDEVNAME=nvme0n1\nDEVTYPE=disk\n")).toBe("nvme0n1");
    expect(devnameFromUevent("MAJOR=1\n")).toBeUndefined();
    mkdirSync(join(root, "block", "8:0"), { recursive: true });
    writeFileSync(join(root, "block", "8:0", "uevent"), "DEVNAME=sda\n");
    const name = createDeviceNamer(join(root, "block"));
    expect(name("8:0")).toBe("/dev/sda");
    expect(name("9:9")).toBe("9:9");
  });
});
