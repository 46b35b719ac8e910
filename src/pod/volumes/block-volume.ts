// Raw block volumes (volumeMode: Block, a container's volumeDevices): a claim bound to a local PV whose
// path is a block device (upstream pkg/volume/local localVolumeMapper, whose MapPodDevice is the PV's
// path; the operation generator's MapBlockVolume; kubelet_pods.go makeBlockVolumes). The pod's device
// map path <rootDir>/pods/<uid>/volumeDevices/kubernetes.io~local-volume/<pv name> is a symlink to the
// device, and each container gets that path as a CRI device at its devicePath — "mrw", or "r" when the
// claim is readOnly; the runtime resolves the link to the device node. Upstream links through a bind
// mount of the device under plugins/…/volumeDevices (a reference that holds the device); bunlet links
// straight to it. The pod's removal removes the link with its directory.
import { lstatSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { kv, log } from "../../log.ts";
import { makePodDir, podDir } from "../pod-dir.ts";
import { checkLocalPath, LOCAL_VOLUME_PLUGIN_DIR, MountDeviceError } from "./local-volume.ts";
import type { ClaimedVolume } from "./persistent-volume.ts";

/** upstream GetPodDeviceMapPath joined with the volume name. */
export function podDeviceMapPath(rootDir: string, podUid: string, pvName: string): string {
  return join(podDir(rootDir, podUid), "volumeDevices", LOCAL_VOLUME_PLUGIN_DIR, pvName);
}

/** Maps a Block claim's PV for the pod (once): the link to its device, returned. */
export function mapBlockVolume(rootDir: string, podUid: string, c: ClaimedVolume): string {
  if (c.source.plugin !== "kubernetes.io/local-volume")
    throw new Error(`PV ${c.pvName} has volumeMode Block: bunlet maps raw block volumes of local PVs only, not ${c.source.plugin}`);
  const device = c.source.local.path;
  if (checkLocalPath(device) !== "block") throw new MountDeviceError(`local volume ${device} of PV ${c.pvName} is not a block device`);
  makePodDir(rootDir, podUid, "volumeDevices", LOCAL_VOLUME_PLUGIN_DIR);
  const link = podDeviceMapPath(rootDir, podUid, c.pvName);
  let current: string | undefined;
  try {
    current = lstatSync(link).isSymbolicLink() ? readlinkSync(link) : "";
  } catch {}
  if (current === device) return link;
  if (current !== undefined) rmSync(link, { force: true });
  symlinkSync(device, link);
  log.info(`mapped block volume ${kv({ pv: c.pvName, device, link })}`);
  return link;
}

/** A CRI device of a container (cri Device). */
export interface BlockDevice {
  containerPath: string;
  hostPath: string;
  permissions: string;
}

/**
 * upstream makeBlockVolumes: each of the container's volumeDevices as the pod's link to its device.
 * `claim` gives a volume's resolved claim and whether the pod's volume is readOnly; a device whose
 * volume is not a mapped Block claim fails the container's config, as upstream.
 */
export function blockDevices(
  rootDir: string,
  podUid: string,
  container: { name: string; volumeDevices?: { name: string; devicePath: string }[] },
  claim: (volumeName: string) => { claimed: ClaimedVolume; readOnly: boolean } | undefined,
): BlockDevice[] {
  return (container.volumeDevices ?? []).map((d) => {
    if (!isAbsolute(d.devicePath)) throw new Error(`error DevicePath \`${d.devicePath}\` must be an absolute path`);
    const c = claim(d.name);
    if (c?.claimed.volumeMode !== "Block") throw new Error(`cannot find volume "${d.name}" to pass into container "${container.name}"`);
    return { containerPath: d.devicePath, hostPath: podDeviceMapPath(rootDir, podUid, c.claimed.pvName), permissions: c.readOnly ? "r" : "mrw" };
  });
}
