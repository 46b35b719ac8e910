// The raw block volume path handler (upstream volumepathhandler): the loop device of a file from what
// sysfs says (pure), and the handler's calls that need neither root nor a device — links, references,
// the map path's removal, and losetup's failures through a fake exec.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Exec } from "../../../src/pod/volumes/exec.ts";
import {
  cleanBackingFilePath,
  getLoopDevice,
  isDeviceBindMount,
  loopDeviceOf,
  loopDevicesUnder,
  nodeBlockVolumePathHandler,
} from "../../../src/pod/volumes/volume-path-handler.ts";

test.each([
  ["/k/dev/u1\n", "/k/dev/u1"],
  ["/k/dev/u1 (deleted)\n", "/k/dev/u1"],
  ["  /k/dev/u1(deleted)", "/k/dev/u1"],
])("cleanBackingFilePath(%p) = %p", (text, want) => expect(cleanBackingFilePath(text)).toBe(want));

const sysfs = new Map([
  ["loop0", "/srv/disk.img\n"],
  ["loop3", "/real/k/dev/u1 (deleted)\n"],
  ["loop4", "/k/dev/u2\n"],
]);
test.each([
  ["the path itself", "/k/dev/u2", "/k/dev/u2", "/dev/loop4"],
  ["its canonical path, a deleted file too", "/k/dev/u1", "/real/k/dev/u1", "/dev/loop3"],
  ["none", "/k/dev/u3", "/k/dev/u3", undefined],
] as const)("loopDeviceOf: %s", (_what, path, real, want) => expect(loopDeviceOf(sysfs, path, real)).toBe(want));

describe("nodeBlockVolumePathHandler without devices", () => {
  let root = "";
  const calls: string[][] = [];
  const exec =
    (status: number, output = ""): Exec =>
    async (cmd, args) => (calls.push([cmd, ...args]), { status, output });
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "bunlet-vph-"));
    calls.length = 0;
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  test("the pod's symlink: made under the map path, replaced, removed (never a file that is no link)", async () => {
    const blk = nodeBlockVolumePathHandler(exec(0));
    const dir = join(root, "pods", "u1", "volumeDevices", "kubernetes.io~local-volume");
    await blk.mapSymlinkDevice("/dev/loop7", dir, "pv");
    await blk.mapSymlinkDevice("/dev/loop8", dir, "pv");
    expect(readlinkSync(join(dir, "pv"))).toBe("/dev/loop8");
    await blk.unmapSymlinkDevice(dir, "pv");
    expect(lstatSync(join(dir, "pv"), { throwIfNoEntry: false })).toBeUndefined();
    writeFileSync(join(dir, "file"), "");
    await blk.unmapSymlinkDevice(dir, "file");
    expect(existsSync(join(dir, "file"))).toBe(true);
    await expect(blk.mapSymlinkDevice("/dev/loop7", "relative/dir", "pv")).rejects.toThrow("the map path should be absolute");
    await expect(blk.mapSymlinkDevice("", dir, "pv")).rejects.toThrow("devicePath is empty");
  });

  test("references are device files only; a file left unbound is removed with the map path", async () => {
    const blk = nodeBlockVolumePathHandler(exec(0));
    const global = join(root, "plugins", "kubernetes.io~local-volume", "volumeDevices", "pv");
    expect(await blk.getDeviceBindMountRefs(global)).toEqual([]);
    mkdirSync(global, { recursive: true });
    writeFileSync(join(global, "u1"), "");
    expect(isDeviceBindMount(join(global, "u1"))).toBe(false);
    expect(isDeviceBindMount("/dev/null")).toBe(true);
    expect(await blk.getDeviceBindMountRefs(global)).toEqual([]);
    await blk.unmapBindMountDevice(global, "u1");
    expect(existsSync(join(global, "u1"))).toBe(false);
    await blk.removeMapPath(global);
    expect(existsSync(global)).toBe(false);
  });

  test("losetup: a failed attach names the command and its output; no loop device on a file is no detach", async () => {
    const file = join(root, "u1");
    writeFileSync(file, "");
    expect(await getLoopDevice(file)).toBeUndefined();
    expect(await loopDevicesUnder(root)).toEqual([]);
    expect(await getLoopDevice(join(root, "missing"))).toBeUndefined();
    const failing = nodeBlockVolumePathHandler(exec(1, "losetup: cannot find an unused loop device"));
    await expect(failing.attachFileDevice(file)).rejects.toThrow(`losetup -f ${file} failed: losetup: cannot find an unused loop device`);
    const silent = nodeBlockVolumePathHandler(exec(0));
    await expect(silent.attachFileDevice(file)).rejects.toThrow("no loop device has it as its backing file");
    await silent.detachFileDevice(file);
    expect(calls).toEqual([
      ["losetup", "-f", file],
      ["losetup", "-f", file],
    ]);
  });
});
