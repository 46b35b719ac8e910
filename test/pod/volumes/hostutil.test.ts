import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as libc from "../../../ffi/libc.ts";
import { isShared, makeRShared } from "../../../src/pod/volumes/hostutil.ts";
import { mountHolding, parseMountInfo } from "../../../src/pod/volumes/mount-points.ts";

const line = (id: number, mp: string, optional = "") => `${id} 1 0:${id} / ${mp} rw,relatime ${optional}${optional ? " " : ""}- ext4 /dev/x rw`;
const PRIVATE_ROOT = [line(27, "/"), line(28, "/sys"), line(30, "/var/lib/kubelet/pods/u/volumes/x", "shared:9")].join("\n");

describe("mountinfo", () => {
  test("optional fields are read between the mount options and the separator", () => {
    const e = parseMountInfo(`${line(1, "/", "shared:1 master:2")}\n${line(2, "/a\\040b")}\n`);
    expect(e).toEqual([
      { mountPoint: "/", optionalFields: ["shared:1", "master:2"], source: "/dev/x" },
      { mountPoint: "/a b", optionalFields: [], source: "/dev/x" },
    ]);
  });

  test("the mount holding a path is the last listed whose mount point holds it, not a sibling prefix", () => {
    const text = [line(1, "/"), line(2, "/var/lib"), line(3, "/var/lib/kubelet"), line(4, "/var/lib/kubelet-other")].join("\n");
    expect(mountHolding("/var/lib/kubelet/pods", text)?.mountPoint).toBe("/var/lib/kubelet");
    expect(mountHolding("/var/lib/kubeletx", text)?.mountPoint).toBe("/var/lib");
    expect(mountHolding("/etc", text)?.mountPoint).toBe("/");
    // Mounted over later: the later line wins.
    expect(mountHolding("/var/lib/x", `${text}\n${line(5, "/var", "shared:3")}`)?.mountPoint).toBe("/var");
  });

  test("shared means a shared: peer group on the mount holding the path", () => {
    expect(isShared("/var/lib/kubelet", PRIVATE_ROOT)).toBe(false);
    expect(isShared("/var/lib/kubelet", [line(1, "/", "master:1"), line(2, "/var", "shared:4 master:1")].join("\n"))).toBe(true);
    expect(() => isShared("/x", "")).toThrow('cannot find mount point for "/x"');
  });
});

describe("makeRShared", () => {
  const dir = mkdtempSync(`${tmpdir()}/bunlet-rshared-`);
  const deps = (mountinfo: string, failOn?: number) => {
    const calls: [string, string, number][] = [];
    return {
      calls,
      readMountInfo: () => mountinfo,
      mount(source: string, target: string, flags: number) {
        if (flags === failOn) throw new libc.SyscallError("mount", libc.ERRNO.EPERM!, target);
        calls.push([source, target, flags]);
      },
    };
  };

  test("on a private mount: a recursive bind of the directory on itself, then rshared", () => {
    const d = deps([line(1, "/"), line(2, "/tmp")].join("\n"));
    makeRShared(dir, d);
    expect(d.calls).toEqual([
      [dir, dir, libc.MS_BIND | libc.MS_REC],
      [dir, dir, libc.MS_SHARED | libc.MS_REC],
    ]);
  });

  test("already on a shared mount: nothing is mounted", () => {
    const d = deps([line(1, "/", "shared:1")].join("\n"));
    makeRShared(dir, d);
    expect(d.calls).toEqual([]);
  });

  test("errors carry upstream's texts", () => {
    const priv = line(1, "/");
    expect(() => makeRShared(dir, deps(priv, libc.MS_BIND | libc.MS_REC))).toThrow(`failed to bind-mount ${dir}: mount ${dir}: EPERM`);
    expect(() => makeRShared(dir, deps(priv, libc.MS_SHARED | libc.MS_REC))).toThrow(`failed to make ${dir} rshared: mount ${dir}: EPERM`);
    rmSync(dir, { recursive: true });
  });
});
