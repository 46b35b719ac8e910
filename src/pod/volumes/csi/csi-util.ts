// Where the kubelet's csi plugin keeps a volume on the node, and what it writes beside it (upstream
// pkg/volume/csi csi_util.go saveVolumeData/loadVolumeData, csi_attacher.go makeDeviceMountPath,
// csi_mounter.go GetPath): a staged volume at
// <rootDir>/plugins/kubernetes.io/csi/<driver>/<sha256(volumeHandle)>/globalmount, a published one at
// <rootDir>/pods/<uid>/volumes/kubernetes.io~csi/<volume>/mount, each with a vol_data.json in the
// parent directory naming the driver and the volume handle, which teardown (also after a restart) reads.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";

/** upstream CSIPluginName. */
export const CSI_PLUGIN_NAME = "kubernetes.io/csi";
/** The escaped plugin directory name in a pod's volumes directory (EscapeQualifiedName). */
export const CSI_POD_PLUGIN_DIR = "kubernetes.io~csi";
/** upstream volDataFileName. */
export const VOL_DATA_FILE = "vol_data.json";

/** upstream utilstrings.EscapeQualifiedName: a "/" in a name becomes "~". */
export const escapeQualifiedName = (s: string) => s.replaceAll("/", "~");

const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

/** upstream makeDeviceMountPath: the staging target path of a driver's volume on this node. */
export function deviceMountPath(rootDir: string, driver: string, volumeHandle: string): string {
  return join(rootDir, "plugins", CSI_PLUGIN_NAME, escapeQualifiedName(driver), sha256Hex(volumeHandle), "globalmount");
}

/** The pod's directory of its CSI volumes. */
export const podCSIVolumesDir = (rootDir: string, podUid: string) => join(rootDir, "pods", podUid, "volumes", CSI_POD_PLUGIN_DIR);

/** upstream csiMountMgr.GetPath: the publish target path (specVolID: the PV's name, or the inline volume's). */
export function podMountPath(rootDir: string, podUid: string, specVolID: string): string {
  return join(podCSIVolumesDir(rootDir, podUid), escapeQualifiedName(specVolID), "mount");
}

/** upstream getAttachmentName: the VolumeAttachment of a volume handle, driver and node. */
export const attachmentName = (volumeHandle: string, driver: string, nodeName: string) => `csi-${sha256Hex(`${volumeHandle}${driver}${nodeName}`)}`;

/** upstream makeVolumeHandle: the volume ID of an inline ephemeral volume. */
export const ephemeralVolumeHandle = (podUid: string, volumeName: string) => `csi-${sha256Hex(`${podUid}${volumeName}`)}`;

/** vol_data.json as upstream writes it (volDataKey's keys); the device's file holds the first three. */
export const volumeDataSchema = z.looseObject({
  specVolumeID: z.string(),
  volumeHandle: z.string().min(1),
  driverName: z.string().min(1),
  nodeName: z.string().optional(),
  attachmentID: z.string().optional(),
  volumeLifecycleMode: z.enum(["Persistent", "Ephemeral"]).optional(),
});
export type VolumeData = z.infer<typeof volumeDataSchema>;

/** upstream saveVolumeData: vol_data.json in dir (made, 0750, when missing). */
export function saveVolumeData(dir: string, data: VolumeData): void {
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  writeFileSync(join(dir, VOL_DATA_FILE), JSON.stringify(data));
}

/** upstream loadVolumeData: the vol_data.json in dir, or undefined when there is none; throws on a bad one. */
export function loadVolumeData(dir: string): VolumeData | undefined {
  const file = join(dir, VOL_DATA_FILE);
  if (!existsSync(file)) return undefined;
  const parsed = volumeDataSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
  if (!parsed.success) throw new Error(`${file}: not a CSI volume's data: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

/** The directory holding a mount path's vol_data.json. */
export const volumeDataDir = (mountPath: string) => dirname(mountPath);
