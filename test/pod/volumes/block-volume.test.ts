// A local Block PV mapped for a pod (upstream localVolumeMapper, MapBlockVolume, UnmapBlockVolume,
// UnmapDevice) over a fake path handler: the path checked as a block device, the pod's link, the global
// map file and its loop device made in order; on teardown the links go, then the global map files of
// pods without a link are unlocked and unbound, and the map path once no pod is left — never the device.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync, type Stats } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  checkBlockDevicePath,
  localGlobalMapPath,
  mapPodDevice,
  podVolumeDeviceDir,
  unmapPodDevices,
  unmapUnusedLocalBlockVolumes,
  unusedLocalBlockMaps,
} from "../../../src/pod/volumes/block-volume.ts";
import { MapVolumeError, volumeOperationStep } from "../../../src/pod/volumes/operation-error.ts";
import { fakeBlockVolumePathHandler } from "./fake-volume-path-handler.ts";

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

describe("local Block PVs: mapPodDevice, unmapPodDevices, unmapUnusedLocalBlockVolumes", () => {
  let root = "";
  let device = "";
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "bunlet-block-"));
    // A stand-in for the device (the stat says block device); a link to it is resolved as upstream's EvalHostSymlinks.
    device = join(root, "dev-loop7");
    writeFileSync(device, "keep");
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const map = (uid: string, fake: ReturnType<typeof fakeBlockVolumePathHandler>, devicePath = device) =>
    mapPodDevice({ rootDir: root, podUid: uid, pvName: "pv-b", devicePath }, fake.blk, blockStat);

  test("paths: the local plugin's global map path and the pod's link", () => {
    expect(localGlobalMapPath("/k", "pv-b")).toBe("/k/plugins/kubernetes.io~local-volume/volumeDevices/pv-b");
    expect(podVolumeDeviceDir("/k", "u1", "kubernetes.io~local-volume")).toBe("/k/pods/u1/volumeDevices/kubernetes.io~local-volume");
  });

  test("mapped: the pod's link to the resolved device, the device bound on <globalMapPath>/<pod UID>, the loop device on it", async () => {
    const fake = fakeBlockVolumePathHandler(root);
    const alias = join(root, "by-id");
    symlinkSync(device, alias);
    const link = await map("u1", fake, alias);
    expect(link).toBe(join(root, "pods", "u1", "volumeDevices", "kubernetes.io~local-volume", "pv-b"));
    expect(readlinkSync(link)).toBe(device);
    const global = "plugins/kubernetes.io~local-volume/volumeDevices/pv-b/u1";
    expect(fake.calls).toEqual(["link pods/u1/volumeDevices/kubernetes.io~local-volume/pv-b", `bind ${global}`, `attach ${global}`]);
    expect([...fake.loops.keys()]).toEqual([global]);
    expect(await map("u1", fake)).toBe(link);
  });

  test("a failed step is MapVolume.MapBlockVolume, in upstream's words", async () => {
    const fake = fakeBlockVolumePathHandler(root);
    fake.blk.attachFileDevice = async () => {
      throw new Error("makeLoopDevice failed for path x: losetup -f x failed: no free loop device");
    };
    const err = await map("u1", fake).catch((e: Error) => e);
    expect(err).toBeInstanceOf(MapVolumeError);
    expect(volumeOperationStep(err as Error)).toBe("MapVolume.MapBlockVolume");
    expect((err as Error).message).toStartWith("blkUtil.AttachFileDevice failed. globalMapPath:");
    const missing = await mapPodDevice({ rootDir: root, podUid: "u1", pvName: "pv-b", devicePath: "/nonexistent/bunlet-dev" }, fake.blk).catch((e: Error) => e);
    expect(volumeOperationStep(missing as Error)).toBe("MapVolume.MapPodDevice");
  });

  test("teardown: the links go, then the global map files of pods without a link are unlocked and unbound, the map path once no pod is left", async () => {
    const fake = fakeBlockVolumePathHandler(root);
    const link1 = await map("u1", fake);
    await map("u2", fake);
    fake.calls.length = 0;
    unmapPodDevices(root, "u1");
    expect(existsSync(join(root, "pods", "u1", "volumeDevices"))).toBe(false);
    expect(existsSync(device)).toBe(true);
    expect(unusedLocalBlockMaps(root)).toEqual([["pv-b", "u1"]]);
    await unmapUnusedLocalBlockVolumes(root, fake.blk);
    const global = "plugins/kubernetes.io~local-volume/volumeDevices/pv-b";
    expect(fake.calls).toEqual([`detach ${global}/u1`, "unlink pods/u1/volumeDevices/kubernetes.io~local-volume/pv-b", `unbind ${global}/u1`]);
    expect([...fake.loops.keys()]).toEqual([`${global}/u2`]);
    expect(existsSync(link1)).toBe(false);
    fake.calls.length = 0;
    unmapPodDevices(root, "u2");
    await unmapUnusedLocalBlockVolumes(root, fake.blk);
    expect(fake.calls.at(-1)).toBe(`remove ${global}`);
    expect(fake.loops.size).toBe(0);
    expect(existsSync(localGlobalMapPath(root, "pv-b"))).toBe(false);
    expect(existsSync(device)).toBe(true);
    await unmapUnusedLocalBlockVolumes(root, fake.blk);
    unmapPodDevices(root, "u2");
  });
});
