import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  attachmentName,
  deviceMountPath,
  ephemeralVolumeHandle,
  loadVolumeData,
  podMountPath,
  saveVolumeData,
} from "../../../../src/pod/volumes/csi/csi-util.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

describe("CSI paths (upstream makeDeviceMountPath, csiMountMgr.GetPath)", () => {
  test("the global mount path: the driver (escaped) and the sha256 of the volume handle", () => {
    expect(deviceMountPath("/var/lib/kubelet", "hostpath.csi.k8s.io", "vol-1")).toBe(
      `/var/lib/kubelet/plugins/kubernetes.io/csi/hostpath.csi.k8s.io/${sha("vol-1")}/globalmount`,
    );
    expect(deviceMountPath("/r", "a/b", "h")).toBe(`/r/plugins/kubernetes.io/csi/a~b/${sha("h")}/globalmount`);
  });
  test("the publish target: the pod's kubernetes.io~csi directory, the spec's name, mount", () => {
    expect(podMountPath("/var/lib/kubelet", "uid-1", "pv-a")).toBe("/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~csi/pv-a/mount");
  });
  test.each([
    ["vol-1", "drv", "node-a", `csi-${sha("vol-1drvnode-a")}`],
    ["h", "d", "n", `csi-${sha("hdn")}`],
  ])("attachmentName(%s, %s, %s)", (handle, driver, node, want) => {
    expect(attachmentName(handle, driver, node)).toBe(want);
  });
  test("an inline volume's handle: csi- and the sha256 of the pod UID and the volume name", () => {
    expect(ephemeralVolumeHandle("uid-1", "scratch")).toBe(`csi-${sha("uid-1scratch")}`);
  });
});

describe("vol_data.json (upstream saveVolumeData, loadVolumeData)", () => {
  let dir = "";
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  test("written with upstream's keys and read back", () => {
    dir = mkdtempSync(join(tmpdir(), "csi-voldata-"));
    const data = {
      specVolumeID: "pv-a",
      volumeHandle: "vol-1",
      driverName: "drv",
      nodeName: "n1",
      attachmentID: "csi-x",
      volumeLifecycleMode: "Persistent" as const,
    };
    saveVolumeData(join(dir, "v"), data);
    expect(JSON.parse(readFileSync(join(dir, "v", "vol_data.json"), "utf8"))).toEqual(data);
    expect(loadVolumeData(join(dir, "v"))).toEqual(data);
  });
  test("none: undefined; one without a driver or handle: an error naming the file", () => {
    dir = mkdtempSync(join(tmpdir(), "csi-voldata-"));
    expect(loadVolumeData(dir)).toBeUndefined();
    writeFileSync(join(dir, "vol_data.json"), JSON.stringify({ specVolumeID: "x", volumeHandle: "" }));
    expect(() => loadVolumeData(dir)).toThrow(`${join(dir, "vol_data.json")}: not a CSI volume's data`);
  });
});
