// A local PV on a real block device (a loop device over a file of this test), in Filesystem mode, as
// upstream's "block" and "blockfswithoutformat" local volume types make it: the first pod's set-up
// formats it ext4 and mounts it node-wide, both pods' directories bind-mount it and see each other's
// files, the device mount stays while one pod has it and goes with the last; a device already
// formatted is mounted as it is. Root only (loop devices, mounts); everything under a temp directory
// of this test, detached and removed even on failure.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MNT_DETACH, umount2 } from "../../../ffi/fs.ts";
import { tearDownPodDir } from "../../../src/pod/kuberuntime/empty-dir.ts";
import { execCommand } from "../../../src/pod/volumes/exec.ts";
import { diskFormat, localDeviceMountPath, unmountUnusedLocalDevices } from "../../../src/pod/volumes/local-device.ts";
import { setUpLocalVolume } from "../../../src/pod/volumes/local-volume.ts";
import { mountPointsUnder } from "../../../src/pod/volumes/mount-points.ts";

const canRun = process.getuid?.() === 0 && spawnSync("losetup", ["--version"]).status === 0 && spawnSync("mkfs.ext4", ["-V"]).status === 0;
let base = "";
const loops: string[] = [];

/** A 16 MiB file of zeroes behind a free loop device; its path. */
function loopDevice(name: string): string {
  const file = join(base, `${name}.img`);
  writeFileSync(file, Buffer.alloc(16 << 20));
  const r = spawnSync("losetup", ["-f", "--show", file], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`losetup: ${r.stderr}`);
  const dev = r.stdout.trim();
  loops.push(dev);
  return dev;
}

beforeAll(() => {
  if (canRun) base = realpathSync(mkdtempSync(join(tmpdir(), `bunlet-local-device-${process.pid}-`)));
});
afterAll(() => {
  if (!base) return;
  for (const mp of mountPointsUnder(base)) umount2(mp, MNT_DETACH);
  for (const dev of loops) spawnSync("losetup", ["-d", dev]);
  rmSync(base, { recursive: true, force: true });
});

describe.skipIf(!canRun)("a local PV on a block device", () => {
  test("formatted and mounted once for two pods, unmounted with the last", async () => {
    const rootDir = join(base, "root-a");
    const dev = loopDevice("a");
    const setUp = (podUid: string) => setUpLocalVolume({ rootDir, podUid, pvName: "pv-a", path: dev, readOnly: false, mountOptions: [] });
    const one = await setUp("pod-1");
    const two = await setUp("pod-2");
    expect(diskFormat(await execCommand("blkid", ["-p", "-s", "TYPE", "-s", "PTTYPE", "-o", "export", dev]), dev)).toBe("ext4");
    const global = localDeviceMountPath(rootDir, "pv-a");
    expect(mountPointsUnder(global)).toEqual([global]);
    writeFileSync(join(one, "from-1"), "hello");
    expect(readFileSync(join(two, "from-1"), "utf8")).toBe("hello");

    tearDownPodDir(rootDir, "pod-1");
    await unmountUnusedLocalDevices(rootDir);
    expect(mountPointsUnder(global)).toEqual([global]);
    expect(readFileSync(join(two, "from-1"), "utf8")).toBe("hello");

    tearDownPodDir(rootDir, "pod-2");
    await unmountUnusedLocalDevices(rootDir);
    expect(mountPointsUnder(rootDir)).toEqual([]);
    expect(existsSync(global)).toBe(false);

    // Mounted again, the data is there: the device is not formatted a second time.
    const three = await setUp("pod-3");
    expect(readFileSync(join(three, "from-1"), "utf8")).toBe("hello");
    tearDownPodDir(rootDir, "pod-3");
    await unmountUnusedLocalDevices(rootDir);
    expect(mountPointsUnder(rootDir)).toEqual([]);
  });

  test("an unformatted device asked read-only is refused as upstream's MountDevice failure", async () => {
    const rootDir = join(base, "root-b");
    const dev = loopDevice("b");
    await expect(setUpLocalVolume({ rootDir, podUid: "pod-1", pvName: "pv-b", path: dev, readOnly: true, mountOptions: [] })).rejects.toThrow(
      `cannot mount unformatted disk ${dev} as we are manipulating it in read-only mode`,
    );
    expect(existsSync(localDeviceMountPath(rootDir, "pv-b"))).toBe(false);
    tearDownPodDir(rootDir, "pod-1");
  });
});
