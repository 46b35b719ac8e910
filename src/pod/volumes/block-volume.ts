// A raw block volume mapped for a pod (upstream pkg/volume/util MapBlockVolume and UnmapBlockVolume,
// operation_generator's UnmapDevice, and pkg/volume/local localVolumeMapper): the pod gets a symlink to
// the device at <rootDir>/pods/<uid>/volumeDevices/<plugin>/<name>, which the container runtime resolves
// when it creates the device node at the container's devicePath (CRI Device, kuberuntime makeDevices);
// the device is bind-mounted on the file <globalMapPath>/<pod UID> and a loop device attached to that
// file, the "fd lock" that keeps the device open while the pod runs (volume-path-handler.ts). A local
// PV's global map path is <rootDir>/plugins/kubernetes.io~local-volume/volumeDevices/<pv name>; its
// path must be a block device. Teardown from the disk alone: the pod's links go with its volumes
// (unmapPodDevices), then every global map file whose pod has no link left is unlocked and unmounted,
// and a global map path with no pod left is removed (unmapUnusedLocalBlockVolumes).
import { existsSync, lstatSync, readdirSync, realpathSync, rmSync, statSync, type Stats } from "node:fs";
import { isAbsolute, join } from "node:path";
import { kv, log } from "../../log.ts";
import { podDir } from "../pod-dir.ts";
import { getFileType, type FileType } from "./file-type.ts";
import { MapVolumeError } from "./operation-error.ts";
import { nodeBlockVolumePathHandler, type BlockVolumePathHandler } from "./volume-path-handler.ts";

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

/** upstream GetVolumeDevicePluginDir of the local plugin (its escaped name): the global map paths' parent. */
const LOCAL_VOLUME_DEVICES = join("plugins", "kubernetes.io~local-volume", "volumeDevices");
/** The local plugin's escaped directory name under a pod's volumeDevices. */
const LOCAL_POD_PLUGIN_DIR = "kubernetes.io~local-volume";

/** upstream localVolume.GetGlobalMapPath: <rootDir>/plugins/kubernetes.io~local-volume/volumeDevices/<pv name>. */
export const localGlobalMapPath = (rootDir: string, pvName: string) => join(rootDir, LOCAL_VOLUME_DEVICES, pvName);

/** What upstream's MapBlockVolume takes: the device, the global map path and the pod's link. */
export interface BlockVolumeMapping {
  /** The device (upstream's devicePath after EvalHostSymlinks). */
  devicePath: string;
  globalMapPath: string;
  /** The pod's plugin directory under volumeDevices (upstream podVolumeMapPath). */
  podVolumeMapPath: string;
  /** The link's name there: the volume spec's name. */
  volumeMapName: string;
  podUid: string;
}

/**
 * upstream MapBlockVolume: the pod's link to the device, the device bind-mounted on
 * <globalMapPath>/<pod UID>, and the loop device on that file (the fd lock). The link is made first, so
 * that a global map file is never seen without the link that keeps it (unmapUnusedLocalBlockVolumes).
 */
export async function mapBlockVolume(blk: BlockVolumePathHandler, m: BlockVolumeMapping): Promise<void> {
  const fail = (what: string, e: unknown) => {
    throw new MapVolumeError("MapBlockVolume", `${what}: ${(e as Error).message}`);
  };
  await blk
    .mapSymlinkDevice(m.devicePath, m.podVolumeMapPath, m.volumeMapName)
    .catch((e) =>
      fail(
        `blkUtil.MapDevice failed. devicePath: ${m.devicePath}, podVolumeMapPath:${m.podVolumeMapPath}, volumeMapName: ${m.volumeMapName}, bindMount: false`,
        e,
      ),
    );
  await blk
    .mapBindMountDevice(m.devicePath, m.globalMapPath, m.podUid)
    .catch((e) => fail(`blkUtil.MapDevice failed. devicePath: ${m.devicePath}, globalMapPath:${m.globalMapPath}, podUID: ${m.podUid}, bindMount: true`, e));
  await blk
    .attachFileDevice(join(m.globalMapPath, m.podUid))
    .catch((e) => fail(`blkUtil.AttachFileDevice failed. globalMapPath:${m.globalMapPath}, podUID: ${m.podUid}`, e));
}

/** upstream UnmapBlockVolume: the fd lock released, the pod's link removed, <globalMapPath>/<pod UID> unmounted and removed. */
export async function unmapBlockVolume(blk: BlockVolumePathHandler, m: Omit<BlockVolumeMapping, "devicePath">): Promise<void> {
  const fail = (what: string, e: unknown) => {
    throw new Error(`UnmapVolume.UnmapBlockVolume failed: ${what}: ${(e as Error).message}`);
  };
  await blk
    .detachFileDevice(join(m.globalMapPath, m.podUid))
    .catch((e) => fail(`blkUtil.DetachFileDevice failed. globalUnmapPath:${m.globalMapPath}, podUID: ${m.podUid}`, e));
  await blk
    .unmapSymlinkDevice(m.podVolumeMapPath, m.volumeMapName)
    .catch((e) => fail(`blkUtil.UnmapDevice failed. podDeviceUnmapPath:${m.podVolumeMapPath}, volumeMapName: ${m.volumeMapName}`, e));
  await blk
    .unmapBindMountDevice(m.globalMapPath, m.podUid)
    .catch((e) => fail(`blkUtil.UnmapDevice failed. globalUnmapPath:${m.globalMapPath}, podUID: ${m.podUid}, bindMount: true`, e));
}

/** upstream UnmapDevice's check: no pod's bind mount left under the global map path (else the error it names). */
export async function checkNoDeviceRefs(blk: BlockVolumePathHandler, globalMapPath: string): Promise<void> {
  const refs = await blk.getDeviceBindMountRefs(globalMapPath);
  if (refs.length > 0) throw new Error(`UnmapDevice failed: the device "${globalMapPath}" is still referenced from other Pods [${refs.join(" ")}]`);
}

export interface LocalBlockVolumeMap {
  rootDir: string;
  podUid: string;
  /** upstream's volume spec name: the PV's name. */
  pvName: string;
  /** The device on the host (a local PV's path). */
  devicePath: string;
}

/**
 * upstream GenerateMapVolumeFunc for a local Block PV: the path checked as a block device, its symlinks
 * resolved, then MapBlockVolume (made again at each sync: each step keeps what is there). Returns the pod's
 * link, the CRI Device's host path.
 */
export async function mapPodDevice(
  m: LocalBlockVolumeMap,
  blk: BlockVolumePathHandler = nodeBlockVolumePathHandler(),
  stat: (p: string) => Stats = statSync,
): Promise<string> {
  checkBlockDevicePath(m.devicePath, stat);
  let devicePath: string;
  try {
    devicePath = realpathSync(m.devicePath);
  } catch (e) {
    throw new MapVolumeError("MapBlockVolume", `MapVolume.EvalHostSymlinks failed: ${(e as Error).message}`);
  }
  const podVolumeMapPath = podVolumeDeviceDir(m.rootDir, m.podUid, LOCAL_POD_PLUGIN_DIR);
  const globalMapPath = localGlobalMapPath(m.rootDir, m.pvName);
  const link = join(podVolumeMapPath, m.pvName);
  const mapped = lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() === true;
  await mapBlockVolume(blk, { devicePath, globalMapPath, podVolumeMapPath, volumeMapName: m.pvName, podUid: m.podUid });
  if (!mapped) log.info(`MapVolume.MapPodDevice succeeded ${kv({ pv: m.pvName, device: devicePath, globalMapPath, link })}`);
  return link;
}

/** upstream MapBlockVolume's pod side undone for every block volume of the pod: its device links go (never the devices they name). */
export function unmapPodDevices(rootDir: string, podUid: string): void {
  rmSync(join(podDir(rootDir, podUid), VOLUME_DEVICES_DIR), { recursive: true, force: true });
}

/** The global map files of the local plugin whose pod has no link to the volume any more: [pv name, pod UID]. */
export function unusedLocalBlockMaps(rootDir: string): [string, string][] {
  const dir = join(rootDir, LOCAL_VOLUME_DEVICES);
  const out: [string, string][] = [];
  const pvs = existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()) : [];
  for (const pv of pvs.map((e) => e.name).sort()) {
    for (const uid of readdirSync(join(dir, pv)).sort()) {
      const link = join(podVolumeDeviceDir(rootDir, uid, LOCAL_POD_PLUGIN_DIR), pv);
      if (lstatSync(link, { throwIfNoEntry: false }) === undefined) out.push([pv, uid]);
    }
  }
  return out;
}

/**
 * upstream UnmapVolume and UnmapDevice for the local Block PVs no pod links any more, from the disk alone
 * (after a pod's teardown, or a restart): each such pod's fd lock released and its global map file
 * unmounted, then a global map path no pod maps removed. Failures are logged; the next teardown retries.
 */
export async function unmapUnusedLocalBlockVolumes(rootDir: string, blk: BlockVolumePathHandler = nodeBlockVolumePathHandler()): Promise<void> {
  for (const [pvName, podUid] of unusedLocalBlockMaps(rootDir)) {
    const globalMapPath = localGlobalMapPath(rootDir, pvName);
    const podVolumeMapPath = podVolumeDeviceDir(rootDir, podUid, LOCAL_POD_PLUGIN_DIR);
    try {
      await unmapBlockVolume(blk, { globalMapPath, podVolumeMapPath, volumeMapName: pvName, podUid });
      log.info(`UnmapVolume succeeded ${kv({ pv: pvName, podUID: podUid, globalMapPath })}`);
      if ((await blk.getDeviceBindMountRefs(globalMapPath)).length > 0) continue;
      await blk.removeMapPath(globalMapPath);
      log.info(`UnmapDevice succeeded ${kv({ pv: pvName, globalMapPath })}`);
    } catch (e) {
      log.warn(`local block volume not unmapped ${kv({ pv: pvName, podUID: podUid, error: (e as Error).message })}`);
    }
  }
}
