// A local PV on a block device: upstream getDiskFormat's reading of blkid, SafeFormatAndMount's
// decisions (format, fsck, mount options) over a recorded command runner, and which node-wide device
// mounts no pod uses any more.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  diskFormat,
  formatAndMount,
  localDeviceMountPath,
  mkfsArgs,
  mountLocalBlockDevice,
  PARTITIONED,
  unusedDeviceMounts,
} from "../../../src/pod/volumes/local-device.ts";
import type { Exec, ExecResult } from "../../../src/pod/volumes/exec.ts";

const ok = (output = ""): ExecResult => ({ status: 0, output });

/** A command runner answering by command name, recording every call. */
function recorder(answers: Record<string, ExecResult>): { exec: Exec; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    exec: async (cmd, args) => {
      calls.push([cmd, ...args].join(" "));
      return answers[cmd] ?? ok();
    },
  };
}

describe("diskFormat (upstream getDiskFormat over blkid -o export)", () => {
  test.each([
    ["nothing found (exit 2): unformatted", { status: 2, output: "" }, ""],
    ["an ext4 filesystem", ok("DEVNAME=/dev/loop3\nTYPE=ext4\n"), "ext4"],
    ["a partition table is never formatted", ok("PTTYPE=gpt\n"), PARTITIONED],
    ["a filesystem and a partition table", ok("TYPE=vfat\nPTTYPE=dos\n"), PARTITIONED],
  ])("%s", (_n, r, want) => expect(diskFormat(r, "/dev/loop3")).toBe(want));

  test("another failure or output it cannot read is an error naming the disk", () => {
    expect(() => diskFormat({ status: 4, output: "blkid: error" }, "/dev/loop3")).toThrow("failed to get disk format of disk /dev/loop3: blkid: error");
    expect(() => diskFormat(ok("garbage\n"), "/dev/loop3")).toThrow("blkid returns invalid output");
  });
});

test.each([
  ["ext4", ["-F", "-m0", "/dev/x"]],
  ["ext3", ["-F", "-m0", "/dev/x"]],
  ["xfs", ["-f", "/dev/x"]],
  ["btrfs", ["/dev/x"]],
])("mkfsArgs %s", (fsType, want) => expect(mkfsArgs(fsType, "/dev/x")).toEqual(want));

describe("formatAndMount (upstream SafeFormatAndMount)", () => {
  const blkid = "blkid -p -s TYPE -s PTTYPE -o export /dev/loop3";

  test("an unformatted device is formatted as ext4 by default, then mounted with defaults", async () => {
    const r = recorder({ blkid: { status: 2, output: "" } });
    await formatAndMount("/dev/loop3", "/mnt/pv", "", [], r.exec);
    expect(r.calls).toEqual([blkid, "mkfs.ext4 -F -m0 /dev/loop3", "mount -t ext4 -o defaults /dev/loop3 /mnt/pv"]);
  });

  test("a formatted device is checked by fsck, not formatted, and mounted with the PV's options", async () => {
    const r = recorder({ blkid: ok("TYPE=ext4\n"), fsck: { status: 1, output: "corrected" } });
    await formatAndMount("/dev/loop3", "/mnt/pv", "ext4", ["noatime"], r.exec);
    expect(r.calls).toEqual([blkid, "fsck -a /dev/loop3", "mount -t ext4 -o noatime,defaults /dev/loop3 /mnt/pv"]);
  });

  test("read-only: no fsck, and an unformatted device is refused rather than formatted", async () => {
    const formatted = recorder({ blkid: ok("TYPE=xfs\n") });
    await formatAndMount("/dev/loop3", "/mnt/pv", "xfs", ["ro"], formatted.exec);
    expect(formatted.calls).toEqual([blkid, "mount -t xfs -o ro,defaults /dev/loop3 /mnt/pv"]);
    const blank = recorder({ blkid: { status: 2, output: "" } });
    await expect(formatAndMount("/dev/loop3", "/mnt/pv", "", ["ro"], blank.exec)).rejects.toThrow(
      "cannot mount unformatted disk /dev/loop3 as we are manipulating it in read-only mode",
    );
    expect(blank.calls).toEqual([blkid]);
  });

  test("errors fsck could not correct refuse the mount; a failed mkfs or mount names the command's output", async () => {
    const broken = recorder({ blkid: ok("TYPE=ext4\n"), fsck: { status: 4, output: "UNEXPECTED INCONSISTENCY" } });
    await expect(formatAndMount("/dev/loop3", "/mnt/pv", "", [], broken.exec)).rejects.toThrow(
      "'fsck' found errors on device /dev/loop3 but could not correct them",
    );
    const mkfs = recorder({ blkid: { status: 2, output: "" }, "mkfs.ext4": { status: 1, output: "no space\n" } });
    await expect(formatAndMount("/dev/loop3", "/mnt/pv", "", [], mkfs.exec)).rejects.toThrow(
      'format of disk "/dev/loop3" failed: type:("ext4") target:("/mnt/pv") output:(no space)',
    );
    const mount = recorder({ blkid: ok("TYPE=ext4\n"), mount: { status: 32, output: "wrong fs type" } });
    await expect(formatAndMount("/dev/loop3", "/mnt/pv", "", [], mount.exec)).rejects.toThrow("mount -t ext4 /dev/loop3 /mnt/pv: wrong fs type");
  });
});

test("localDeviceMountPath: upstream's plugins/kubernetes.io/local-volume/mounts/<pv>", () => {
  expect(localDeviceMountPath("/var/lib/kubelet", "local-pv-1")).toBe("/var/lib/kubelet/plugins/kubernetes.io/local-volume/mounts/local-pv-1");
});

test("unusedDeviceMounts: a device mount is kept while any pod's directory mounts its PV", () => {
  const mounts = "/r/plugins/kubernetes.io/local-volume/mounts";
  const pods = "/r/pods";
  const mps = [
    `${pods}/a/volumes/kubernetes.io~local-volume/pv1`,
    `${pods}/b/volumes/kubernetes.io~empty-dir/pv2`,
    `${mounts}/pv1`,
    `${mounts}/pv2`,
    `${mounts}/pv3/nested`,
    "/elsewhere/volumes/kubernetes.io~local-volume/pv2",
  ];
  expect(unusedDeviceMounts(mps, mounts, pods)).toEqual([`${mounts}/pv2`]);
});

test("mountLocalBlockDevice: two pods' set-ups of one PV run one after the other, never interleaved", async () => {
  const rootDir = mkdtempSync(join(tmpdir(), "bunlet-local-device-"));
  try {
    const calls: string[] = [];
    // Each command yields to the event loop, as a real child process does.
    const exec: Exec = async (cmd, args) => {
      calls.push(`${cmd} ${args.at(-1)}`);
      await new Promise((r) => setTimeout(r, 1));
      return cmd === "blkid" ? { status: 2, output: "" } : ok();
    };
    const mount = (device: string) => mountLocalBlockDevice({ rootDir, pvName: "pv1", device, readOnly: false, mountOptions: [] }, exec);
    await Promise.all([mount("/dev/a"), mount("/dev/b")]);
    const target = localDeviceMountPath(rootDir, "pv1");
    expect(calls).toEqual(["blkid /dev/a", "mkfs.ext4 /dev/a", `mount ${target}`, "blkid /dev/b", "mkfs.ext4 /dev/b", `mount ${target}`]);
  } finally {
    rmSync(rootDir, { recursive: true, force: true });
  }
});
