// A BlockVolumePathHandler for unit tests (src/pod/volumes/volume-path-handler.ts): no mounts, no loop
// devices. A "bind mount" is a symlink to the device at <mapPath>/<name> (it stats as the device), a
// loop device a name in a map; every call is recorded, paths relative to `root`.
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join, relative } from "node:path";
import type { BlockVolumePathHandler } from "../../../src/pod/volumes/volume-path-handler.ts";

export function fakeBlockVolumePathHandler(root: string) {
  const calls: string[] = [];
  /** The attached "loop devices", by backing file (relative to root). */
  const loops = new Map<string, string>();
  const rel = (p: string) => relative(root, p);
  const record = (what: string, p: string) => void calls.push(`${what} ${rel(p)}`);
  const blk: BlockVolumePathHandler = {
    mapBindMountDevice: async (devicePath, mapPath, linkName) => {
      const p = join(mapPath, linkName);
      record("bind", p);
      mkdirSync(mapPath, { recursive: true });
      if (!lstatSync(p, { throwIfNoEntry: false })) symlinkSync(devicePath, p);
    },
    mapSymlinkDevice: async (devicePath, mapPath, linkName) => {
      const p = join(mapPath, linkName);
      record("link", p);
      mkdirSync(mapPath, { recursive: true });
      rmSync(p, { force: true });
      symlinkSync(devicePath, p);
    },
    unmapBindMountDevice: async (mapPath, linkName) => {
      record("unbind", join(mapPath, linkName));
      rmSync(join(mapPath, linkName), { force: true });
    },
    unmapSymlinkDevice: async (mapPath, linkName) => {
      record("unlink", join(mapPath, linkName));
      rmSync(join(mapPath, linkName), { force: true });
    },
    attachFileDevice: async (path) => {
      record("attach", path);
      if (!loops.has(rel(path))) loops.set(rel(path), `/dev/loop${100 + loops.size}`);
      return loops.get(rel(path))!;
    },
    detachFileDevice: async (path) => {
      record("detach", path);
      loops.delete(rel(path));
    },
    getDeviceBindMountRefs: async (mapPath) => (existsSync(mapPath) ? readdirSync(mapPath).map((n) => join(mapPath, n)) : []),
    removeMapPath: async (mapPath) => {
      record("remove", mapPath);
      rmSync(mapPath, { recursive: true, force: true });
    },
  };
  return { blk, calls, loops };
}
