// The raw block volume path handler (upstream pkg/volume/util/volumepathhandler): the device bind-mounted
// on a file <globalMapPath>/<pod UID>, the pod's symlink to the device, and the loop device attached to
// that file — the "fd lock" that keeps the device open while a pod uses it, so that it cannot be released
// and its name given to another device under a running container. The loop device is found from sysfs
// (/sys/block/loop*/loop/backing_file), so that teardown needs nothing but the disk; losetup runs as a
// child process the agent awaits. Every call is behind BlockVolumePathHandler so that unit tests need
// neither root nor devices.
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
} from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { MS_BIND, mount, UMOUNT_NOFOLLOW, umount2 } from "../../../ffi/fs.ts";
import { kv, log } from "../../log.ts";
import { execCommand, execFailure, type Exec } from "./exec.ts";
import { mountPointsUnder } from "./mount-points.ts";

/** upstream's map path directories' mode. */
const MAP_PATH_MODE = 0o750;
/** Where the kernel lists its block devices, the loop devices' backing files among them. */
const SYS_BLOCK = "/sys/block";
/** How long a detached loop device may take to let its backing file go (udev may hold it open a moment). */
const DETACH_WAIT_MS = 5_000;

/** upstream BlockVolumePathHandler: the calls MapBlockVolume, UnmapBlockVolume and UnmapDevice make. */
export interface BlockVolumePathHandler {
  /** MapDevice with bindMount: the device bind-mounted on the file <mapPath>/<linkName> (kept when one is there). */
  mapBindMountDevice(devicePath: string, mapPath: string, linkName: string): Promise<void>;
  /** MapDevice without bindMount: <mapPath>/<linkName> a symlink to the device (replaced when stale). */
  mapSymlinkDevice(devicePath: string, mapPath: string, linkName: string): Promise<void>;
  /** UnmapDevice with bindMount: <mapPath>/<linkName> unmounted, then removed. */
  unmapBindMountDevice(mapPath: string, linkName: string): Promise<void>;
  /** UnmapDevice without bindMount: the symlink removed (never what it names). */
  unmapSymlinkDevice(mapPath: string, linkName: string): Promise<void>;
  /** AttachFileDevice: the loop device of `path`, attached when there is none; its /dev path. */
  attachFileDevice(path: string): Promise<string>;
  /** DetachFileDevice: the loop device of `path` detached (none is no error). */
  detachFileDevice(path: string): Promise<void>;
  /** GetDeviceBindMountRefs: the device bind mounts under `mapPath` (the pods still mapping it). */
  getDeviceBindMountRefs(mapPath: string): Promise<string[]>;
  /** RemoveMapPath: `mapPath` and what is left in it (never across a mount). */
  removeMapPath(mapPath: string): Promise<void>;
}

/** upstream cleanBackingFilePath: sysfs's backing_file without its newline or the " (deleted)" of a removed file. */
export function cleanBackingFilePath(text: string): string {
  return text
    .trim()
    .replace(/\(deleted\)$/, "")
    .trim();
}

/**
 * upstream getLoopDeviceFromSysfs over what sysfs said: the first loop device (by name, as sysfs lists
 * them) whose backing file is `path` or its canonical `realPath`, as /dev/<name>; undefined when none.
 */
export function loopDeviceOf(backingFiles: ReadonlyMap<string, string>, path: string, realPath: string): string | undefined {
  for (const [name, text] of backingFiles) {
    const backing = cleanBackingFilePath(text);
    if (backing === path || backing === realPath) return `/dev/${name}`;
  }
  return undefined;
}

/** Whether `path` is a device file itself (upstream IsDeviceBindMountExist: a device bind-mounted there). */
export function isDeviceBindMount(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isBlockDevice() || st.isCharacterDevice();
  } catch {
    return false;
  }
}

/** The backing file of every loop device, by device name (/sys/block/loop*). */
async function loopBackingFiles(): Promise<Map<string, string>> {
  const names = (await readdir(SYS_BLOCK).catch(() => [] as string[])).filter((n) => n.startsWith("loop"));
  const out = new Map<string, string>();
  for (const name of names) {
    const text = await readFile(join(SYS_BLOCK, name, "loop", "backing_file"), "utf8").catch(() => undefined);
    if (text !== undefined) out.set(name, text);
  }
  return out;
}

/** The loop devices (/dev paths) whose backing file lies under the directory `dir` (or its canonical path, as sysfs names it). */
export async function loopDevicesUnder(dir: string): Promise<string[]> {
  const dirs = [dir, existsSync(dir) ? realpathSync(dir) : dir];
  const out: string[] = [];
  for (const [name, text] of await loopBackingFiles()) {
    const backing = cleanBackingFilePath(text);
    if (dirs.some((d) => backing.startsWith(`${d}/`))) out.push(`/dev/${name}`);
  }
  return out.sort();
}

/** upstream GetLoopDevice: the loop device attached to `path`, undefined when none is (or `path` is gone). */
export async function getLoopDevice(path: string): Promise<string | undefined> {
  let realPath: string;
  try {
    statSync(path);
    realPath = realpathSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`not attachable: ${(e as Error).message}`);
  }
  return loopDeviceOf(await loopBackingFiles(), path, realPath);
}

/** upstream mapBindMountDevice: the file made when missing, the device bind-mounted on it unless already. */
function bindMountDevice(devicePath: string, mapPath: string, linkName: string): void {
  const linkPath = join(mapPath, linkName);
  if (isDeviceBindMount(linkPath)) return;
  if (!existsSync(linkPath)) closeSync(openSync(linkPath, "a", MAP_PATH_MODE));
  else log.warn(`map path file exists but is not mounted ${kv({ path: linkPath })}`);
  try {
    mount(devicePath, linkPath, null, MS_BIND);
  } catch (e) {
    throw new Error(`failed to bind mount devicePath: ${devicePath} to linkPath ${linkPath}: ${(e as Error).message}`);
  }
}

/** upstream MapDevice's checks and the map path made (0750). */
function makeMapPath(devicePath: string, mapPath: string): void {
  if (devicePath === "") throw new Error("failed to map device to map path. devicePath is empty");
  if (mapPath === "") throw new Error("failed to map device to map path. mapPath is empty");
  if (!isAbsolute(mapPath)) throw new Error(`the map path should be absolute: map path: ${mapPath}`);
  mkdirSync(mapPath, { recursive: true, mode: MAP_PATH_MODE });
}

/** upstream unmapBindMountDevice: unmounted when a device is bind-mounted there, then the file removed. */
function unbindMountDevice(mapPath: string, linkName: string): void {
  const linkPath = join(mapPath, linkName);
  if (isDeviceBindMount(linkPath)) {
    try {
      umount2(linkPath, UMOUNT_NOFOLLOW);
    } catch (e) {
      throw new Error(`failed to unmount linkPath ${linkPath}: ${(e as Error).message}`);
    }
  }
  rmSync(linkPath, { force: true });
}

/** Resolves once no loop device has `path` as its backing file any more (false when it still has after DETACH_WAIT_MS). */
async function loopReleased(path: string): Promise<boolean> {
  const deadline = Date.now() + DETACH_WAIT_MS;
  for (;;) {
    if ((await getLoopDevice(path)) === undefined) return true;
    if (Date.now() >= deadline) return false;
    await Bun.sleep(50);
  }
}

/** upstream AttachFileDevice (makeLoopDevice: `losetup -f <path>`). */
async function attachFileDevice(exec: Exec, path: string): Promise<string> {
  const attached = await getLoopDevice(path);
  if (attached) return attached;
  const r = await exec("losetup", ["-f", path]);
  if (r.status !== 0) throw new Error(`makeLoopDevice failed for path ${path}: losetup -f ${path} failed: ${execFailure(r)}`);
  const device = await getLoopDevice(path);
  if (!device) throw new Error(`makeLoopDevice failed for path ${path}: no loop device has it as its backing file`);
  log.info(`loop device attached ${kv({ path, device })}`);
  return device;
}

/** upstream DetachFileDevice (removeLoopDevice: `losetup -d <device>`), waiting until the kernel lets the file go. */
async function detachFileDevice(exec: Exec, path: string): Promise<void> {
  const device = await getLoopDevice(path);
  if (!device) {
    if (existsSync(path)) log.warn(`couldn't find loopback device which takes file descriptor lock; skip detaching ${kv({ path })}`);
    return;
  }
  const r = await exec("losetup", ["-d", device]);
  if (r.status !== 0 && existsSync(device)) throw new Error(`removeLoopDevice failed for path ${path}: losetup -d ${device} failed: ${execFailure(r)}`);
  if (!(await loopReleased(path))) throw new Error(`removeLoopDevice failed for path ${path}: ${device} still has it as its backing file`);
  log.info(`loop device detached ${kv({ path, device })}`);
}

/** upstream GetDeviceBindMountRefs (a missing map path has none). */
function deviceBindMountRefs(mapPath: string): string[] {
  if (!existsSync(mapPath)) return [];
  return readdirSync(mapPath)
    .map((n) => join(mapPath, n))
    .filter(isDeviceBindMount)
    .sort();
}

/** The handler of this node: real bind mounts, symlinks and losetup. */
export function nodeBlockVolumePathHandler(exec: Exec = execCommand): BlockVolumePathHandler {
  return {
    mapBindMountDevice: async (devicePath, mapPath, linkName) => {
      makeMapPath(devicePath, mapPath);
      bindMountDevice(devicePath, mapPath, linkName);
    },
    mapSymlinkDevice: async (devicePath, mapPath, linkName) => {
      makeMapPath(devicePath, mapPath);
      const link = join(mapPath, linkName);
      if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() && readlinkSync(link) === devicePath) return;
      // upstream mapSymlinkDevice: an old link (stale across a reboot) is replaced.
      rmSync(link, { force: true });
      symlinkSync(devicePath, link);
    },
    unmapBindMountDevice: async (mapPath, linkName) => unbindMountDevice(mapPath, linkName),
    unmapSymlinkDevice: async (mapPath, linkName) => {
      const link = join(mapPath, linkName);
      if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(link);
    },
    attachFileDevice: (path) => attachFileDevice(exec, path),
    detachFileDevice: (path) => detachFileDevice(exec, path),
    getDeviceBindMountRefs: async (mapPath) => deviceBindMountRefs(mapPath),
    removeMapPath: async (mapPath) => {
      if (mapPath === "") throw new Error("failed to remove map path. mapPath is empty");
      if (existsSync(mapPath) && mountPointsUnder(realpathSync(mapPath)).length > 0) throw new Error(`failed to remove directory ${mapPath}: still mounted`);
      rmSync(mapPath, { recursive: true, force: true });
    },
  };
}
