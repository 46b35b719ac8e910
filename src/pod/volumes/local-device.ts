// A local PersistentVolume whose path is a block device, used in Filesystem mode (upstream
// pkg/volume/local local.go deviceMounter: mountLocalBlockDevice and UnmountDevice, over mount-utils
// SafeFormatAndMount): the device is formatted when blkid finds nothing on it (mkfs.<fsType>, ext4
// unless the PV names another), checked by fsck when mounted read-write, and mounted once per node at
// <rootDir>/plugins/kubernetes.io/local-volume/mounts/<pv name>; each pod bind-mounts that directory
// (local-volume.ts). The device's mount goes once no pod's directory mounts the PV any more. blkid,
// mkfs, fsck, mount and umount run as child processes the agent awaits (a format may take minutes);
// the operations on one PV's device mount run one at a time (upstream's nestedpendingoperations). The
// sweep after a pod's teardown also unmaps the local Block PVs no pod links any more (block-volume.ts).
import { existsSync, mkdirSync, realpathSync, rmdirSync } from "node:fs";
import { basename, join } from "node:path";
import { kv, log } from "../../log.ts";
import { unmapUnusedLocalBlockVolumes } from "./block-volume.ts";
import { execCommand, type Exec, type ExecResult } from "./exec.ts";
import { mountPointsUnder } from "./mount-points.ts";
import { nodeBlockVolumePathHandler } from "./volume-path-handler.ts";

/** upstream's LocalVolume plugin dir under <rootDir>/plugins, and util.MountsInGlobalPDPath. */
const LOCAL_DEVICE_MOUNTS = join("plugins", "kubernetes.io", "local-volume", "mounts");
/** upstream local.go defaultFSType. */
export const DEFAULT_FS_TYPE = "ext4";
/** What getDiskFormat answers for a device with a partition table: never formatted. */
export const PARTITIONED = "unknown data, probably partitions";

/** The device operations in flight, by root directory and PV: each PV's run one after another. */
const deviceOperations = new Map<string, Promise<unknown>>();

/** Runs `op` once the PV's earlier operations have ended. */
async function serialized<T>(rootDir: string, pvName: string, op: () => Promise<T>): Promise<T> {
  const target = `${rootDir}\0${pvName}`;
  const before = deviceOperations.get(target) ?? Promise.resolve();
  const run = before.then(op, op);
  const settled = run.catch(() => undefined);
  deviceOperations.set(target, settled);
  try {
    return await run;
  } finally {
    if (deviceOperations.get(target) === settled) deviceOperations.delete(target);
  }
}

/** <rootDir>/plugins/kubernetes.io/local-volume/mounts/<pv name> (upstream getGlobalLocalPath for a block device). */
export function localDeviceMountPath(rootDir: string, pvName: string): string {
  return join(rootDir, LOCAL_DEVICE_MOUNTS, pvName);
}

/**
 * upstream getDiskFormat over `blkid -p -s TYPE -s PTTYPE -o export <disk>`: "" when blkid finds
 * nothing (exit 2), the filesystem's type, or PARTITIONED for a partition table.
 */
export function diskFormat(r: ExecResult, disk: string): string {
  if (r.status === 2) return "";
  if (r.status !== 0) throw new Error(`failed to get disk format of disk ${disk}: ${(r.error?.message ?? r.output).trim() || `exit ${r.status}`}`);
  let fsType = "";
  let ptType = "";
  for (const line of r.output.split("\n")) {
    if (line.length === 0) continue;
    const cs = line.split("=");
    if (cs.length !== 2) throw new Error(`failed to get disk format of disk ${disk}: blkid returns invalid output: ${r.output}`);
    if (cs[0] === "TYPE") fsType = cs[1]!;
    else if (cs[0] === "PTTYPE") ptType = cs[1]!;
  }
  return ptType ? PARTITIONED : fsType;
}

/** upstream formatAndMountSensitive's mkfs arguments. */
export function mkfsArgs(fsType: string, device: string): string[] {
  if (fsType === "ext4" || fsType === "ext3") return ["-F", "-m0", device];
  if (fsType === "xfs") return ["-f", device];
  return [device];
}

/**
 * upstream checkAndRepairFilesystem: `fsck -a`; errors it corrected (1) and its other failures are
 * logged, errors it could not correct (4) refuse the mount.
 */
export async function checkFilesystem(device: string, exec: Exec): Promise<void> {
  const r = await exec("fsck", ["-a", device]);
  if (r.status === 0) return;
  if (r.status === 4) throw new Error(`'fsck' found errors on device ${device} but could not correct them: ${r.output}`);
  log.warn(`fsck before mount ${kv({ device, status: r.status ?? "none", output: (r.error?.message ?? r.output).trim() })}`);
}

/**
 * upstream SafeFormatAndMount.FormatAndMount: an unformatted device is formatted (never when mounted
 * read-only), a formatted one checked by fsck when read-write, then mounted with "defaults" added.
 */
export async function formatAndMount(device: string, target: string, fsType: string, options: readonly string[], exec: Exec): Promise<void> {
  const readOnly = options.includes("ro");
  const existing = diskFormat(await exec("blkid", ["-p", "-s", "TYPE", "-s", "PTTYPE", "-o", "export", device]), device);
  const type = fsType || DEFAULT_FS_TYPE;
  if (existing === "") {
    if (readOnly) throw new Error(`cannot mount unformatted disk ${device} as we are manipulating it in read-only mode`);
    log.info(`disk appears to be unformatted; formatting ${kv({ device, fsType: type })}`);
    const r = await exec(`mkfs.${type}`, mkfsArgs(type, device));
    if (r.status !== 0)
      throw new Error(`format of disk "${device}" failed: type:("${type}") target:("${target}") output:(${(r.error?.message ?? r.output).trim()})`);
  } else {
    if (existing !== type) log.warn(`disk formatted with another filesystem ${kv({ device, want: type, found: existing })}`);
    if (!readOnly) await checkFilesystem(device, exec);
  }
  const r = await exec("mount", ["-t", type, "-o", [...options, "defaults"].join(","), device, target]);
  if (r.status !== 0) throw new Error(`mount -t ${type} ${device} ${target}: ${(r.error?.message ?? r.output).trim()}`);
}

export interface LocalDeviceMount {
  rootDir: string;
  pvName: string;
  device: string;
  /** spec.local.fsType of the PV. */
  fsType?: string;
  readOnly: boolean;
  mountOptions: readonly string[];
}

/** upstream mountLocalBlockDevice: the device mounted (once) at its node-wide directory, returned. */
export function mountLocalBlockDevice(o: LocalDeviceMount, exec: Exec = execCommand): Promise<string> {
  const target = localDeviceMountPath(o.rootDir, o.pvName);
  return serialized(o.rootDir, o.pvName, () => mountOnce(o, target, exec));
}

async function mountOnce(o: LocalDeviceMount, target: string, exec: Exec): Promise<string> {
  const created = !existsSync(target);
  if (created) mkdirSync(target, { recursive: true, mode: 0o750 });
  if (mountPointsUnder(realpathSync(target)).includes(realpathSync(target))) return target;
  const fsType = o.fsType || DEFAULT_FS_TYPE;
  try {
    await formatAndMount(o.device, target, fsType, [...(o.readOnly ? ["ro"] : []), ...o.mountOptions], exec);
  } catch (e) {
    if (created) rmdirSync(target);
    throw new Error(`local: failed to mount device ${o.device} at ${target} (fstype: ${fsType}), error ${(e as Error).message}`);
  }
  log.info(`mounted local block device ${kv({ pv: o.pvName, device: o.device, target, fsType })}`);
  return target;
}

/**
 * The node-wide device mounts no pod mounts any more: those under `mountsDir` whose PV no mount point
 * under `podsDir` (…/volumes/kubernetes.io~local-volume/<pv>) names.
 */
export function unusedDeviceMounts(mountPoints: readonly string[], mountsDir: string, podsDir: string): string[] {
  const inUse = new Set<string>();
  for (const mp of mountPoints) {
    const m = mp.startsWith(`${podsDir}/`) ? /\/volumes\/kubernetes\.io~local-volume\/([^/]+)$/.exec(mp) : null;
    if (m) inUse.add(m[1]!);
  }
  return mountPoints.filter((mp) => {
    if (!mp.startsWith(`${mountsDir}/`)) return false;
    const pv = mp.slice(mountsDir.length + 1);
    return !pv.includes("/") && !inUse.has(pv);
  });
}

/** The node-wide device mounts of `rootDir` no pod mounts any more. */
function unusedLocalDevices(rootDir: string): string[] {
  const mountsDir = join(rootDir, LOCAL_DEVICE_MOUNTS);
  if (!existsSync(mountsDir)) return [];
  const realMounts = realpathSync(mountsDir);
  const podsDir = existsSync(join(rootDir, "pods")) ? realpathSync(join(rootDir, "pods")) : join(rootDir, "pods");
  return unusedDeviceMounts([...mountPointsUnder(realMounts), ...mountPointsUnder(podsDir)], realMounts, podsDir);
}

/**
 * upstream UnmountDevice for every local block device no pod uses any more: unmounted, its directory
 * removed; the Block PVs no pod links any more are unmapped first (block-volume.ts).
 */
export async function unmountUnusedLocalDevices(rootDir: string, exec: Exec = execCommand): Promise<void> {
  await unmapUnusedLocalBlockVolumes(rootDir, nodeBlockVolumePathHandler(exec));
  for (const mp of unusedLocalDevices(rootDir)) {
    await serialized(rootDir, basename(mp), async () => {
      // Looked at again in turn: a pod may have mounted it meanwhile.
      if (!unusedLocalDevices(rootDir).includes(mp)) return;
      const r = await exec("umount", [mp]);
      if (r.status !== 0) {
        log.warn(`local block device not unmounted ${kv({ path: mp, error: (r.error?.message ?? r.output).trim() })}`);
        return;
      }
      log.info(`unmounted local block device ${kv({ path: mp })}`);
      try {
        rmdirSync(mp);
      } catch (e) {
        log.warn(`local block device directory not removed ${kv({ path: mp, error: (e as Error).message })}`);
      }
    });
  }
}
