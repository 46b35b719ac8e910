// Raw block volumes: a Block claim's local PV mapped as the pod's link to its device, and a container's
// volumeDevices turned into CRI devices as upstream makeBlockVolumes does (permissions, errors).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readlinkSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blockDevices, mapBlockVolume, podDeviceMapPath } from "../../../src/pod/volumes/block-volume.ts";
import type { ClaimedVolume } from "../../../src/pod/volumes/persistent-volume.ts";

const local = (path: string, pvName = "pv-raw"): ClaimedVolume => ({
  pvName,
  source: { plugin: "kubernetes.io/local-volume", local: { path } },
  mountOptions: [],
  volumeMode: "Block",
});

test("podDeviceMapPath: upstream's pods/<uid>/volumeDevices/kubernetes.io~local-volume/<pv>", () => {
  expect(podDeviceMapPath("/var/lib/kubelet", "uid-1", "pv-raw")).toBe("/var/lib/kubelet/pods/uid-1/volumeDevices/kubernetes.io~local-volume/pv-raw");
});

describe("blockDevices (upstream makeBlockVolumes)", () => {
  const container = { name: "c", volumeDevices: [{ name: "raw", devicePath: "/dev/xvda" }] };
  test("each device is the pod's link, mrw, or r for a readOnly claim", () => {
    const link = podDeviceMapPath("/r", "uid-1", "pv-raw");
    expect(blockDevices("/r", "uid-1", container, () => ({ claimed: local("/dev/loop7"), readOnly: false }))).toEqual([
      { containerPath: "/dev/xvda", hostPath: link, permissions: "mrw" },
    ]);
    expect(blockDevices("/r", "uid-1", container, () => ({ claimed: local("/dev/loop7"), readOnly: true }))[0]!.permissions).toBe("r");
  });
  test("a relative devicePath, or a volume that is no mapped Block claim, fails the container's config", () => {
    const relative = { name: "c", volumeDevices: [{ name: "raw", devicePath: "dev/xvda" }] };
    expect(() => blockDevices("/r", "u", relative, () => undefined)).toThrow("error DevicePath `dev/xvda` must be an absolute path");
    expect(() => blockDevices("/r", "u", container, () => undefined)).toThrow('cannot find volume "raw" to pass into container "c"');
    const fs = { ...local("/mnt/d"), volumeMode: undefined };
    expect(() => blockDevices("/r", "u", container, () => ({ claimed: fs, readOnly: false }))).toThrow('cannot find volume "raw"');
  });
  test("a container without volumeDevices has none", () => {
    expect(blockDevices("/r", "u", { name: "c" }, () => undefined)).toEqual([]);
  });
});

describe("mapBlockVolume", () => {
  const rootDir = mkdtempSync(join(tmpdir(), "bunlet-block-volume-"));
  afterAll(() => rmSync(rootDir, { recursive: true, force: true }));
  // Any block device node of the machine: the link is made, the device is never opened.
  const device = ["/dev/loop0", "/dev/vda", "/dev/sda"].find((d) => existsSync(d) && statSync(d).isBlockDevice());

  test.skipIf(!device)("the pod's link points at the device, made once", () => {
    const link = mapBlockVolume(rootDir, "uid-1", local(device!));
    expect(link).toBe(podDeviceMapPath(rootDir, "uid-1", "pv-raw"));
    expect(readlinkSync(link)).toBe(device!);
    expect(mapBlockVolume(rootDir, "uid-1", local(device!))).toBe(link);
  });
  test("a path that is not a block device fails as MountDevice; another source is not mapped", () => {
    expect(() => mapBlockVolume(rootDir, "uid-2", local(rootDir))).toThrow(`local volume ${rootDir} of PV pv-raw is not a block device`);
    const csi: ClaimedVolume = {
      pvName: "pv-csi",
      source: { plugin: "kubernetes.io/csi", csi: { driver: "d", volumeHandle: "h" }, accessModes: [] },
      mountOptions: [],
      volumeMode: "Block",
    };
    expect(() => mapBlockVolume(rootDir, "uid-2", csi)).toThrow(
      "PV pv-csi has volumeMode Block: bunlet maps raw block volumes of local PVs only, not kubernetes.io/csi",
    );
  });
});
