// Volumes reconstructed from a pod's directory (upstream pkg/kubelet/volumemanager/reconciler
// reconstruct_common.go getVolumesFromPodDir and reconstructVolume): every
// pods/<uid>/volumes/<plugin>/<name> (and volumeDevices/<plugin>/<name>) is a volume of the pod, and
// its plugin — from the escaped directory name — says how it is torn down without the pod's spec:
// a CSI volume through its driver from the vol_data.json beside its mount (a raw block one from the
// vol_data.json of its global map path), a tmpfs (emptyDir of medium Memory, secret, projected) or a bind
// mount (local PV) by unmounting it, a local raw block volume by removing its device link, after which
// its global map file and loop device go with the PVs no pod links (block-volume.ts). A volume whose
// plugin bunlet lacks, or a CSI one without its vol_data.json, cannot be reconstructed (upstream's
// "Could not construct volume information").

/** upstream podVolume: one volume directory found on disk. */
export interface PodVolume {
  podUid: string;
  volumeSpecName: string;
  /** <podDir>/volumes/<escaped plugin>/<name> (or volumeDevices/…). */
  volumePath: string;
  /** The unescaped plugin name (upstream UnescapeQualifiedName). */
  pluginName: string;
  volumeMode: "Filesystem" | "Block";
}

/** How a reconstructed volume is torn down. */
export type TearDownKind = "csi" | "unmount" | "unmap";

export type Reconstruction = { ok: true; kind: TearDownKind } | { ok: false; error: string };

/** upstream DefaultKubeletVolumesDirName and DefaultKubeletVolumeDevicesDirName. */
export const VOLUME_DIRS = { Filesystem: "volumes", Block: "volumeDevices" } as const;

/** upstream utilstrings.UnescapeQualifiedName. */
export const unescapeQualifiedName = (s: string) => s.replaceAll("~", "/");

/** The plugins bunlet sets up in a pod's volumes directory whose volumes are a mount (or nothing) there. */
const UNMOUNT_PLUGINS = new Set([
  "kubernetes.io/empty-dir",
  "kubernetes.io/secret",
  "kubernetes.io/configmap",
  "kubernetes.io/projected",
  "kubernetes.io/downward-api",
  "kubernetes.io/local-volume",
]);

/**
 * upstream reconstructVolume, the part that needs no driver: the teardown a volume found on disk gets,
 * or why it cannot be reconstructed. `hasVolumeData`: a CSI volume's vol_data.json is there.
 */
export function reconstructVolume(v: PodVolume, hasVolumeData: boolean): Reconstruction {
  if (v.volumeMode === "Block") {
    if (v.pluginName === "kubernetes.io/local-volume") return { ok: true, kind: "unmap" };
    // upstream ConstructBlockVolumeSpec reads the global map path's vol_data.json: the CSI teardown does.
    if (v.pluginName === "kubernetes.io/csi") return { ok: true, kind: "csi" };
    return { ok: false, error: `could not find block volume plugin "${v.pluginName}" (spec.Name: "${v.volumeSpecName}") pod "${v.podUid}"` };
  }
  if (v.pluginName === "kubernetes.io/csi") {
    if (hasVolumeData) return { ok: true, kind: "csi" };
    return { ok: false, error: `kubernetes.io/csi: plugin.ConstructVolumeSpec failed loading volume data using [${v.volumePath}]: no vol_data.json` };
  }
  if (UNMOUNT_PLUGINS.has(v.pluginName)) return { ok: true, kind: "unmount" };
  return { ok: false, error: `no volume plugin matched name: ${v.pluginName}` };
}

/** What the teardown of one orphaned pod's volumes does. */
export interface VolumeTearDownPlan {
  /** Whether the CSI volumes (those with a vol_data.json) go to their drivers. */
  csi: boolean;
  /** Mount points to unmount, deepest first: under the volumes of unmount plugins only. */
  unmount: string[];
  /** The local raw block volumes' device links to remove (upstream UnmapBlockVolume's pod side). */
  unmap: string[];
  /** Whether a local PV's bind mount or device link is among them (its node-wide device mount or global map file may then go too). */
  localVolumes: boolean;
  /** Volumes that could not be reconstructed and are still mounted: left mounted (upstream cleanupMounts fails for them). */
  failed: { volume: PodVolume; error: string; mounts: string[] }[];
}

/**
 * The teardown of a pod's volumes, from the volumes on disk, whether each CSI one has its vol_data.json,
 * and the mount points below the pod's directory (canonical, as mountinfo lists them). A mount point is
 * unmounted only when it lies below a volume of an unmount plugin, so nothing outside the pod's
 * volumes — let alone outside bunlet's root directory — is ever unmounted.
 */
export function volumeTearDownPlan(
  volumes: readonly PodVolume[],
  hasVolumeData: (v: PodVolume) => boolean,
  mountPoints: readonly string[],
): VolumeTearDownPlan {
  const plan: VolumeTearDownPlan = { csi: false, unmount: [], unmap: [], localVolumes: false, failed: [] };
  const under = (dir: string) => mountPoints.filter((mp) => mp === dir || mp.startsWith(`${dir}/`));
  for (const v of volumes) {
    const r = reconstructVolume(v, hasVolumeData(v));
    const mounts = under(v.volumePath);
    if (!r.ok) {
      plan.failed.push({ volume: v, error: r.error, mounts });
      continue;
    }
    if (r.kind === "csi") plan.csi = true;
    if (r.kind === "unmap") {
      plan.unmap.push(v.volumePath);
      plan.localVolumes = true;
    }
    if (r.kind !== "unmount" || mounts.length === 0) continue;
    plan.unmount.push(...mounts);
    if (v.pluginName === "kubernetes.io/local-volume") plan.localVolumes = true;
  }
  plan.unmount.sort((a, b) => b.length - a.length);
  return plan;
}
