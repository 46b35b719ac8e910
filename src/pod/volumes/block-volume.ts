// A raw block PersistentVolume mapped for a pod (upstream pkg/volume/local localVolumeMapper
// MapPodDevice, pkg/volume/util MapBlockVolume, volumepathhandler MapDevice without a bind mount): the
// local PV's path must be a block device; the pod gets a symlink to it at
// <rootDir>/pods/<uid>/volumeDevices/kubernetes.io~local-volume/<pv name>, which the container runtime
// resolves when it creates the device node at the container's devicePath (CRI Device, kuberuntime
// makeDevices). bunlet keeps no global map path nor an open descriptor on the device (upstream's
// bind mount under plugins/…/volumeDevices and its loop device "fd lock"): the device is looked up
// again at each container start. The pod's volume teardown deletes the links (unmapPodDevices).
import { mkdirSync, readlinkSync, rmSync, statSync, symlinkSync, unlinkSync, type Stats } from "node:fs";
import { isAbsolute, join } from "node:path";
import { kv, log } from "../../log.ts";
import { DATA_DIR_MODE, podDir } from "../pod-dir.ts";
import { getFileType, type FileType } from "./file-type.ts";
import { MapVolumeError } from "./operation-error.ts";

/** upstream DefaultKubeletVolumeDevicesDirName: a pod's block volumes live under pods/<uid>/volumeDevices. */
export const VOLUME_DEVICES_DIR = "volumeDevices";

/** upstream GetPodVolumeDeviceDir: the pod's directory of a plugin's block volume links. */
export const podVolumeDeviceDir = (rootDir: string, podUid: string, pluginDir: string) => join(podDir(rootDir, podUid), VOLUME_DEVICES_DIR, pluginDir);

/** The local path checked as a block device (upstream's local plugin maps what the PV names; a missing device fails the map). */
export function checkBlockDevicePath(path: string, stat: (p: string) => Stats = statSync): void {
  if (!isAbsolute(path)) throw new MapVolumeError("MapPodDevice", `local volume path ${path} must be an absolute path`);
  let type: FileType;
  try {
    type = getFileType(path, stat);
  } catch (e) {
    throw new MapVolumeError("MapPodDevice", (e as Error).message);
  }
  if (type !== "BlockDevice") throw new MapVolumeError("MapPodDevice", `local volume ${path} is not a block device: a Block PV's path must be one`);
}

export interface BlockVolumeMap {
  rootDir: string;
  podUid: string;
  /** The plugin's escaped directory name (kubernetes.io~local-volume). */
  pluginDir: string;
  /** upstream's volume spec name: the PV's name. */
  pvName: string;
  /** The device on the host (a local PV's path). */
  devicePath: string;
}

/** The current target of a symlink, or undefined when there is none (or no link). */
function linkTarget(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/**
 * upstream MapBlockVolume's pod link (MapDevice, bindMount false): the symlink to the device, made once
 * (a link to another path is replaced); returns its path, the CRI Device's host_path.
 */
export function mapPodDevice(m: BlockVolumeMap, stat: (p: string) => Stats = statSync): string {
  checkBlockDevicePath(m.devicePath, stat);
  const dir = podVolumeDeviceDir(m.rootDir, m.podUid, m.pluginDir);
  const link = join(dir, m.pvName);
  const current = linkTarget(link);
  if (current === m.devicePath) return link;
  try {
    mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
    if (current !== undefined) unlinkSync(link);
    symlinkSync(m.devicePath, link);
  } catch (e) {
    throw new MapVolumeError(
      "MapPodDevice",
      `blkUtil.MapDevice failed. devicePath: ${m.devicePath}, podVolumeMapPath:${dir}, volumeMapName: ${m.pvName}: ${(e as Error).message}`,
    );
  }
  log.info(`mapped block volume ${kv({ pv: m.pvName, device: m.devicePath, link })}`);
  return link;
}

/** upstream UnmapBlockVolume's pod side for every block volume of the pod: its device links go (never the devices they name). */
export function unmapPodDevices(rootDir: string, podUid: string): void {
  rmSync(join(podDir(rootDir, podUid), VOLUME_DEVICES_DIR), { recursive: true, force: true });
}
