// A local Block PV mapped for a pod (upstream localVolumeMapper MapPodDevice, MapBlockVolume's pod
// link): the path checked as a block device, the pod's link made once and replaced when the PV names
// another device, and the links removed on teardown without touching the devices they name.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdtempSync, readlinkSync, rmSync, writeFileSync, type Stats } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkBlockDevicePath, mapPodDevice, podVolumeDeviceDir, unmapPodDevices } from "../../../src/pod/volumes/block-volume.ts";
import { MapVolumeError, volumeOperationStep } from "../../../src/pod/volumes/operation-error.ts";

const no = () => false;
const stats = (block: boolean) => ({ isDirectory: no, isBlockDevice: () => block, isCharacterDevice: no, isSocket: no, isFile: () => !block });
const blockStat = (() => stats(true) as unknown as Stats) as (p: string) => Stats;
const fileStat = (() => stats(false) as unknown as Stats) as (p: string) => Stats;

describe("checkBlockDevicePath", () => {
  test("a block device passes; a file, a missing path or a relative one fail as MapPodDevice", () => {
    checkBlockDevicePath("/dev/loop7", blockStat);
    expect(() => checkBlockDevicePath("/srv/disk.img", fileStat)).toThrow("local volume /srv/disk.img is not a block device");
    expect(() => checkBlockDevicePath("/nonexistent/bunlet-dev")).toThrow('path "/nonexistent/bunlet-dev" does not exist');
    expect(() => checkBlockDevicePath("dev/loop7", blockStat)).toThrow("must be an absolute path");
    let err: unknown;
    try {
      checkBlockDevicePath("/srv/disk.img", fileStat);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MapVolumeError);
    expect(volumeOperationStep(err as Error)).toBe("MapVolume.MapPodDevice");
  });
});

describe("mapPodDevice / unmapPodDevices", () => {
  let root = "";
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "bunlet-block-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const map = (devicePath: string) =>
    mapPodDevice({ rootDir: root, podUid: "u1", pluginDir: "kubernetes.io~local-volume", pvName: "pv-b", devicePath }, blockStat);

  test("the pod's link to the device under volumeDevices; made once, replaced for another device", () => {
    const link = map("/dev/loop7");
    expect(link).toBe(join(podVolumeDeviceDir(root, "u1", "kubernetes.io~local-volume"), "pv-b"));
    expect(link).toBe(join(root, "pods", "u1", "volumeDevices", "kubernetes.io~local-volume", "pv-b"));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe("/dev/loop7");
    expect(map("/dev/loop7")).toBe(link);
    map("/dev/loop8");
    expect(readlinkSync(link)).toBe("/dev/loop8");
  });
  test("teardown removes the links, never what they name", () => {
    const target = join(root, "device-stand-in");
    writeFileSync(target, "keep");
    const link = map(target);
    unmapPodDevices(root, "u1");
    expect(existsSync(join(root, "pods", "u1", "volumeDevices"))).toBe(false);
    expect(existsSync(link)).toBe(false);
    expect(existsSync(target)).toBe(true);
    unmapPodDevices(root, "u1");
  });
});
