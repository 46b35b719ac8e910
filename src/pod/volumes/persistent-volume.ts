// A pod's persistentVolumeClaim volume resolved to the PersistentVolume behind it (upstream
// pkg/kubelet/volumemanager/populator desired_state_of_world_populator.go createVolumeSpec,
// getPVCExtractPV, getPVSpec; the plugin lookup of volume.VolumePluginMgr FindPluginBySpec). Pure: the
// claim and the volume are fetched beforehand (src/pod/apiobjects/persistent-volumes.ts) and checked
// here, with upstream's error texts. bunlet mounts the PV sources of a bare-metal node's provisioners
// (local-path-provisioner, static local PVs): hostPath (pkg/volume/hostpath) and local (pkg/volume/local),
// and the PVs of CSI drivers (pkg/volume/csi, staged and published by csi/csi-mounter.ts); a Block PV
// (volumeMode Block, a container's volumeDevices) is mapped as a raw device (block-volume.ts).
import { z } from "zod";
import { csiPersistentVolumeSourceSchema, type CSIPersistentVolumeSource } from "./csi/volume-spec.ts";

/** The part of a core/v1 PersistentVolumeClaim the kubelet reads. */
export const persistentVolumeClaimSchema = z.looseObject({
  metadata: z.looseObject({
    name: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().default(""),
    ownerReferences: z.array(z.looseObject({ uid: z.string().default(""), controller: z.boolean().nullish() })).nullish(),
    deletionTimestamp: z.string().optional(),
    finalizers: z.array(z.string()).optional(),
    resourceVersion: z.string().optional(),
  }),
  spec: z.looseObject({ volumeName: z.string().optional() }).default({}),
  status: z
    .looseObject({
      phase: z.string().optional(),
      capacity: z.record(z.string(), z.string()).nullish(),
      allocatedResourceStatuses: z.record(z.string(), z.string()).nullish(),
      conditions: z.array(z.looseObject({ type: z.string().optional() })).nullish(),
    })
    .default({}),
});
export type PersistentVolumeClaimObject = z.infer<typeof persistentVolumeClaimSchema>;

/** The part of a core/v1 PersistentVolume the kubelet reads; other sources are kept as they come. */
export const persistentVolumeSchema = z.looseObject({
  metadata: z.looseObject({ name: z.string().default("") }),
  spec: z
    .looseObject({
      claimRef: z.looseObject({ uid: z.string().optional() }).nullish(),
      hostPath: z.looseObject({ path: z.string(), type: z.string().optional() }).optional(),
      local: z.looseObject({ path: z.string(), fsType: z.string().optional() }).optional(),
      csi: csiPersistentVolumeSourceSchema.optional(),
      accessModes: z.array(z.string()).optional(),
      volumeMode: z.string().optional(),
      mountOptions: z.array(z.string()).optional(),
      capacity: z.record(z.string(), z.string()).nullish(),
    })
    .default({}),
});
export type PersistentVolumeObject = z.infer<typeof persistentVolumeSchema>;

/** upstream util.PVCProtectionFinalizer. */
export const PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection";

/** The source fields of core/v1 PersistentVolumeSpec (PersistentVolumeSource), as the API names them. */
const PV_SOURCES = [
  "gcePersistentDisk",
  "awsElasticBlockStore",
  "hostPath",
  "glusterfs",
  "nfs",
  "rbd",
  "iscsi",
  "cinder",
  "cephfs",
  "fc",
  "flocker",
  "flexVolume",
  "azureFile",
  "vsphereVolume",
  "quobyte",
  "azureDisk",
  "photonPersistentDisk",
  "portworxVolume",
  "scaleIO",
  "local",
  "storageos",
  "csi",
] as const;

/** A PV source bunlet mounts, with its upstream plugin name. */
export type PersistentVolumeSource =
  | { plugin: "kubernetes.io/host-path"; hostPath: { path: string; type?: string } }
  | { plugin: "kubernetes.io/local-volume"; local: { path: string; fsType?: string } }
  | { plugin: "kubernetes.io/csi"; csi: CSIPersistentVolumeSource; accessModes: string[] };

/** core/v1 PersistentVolumeMode. */
export type PersistentVolumeMode = "Filesystem" | "Block";

/** A persistentVolumeClaim volume, resolved: what a volume set-up needs. */
export interface ClaimedVolume {
  /** The PV's name: upstream's volume spec name, which mount errors and the local volume's directory use. */
  pvName: string;
  source: PersistentVolumeSource;
  /** The PV's mountOptions (a local volume's bind mount honours "ro"). */
  mountOptions: string[];
  /** The PV's volumeMode: a Block volume is mapped as a device (volumeDevices), never mounted. */
  volumeMode: PersistentVolumeMode;
  /** The claim as read (its status drives a node expansion, resize-util.ts). */
  claim?: PersistentVolumeClaimObject;
  /** The PV's spec.capacity.storage. */
  capacity?: string;
  /** The PV's accessModes. */
  accessModes?: string[];
}

/** upstream's refusal of a second pod on the node mounting a ReadWriteOncePod volume (operation_generator). */
export const READ_WRITE_ONCE_POD_IN_USE = "volume uses the ReadWriteOncePod access mode and is already in use by another pod";

/** upstream's ReadWriteOncePod enforcement on the node: only when it is the PV's one access mode (the pod's intent is unknown otherwise). */
export const isReadWriteOncePodOnly = (v: ClaimedVolume) => v.accessModes?.length === 1 && v.accessModes[0] === "ReadWriteOncePod";

/** How the pod's containers use a volume (upstream GetPodVolumeNames: mounts and devices). */
export interface VolumeUsage {
  mounted: boolean;
  device: boolean;
}

/**
 * upstream createVolumeSpec's volumeMode checks: a volume in volumeMounts must be Filesystem, one in
 * volumeDevices Block (an unset mode is Filesystem).
 */
export function checkVolumeMode(podVolumeName: string, mode: string, usage: VolumeUsage): PersistentVolumeMode {
  if (usage.mounted && mode !== "Filesystem") throw new Error(`volume ${podVolumeName} has volumeMode ${mode}, but is specified in volumeMounts`);
  if (usage.device && mode !== "Block") throw new Error(`volume ${podVolumeName} has volumeMode ${mode}, but is specified in volumeDevices`);
  if (mode !== "Filesystem" && mode !== "Block") throw new Error(`volume ${podVolumeName} has unsupported volumeMode ${mode}`);
  return mode;
}

/**
 * upstream getPVCExtractPV's checks: the claim's bound PV name, or its error (a claim being deleted
 * without the protection finalizer, one not Bound, one Bound to no name).
 */
export function boundVolumeName(pvc: PersistentVolumeClaimObject): string {
  if (pvc.metadata.deletionTimestamp && !(pvc.metadata.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER)) throw new Error("PVC is being deleted");
  if (pvc.status.phase !== "Bound") throw new Error("PVC is not bound");
  if (!pvc.spec.volumeName) throw new Error("PVC has empty pvc.Spec.VolumeName");
  return pvc.spec.volumeName;
}

/** The claim a pod volume uses: a persistentVolumeClaim volume's, or a generic ephemeral volume's own. */
export interface VolumeClaimSource {
  claimName: string;
  readOnly: boolean;
  /** A generic ephemeral volume: the claim must be the pod's (volumeIsForPod). */
  ephemeral: boolean;
}

/**
 * upstream createVolumeSpec's pvcSource: a generic ephemeral volume is handled as a claim named
 * `<pod name>-<volume name>` (component-helpers storage/ephemeral VolumeClaimName), read-write.
 */
export function volumeClaimSource(
  podName: string,
  v: { name: string; persistentVolumeClaim?: { claimName: string; readOnly?: boolean }; ephemeral?: unknown },
): VolumeClaimSource | undefined {
  if (v.persistentVolumeClaim) return { claimName: v.persistentVolumeClaim.claimName, readOnly: v.persistentVolumeClaim.readOnly === true, ephemeral: false };
  if (v.ephemeral) return { claimName: `${podName}-${v.name}`, readOnly: false, ephemeral: true };
  return undefined;
}

/** The pod a generic ephemeral volume's claim must belong to. */
export interface ClaimOwnerPod {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * upstream ephemeral.VolumeIsForPod: the claim is in the pod's namespace and the pod is its controller
 * (metav1.IsControlledBy), so a claim of that name made by someone else is never used.
 */
export function checkVolumeIsForPod(pod: ClaimOwnerPod, pvc: PersistentVolumeClaimObject, claimName: string): void {
  const ns = pvc.metadata.namespace ?? pod.namespace;
  const controller = (pvc.metadata.ownerReferences ?? []).find((r) => r.controller === true);
  if (ns !== pod.namespace || !controller || controller.uid !== pod.uid)
    throw new Error(`PVC ${ns}/${pvc.metadata.name ?? claimName} was not created for pod ${pod.namespace}/${pod.name} (pod is not owner)`);
}

/** upstream getPVSpec's checks: the PV must name the claim (its UID) as the one it is bound to. */
export function checkClaimRef(pv: PersistentVolumeObject, pvName: string, claimUid: string): void {
  const ref = pv.spec.claimRef;
  if (!ref) throw new Error(`found PV object ${pvName} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`);
  if ((ref.uid ?? "") !== claimUid)
    throw new Error(`found PV object ${pvName} but its pv.Spec.ClaimRef.UID ${ref.uid ?? ""} does not point to claim.UID ${claimUid}`);
}

/** The source field a PV sets ("nfs", "csi", …), or undefined when it sets none bunlet knows of. */
export function persistentVolumeSourceName(pv: PersistentVolumeObject): string | undefined {
  const spec = pv.spec as Record<string, unknown>;
  return PV_SOURCES.find((s) => spec[s] !== undefined && spec[s] !== null);
}

/**
 * The plugin for the PV (upstream FindPluginBySpec, as the populator's AddPodToVolume reports it):
 * hostPath, local and csi; any other source names the PV and the source bunlet does not mount.
 */
export function persistentVolumeSource(pv: PersistentVolumeObject, pvName: string): PersistentVolumeSource {
  if (pv.spec.hostPath) return { plugin: "kubernetes.io/host-path", hostPath: pv.spec.hostPath };
  if (pv.spec.local) return { plugin: "kubernetes.io/local-volume", local: pv.spec.local };
  if (pv.spec.csi) return { plugin: "kubernetes.io/csi", csi: pv.spec.csi, accessModes: pv.spec.accessModes ?? [] };
  const source = persistentVolumeSourceName(pv) ?? "none";
  throw new Error(
    `failed to get Plugin from volumeSpec for volume "${pvName}" err=no volume plugin matched: PV ${pvName} has a ${source} volume source; bunlet mounts hostPath, local and csi persistent volumes`,
  );
}

/**
 * upstream createVolumeSpec for a claim: the PVC checked, the PV checked against it, its plugin found
 * and its volumeMode matching the volume's use (`usage`: by default mounted). Errors of the claim and
 * the PV are wrapped as upstream's "error processing PVC ns/name: …".
 */
export function claimedVolume(
  podVolumeName: string,
  namespace: string,
  claimName: string,
  pvc: PersistentVolumeClaimObject | Error,
  pv: (pvName: string) => PersistentVolumeObject | Error,
  ownerPod?: ClaimOwnerPod,
  usage: VolumeUsage = { mounted: true, device: false },
): ClaimedVolume {
  const processing = (e: Error) => new Error(`error processing PVC ${namespace}/${claimName}: ${e.message}`);
  if (pvc instanceof Error) throw processing(new Error(`failed to fetch PVC from API server: ${pvc.message}`));
  let pvName: string;
  let vol: PersistentVolumeObject;
  try {
    pvName = boundVolumeName(pvc);
  } catch (e) {
    throw processing(e as Error);
  }
  // A generic ephemeral volume's claim: upstream's error as it is, not wrapped.
  if (ownerPod) checkVolumeIsForPod(ownerPod, pvc, claimName);
  try {
    const got = pv(pvName);
    if (got instanceof Error) throw new Error(`failed to fetch PV ${pvName} from API server: ${got.message}`);
    checkClaimRef(got, pvName, pvc.metadata.uid);
    vol = got;
  } catch (e) {
    throw processing(e as Error);
  }
  const source = persistentVolumeSource(vol, pvName);
  const volumeMode = checkVolumeMode(podVolumeName, vol.spec.volumeMode ?? "Filesystem", usage);
  return {
    pvName,
    source,
    mountOptions: vol.spec.mountOptions ?? [],
    volumeMode,
    claim: pvc,
    capacity: vol.spec.capacity?.storage,
    accessModes: vol.spec.accessModes ?? [],
  };
}

type VolumeUser = { volumeMounts?: { name: string }[]; volumeDevices?: { name: string }[] };

/** upstream GetPodVolumeNames: the volumes the pod's containers (of every kind) mount, and those they take as devices. */
export function podVolumeNames(pod: { spec: { containers: VolumeUser[]; initContainers?: VolumeUser[]; ephemeralContainers?: VolumeUser[] } }): {
  mounts: Set<string>;
  devices: Set<string>;
} {
  const all = [...pod.spec.containers, ...(pod.spec.initContainers ?? []), ...(pod.spec.ephemeralContainers ?? [])];
  return {
    mounts: new Set(all.flatMap((c) => (c.volumeMounts ?? []).map((m) => m.name))),
    devices: new Set(all.flatMap((c) => (c.volumeDevices ?? []).map((d) => d.name))),
  };
}

/** Names of the pod's volumes some container mounts or takes as a device (upstream's populator skips the others). */
export function usedVolumeNames(pod: Parameters<typeof podVolumeNames>[0]): Set<string> {
  const { mounts, devices } = podVolumeNames(pod);
  return new Set([...mounts, ...devices]);
}

/**
 * upstream WaitForAttachAndMount's error once the populator failed for some volumes (the kubelet's
 * FailedMount event prefixes it with "Unable to attach or mount volumes: "): the volumes not set up,
 * the attachable ones not attached (none listed: a CSI volume's attachment is waited for by its set-up), those that failed to
 * process, and their errors.
 */
export function unmountedVolumesMessage(unmounted: readonly string[], failed: readonly { volume: string; error: string }[]): string {
  const names = (xs: readonly string[]) => `[${[...xs].sort().join(" ")}]`;
  return `unmounted volumes=${names(unmounted)}, unattached volumes=[], failed to process volumes=${names(failed.map((f) => f.volume))}: ${failed.map((f) => f.error).join("; ")}`;
}
