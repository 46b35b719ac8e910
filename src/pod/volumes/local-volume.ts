// A local PersistentVolume set up for a pod (upstream pkg/volume/local local.go: MountDevice's file
// type check — a block device is formatted if need be and mounted node-wide first, local-device.ts —
// then SetUpAt): the PV's directory (or the block device's mount) is bind-mounted at
// <rootDir>/pods/<uid>/volumes/kubernetes.io~local-volume/<pv name> — read-only when the pod's claim or
// the PV's mountOptions say so — and, on the first mount of the PV on the node and only when it is
// writable, given the pod's fsGroup (SetVolumeOwnership, honouring fsGroupChangePolicy OnRootMismatch).
// A mount already there is kept: a container restart or a bunlet restart changes nothing. The pod's
// removal unmounts it with the rest of the pod's directory (kuberuntime/empty-dir.ts tearDownPodDir).
// Asynchronous, as a device may be formatted first: the pod's volume set-up awaits it before the
// synchronous set-up of its other volumes (as CSI volumes are published beforehand).
import { realpathSync, statSync, type Stats } from "node:fs";
import { join } from "node:path";
import { MS_BIND, MS_RDONLY, MS_REMOUNT, mount, UMOUNT_NOFOLLOW, umount2 } from "../../../ffi/fs.ts";
import { kv, log } from "../../log.ts";
import { makePodDir, podDir } from "../pod-dir.ts";
import { getFileType } from "./file-type.ts";
import { mountLocalBlockDevice } from "./local-device.ts";
import { mountPointsUnder } from "./mount-points.ts";
import { MountDeviceError } from "./operation-error.ts";
import { setVolumeOwnership } from "./ownership.ts";

/** upstream's escaped plugin directory name (utilstrings.EscapeQualifiedName("kubernetes.io/local-volume")). */
export const LOCAL_VOLUME_PLUGIN_DIR = "kubernetes.io~local-volume";

export interface LocalVolumeSetUp {
  rootDir: string;
  podUid: string;
  pvName: string;
  /** spec.local.path of the PV. */
  path: string;
  /** spec.local.fsType of the PV: a block device's filesystem (ext4 when unset). */
  fsType?: string;
  readOnly: boolean;
  mountOptions: readonly string[];
  fsGroup?: number;
  fsGroupChangePolicy?: string;
}

/** upstream MountDevice's check of the local path: an existing directory or block device. */
export function checkLocalPath(path: string, stat: (p: string) => Stats = statSync): "directory" | "block" {
  let type: string;
  try {
    type = getFileType(path, stat);
  } catch (e) {
    throw new MountDeviceError((e as Error).message);
  }
  if (type === "Directory") return "directory";
  if (type === "BlockDevice") return "block";
  throw new MountDeviceError("only directory and block device are supported");
}

/** The directory of the pod's mount of a local PV (upstream's volume path for the pod). */
export const localVolumePodPath = (rootDir: string, podUid: string, pvName: string) =>
  join(podDir(rootDir, podUid), "volumes", LOCAL_VOLUME_PLUGIN_DIR, pvName);

/**
 * upstream requiresPermissionChange (volume_linux.go), for OnRootMismatch: the root directory already
 * has the group, the group permissions (rw or r, and x) and setgid.
 */
export function rootMatchesFsGroup(st: { gid: number; mode: number; isDirectory(): boolean }, fsGroup: number, readOnly: boolean): boolean {
  if (st.gid !== fsGroup || !st.isDirectory()) return false;
  const want = (readOnly ? 0o440 : 0o660) | 0o110;
  return (st.mode & want) === want && (st.mode & 0o2000) !== 0;
}

/** The other pods' mounts of the PV (upstream filterPodMounts over GetMountRefs: same PV, under the pods directory). */
export function otherPodMounts(mountPoints: readonly string[], podsDir: string, podUid: string, pvName: string): string[] {
  const suffix = `/volumes/${LOCAL_VOLUME_PLUGIN_DIR}/${pvName}`;
  return mountPoints.filter((mp) => mp.startsWith(`${podsDir}/`) && mp.endsWith(suffix) && !mp.startsWith(`${podsDir}/${podUid}/`));
}

/** The block device's node-wide mount (upstream MountDevice): its failures are MountDevice's. */
async function mountBlockDevice(o: LocalVolumeSetUp): Promise<string> {
  try {
    return await mountLocalBlockDevice({
      rootDir: o.rootDir,
      pvName: o.pvName,
      device: o.path,
      fsType: o.fsType,
      readOnly: o.readOnly,
      mountOptions: o.mountOptions,
    });
  } catch (e) {
    throw new MountDeviceError((e as Error).message);
  }
}

/** Mounts the local PV for the pod (once) and returns the directory the containers mount. */
export async function setUpLocalVolume(o: LocalVolumeSetUp): Promise<string> {
  const kind = checkLocalPath(o.path);
  const created = makePodDir(o.rootDir, o.podUid, "volumes", LOCAL_VOLUME_PLUGIN_DIR, o.pvName);
  // mountinfo names canonical paths: a rootDir reached through a symlink must still find its mounts.
  const dir = realpathSync(created);
  if (mountPointsUnder(dir).includes(dir)) return created;
  const source = kind === "block" ? await mountBlockDevice(o) : o.path;
  // Looked at after the device's mount: another sync of this pod may have bind-mounted it meanwhile.
  if (mountPointsUnder(dir).includes(dir)) return created;
  const podsDir = realpathSync(join(o.rootDir, "pods"));
  const refs = otherPodMounts(mountPointsUnder(podsDir), podsDir, o.podUid, o.pvName);
  const readOnly = o.readOnly || o.mountOptions.includes("ro");
  mount(source, dir, null, MS_BIND);
  if (readOnly) {
    try {
      // A bind mount takes MS_RDONLY only on a remount (what mount(8) does for "bind,ro").
      mount("none", dir, null, MS_REMOUNT | MS_BIND | MS_RDONLY);
    } catch (e) {
      umount2(dir, UMOUNT_NOFOLLOW);
      throw e;
    }
  }
  log.info(`mounted local volume ${kv({ pv: o.pvName, path: o.path, source, target: dir, readOnly })}`);
  // upstream: the owner is written once, on the PV's first mount on the node, and never on a read-only one.
  if (!readOnly && refs.length === 0 && o.fsGroup !== undefined) {
    const skip = o.fsGroupChangePolicy === "OnRootMismatch" && rootMatchesFsGroup(statSync(dir), o.fsGroup, false);
    if (!skip) setVolumeOwnership(dir, o.fsGroup);
  }
  return created;
}
