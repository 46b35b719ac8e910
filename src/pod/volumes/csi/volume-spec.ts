// A pod's CSI volume as the kubelet's csi plugin sees it (upstream pkg/volume/csi csi_plugin.go
// NewMounter, csi_mounter.go SetUpAt, csi_client.go asCSIAccessModeV1): a persistentVolumeClaim's PV
// with spec.csi, or an inline csi volume (ephemeral); the volume context (with the pod's identity when
// the driver asks for it), the Secrets whose data the driver gets (NodeStage/NodePublish secrets), the
// volume capability, and whether the kubelet gives the volume the pod's fsGroup. Pure: plain data in,
// plain data out.
import { z } from "zod";
import type { FSGroupPolicy } from "./csi-driver-object.ts";
import { ephemeralVolumeHandle } from "./csi-util.ts";

const secretRef = z.looseObject({ name: z.string().optional(), namespace: z.string().optional() }).nullish();

/** core/v1 CSIPersistentVolumeSource, the fields the node side reads. */
export const csiPersistentVolumeSourceSchema = z.looseObject({
  driver: z.string().min(1),
  volumeHandle: z.string().min(1),
  readOnly: z.boolean().optional(),
  fsType: z.string().optional(),
  volumeAttributes: z.record(z.string(), z.string()).nullish(),
  nodeStageSecretRef: secretRef,
  nodePublishSecretRef: secretRef,
});
export type CSIPersistentVolumeSource = z.infer<typeof csiPersistentVolumeSourceSchema>;

/** core/v1 CSIVolumeSource (an inline volume). */
export const csiVolumeSourceSchema = z.strictObject({
  driver: z.string().min(1, "Required value"),
  readOnly: z.boolean().optional(),
  fsType: z.string().optional(),
  volumeAttributes: z.record(z.string(), z.string()).optional(),
  nodePublishSecretRef: z.looseObject({ name: z.string().optional() }).optional(),
});
export type CSIVolumeSource = z.infer<typeof csiVolumeSourceSchema>;

export type VolumeLifecycleMode = "Persistent" | "Ephemeral";

/** core/v1 SecretReference: a Secret whose data a driver gets as the call's `secrets`. */
export interface SecretRef {
  namespace: string;
  name: string;
}

/** One CSI volume of a pod, resolved. */
export interface CSIVolumeSpec {
  /** upstream spec.Name(): the PV's name, or the inline volume's name. */
  specVolID: string;
  driver: string;
  volumeHandle: string;
  readOnly: boolean;
  fsType: string;
  mountOptions: string[];
  /** The PV's accessModes (an inline volume: none, mounted ReadWriteOnce). */
  accessModes: string[];
  volumeAttributes: Record<string, string>;
  lifecycle: VolumeLifecycleMode;
  /** A PV's spec.csi.nodeStageSecretRef (NodeStageVolume's secrets). */
  nodeStageSecretRef?: SecretRef;
  /** A PV's spec.csi.nodePublishSecretRef, or an inline volume's in the pod's namespace (NodePublishVolume's secrets). */
  nodePublishSecretRef?: SecretRef;
}

/** A PV's secret reference as upstream's SecretReference (API validation requires both fields). */
function pvSecretRef(ref: { name?: string; namespace?: string } | null | undefined): SecretRef | undefined {
  return ref ? { namespace: ref.namespace ?? "", name: ref.name ?? "" } : undefined;
}

/**
 * The spec of a PV's CSI source, mounted through the claim. NodePublishVolume's readonly is the claim's
 * (upstream NewSpecFromPersistentVolume, getReadOnlyFromSpec); the source's own readOnly is for the
 * controller's ControllerPublishVolume.
 */
export function persistentCSIVolumeSpec(
  pvName: string,
  src: CSIPersistentVolumeSource,
  pv: { accessModes: string[]; mountOptions: string[] },
  claimReadOnly: boolean,
): CSIVolumeSpec {
  const stage = pvSecretRef(src.nodeStageSecretRef);
  const publish = pvSecretRef(src.nodePublishSecretRef);
  return {
    specVolID: pvName,
    driver: src.driver,
    volumeHandle: src.volumeHandle,
    readOnly: claimReadOnly,
    fsType: src.fsType ?? "",
    mountOptions: pv.mountOptions,
    accessModes: pv.accessModes,
    volumeAttributes: src.volumeAttributes ?? {},
    lifecycle: "Persistent",
    ...(stage ? { nodeStageSecretRef: stage } : {}),
    ...(publish ? { nodePublishSecretRef: publish } : {}),
  };
}

/**
 * The spec of an inline csi volume (upstream: its handle made from the pod's UID and the volume's name;
 * its nodePublishSecretRef names a Secret of the pod's namespace).
 */
export function ephemeralCSIVolumeSpec(podUid: string, volumeName: string, src: CSIVolumeSource, podNamespace = ""): CSIVolumeSpec {
  return {
    specVolID: volumeName,
    driver: src.driver,
    volumeHandle: ephemeralVolumeHandle(podUid, volumeName),
    readOnly: src.readOnly === true,
    fsType: src.fsType ?? "",
    mountOptions: [],
    accessModes: [],
    volumeAttributes: src.volumeAttributes ?? {},
    lifecycle: "Ephemeral",
    ...(src.nodePublishSecretRef ? { nodePublishSecretRef: { namespace: podNamespace, name: src.nodePublishSecretRef.name ?? "" } } : {}),
  };
}

export interface PodIdentity {
  metadata: { name: string; namespace?: string; uid?: string };
  spec: { serviceAccountName?: string };
}

/** upstream getPodInfoAttrs: the pod's identity in the volume context (CSIDriver podInfoOnMount). */
export function podInfoAttrs(pod: PodIdentity, mode: VolumeLifecycleMode): Record<string, string> {
  return {
    "csi.storage.k8s.io/pod.name": pod.metadata.name,
    "csi.storage.k8s.io/pod.namespace": pod.metadata.namespace ?? "",
    "csi.storage.k8s.io/pod.uid": pod.metadata.uid ?? "",
    "csi.storage.k8s.io/serviceAccount.name": pod.spec.serviceAccountName ?? "",
    "csi.storage.k8s.io/ephemeral": String(mode === "Ephemeral"),
  };
}

/** NodePublishVolume's volume_context: the volume's attributes, with the pod's identity when podInfoOnMount. */
export function publishVolumeContext(spec: CSIVolumeSpec, pod: PodIdentity, podInfoOnMount: boolean): Record<string, string> {
  return podInfoOnMount ? { ...spec.volumeAttributes, ...podInfoAttrs(pod, spec.lifecycle) } : { ...spec.volumeAttributes };
}

/** CSI VolumeCapability.AccessMode.Mode names. */
export type CSIAccessMode =
  | "UNKNOWN"
  | "SINGLE_NODE_WRITER"
  | "MULTI_NODE_READER_ONLY"
  | "MULTI_NODE_MULTI_WRITER"
  | "SINGLE_NODE_SINGLE_WRITER"
  | "SINGLE_NODE_MULTI_WRITER";

/**
 * upstream asCSIAccessModeV1 / asSingleNodeMultiWriterCapableCSIAccessModeV1: the PV's first access
 * mode (ReadWriteOnce when it has none) in CSI terms; a driver with SINGLE_NODE_MULTI_WRITER gets the
 * finer single-node modes.
 */
export function csiAccessMode(accessModes: readonly string[], singleNodeMultiWriter: boolean): CSIAccessMode {
  const am = accessModes[0] ?? "ReadWriteOnce";
  switch (am) {
    case "ReadWriteOnce":
      return singleNodeMultiWriter ? "SINGLE_NODE_MULTI_WRITER" : "SINGLE_NODE_WRITER";
    case "ReadOnlyMany":
      return "MULTI_NODE_READER_ONLY";
    case "ReadWriteMany":
      return "MULTI_NODE_MULTI_WRITER";
    case "ReadWriteOncePod":
      return singleNodeMultiWriter ? "SINGLE_NODE_SINGLE_WRITER" : "SINGLE_NODE_WRITER";
    default:
      return "UNKNOWN";
  }
}

/** The VolumeCapability of a mounted (filesystem) volume, as the CSI codec takes it. */
export function mountVolumeCapability(spec: CSIVolumeSpec, singleNodeMultiWriter: boolean, volumeMountGroup?: string) {
  return {
    mount: { fsType: spec.fsType, mountFlags: spec.mountOptions, volumeMountGroup: volumeMountGroup ?? "" },
    accessMode: { mode: csiAccessMode(spec.accessModes, singleNodeMultiWriter) },
  };
}

/** The VolumeCapability of a raw block volume (upstream fsTypeBlockName: the `block` access type, no mount options nor group). */
export function blockVolumeCapability(spec: CSIVolumeSpec, singleNodeMultiWriter: boolean) {
  return { block: {}, accessMode: { mode: csiAccessMode(spec.accessModes, singleNodeMultiWriter) } };
}

/**
 * upstream csiMountMgr.supportsFSGroup: whether the kubelet gives the published volume the pod's
 * fsGroup — never read-only or under policy None; always under File; under ReadWriteOnceWithFSType
 * only with an fsType and a ReadWriteOnce PV (an inline volume counts as one).
 */
export function supportsFSGroup(spec: CSIVolumeSpec, fsGroup: number | undefined, policy: FSGroupPolicy): boolean {
  if (fsGroup === undefined || policy === "None" || spec.readOnly) return false;
  if (policy === "File") return true;
  if (spec.fsType === "") return false;
  if (spec.lifecycle === "Ephemeral") return true;
  return spec.accessModes.includes("ReadWriteOnce");
}
