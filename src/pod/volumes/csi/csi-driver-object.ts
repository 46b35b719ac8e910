// The API objects the kubelet's csi plugin reads for a mount (storage.k8s.io/v1): the driver's CSIDriver
// — attachRequired, podInfoOnMount, fsGroupPolicy, volumeLifecycleModes, with upstream's defaults when
// the object or a field is absent (csi_plugin.go skipAttach, podInfoEnabled, getFSGroupPolicy,
// supportsVolumeLifecycleMode) — and a volume's VolumeAttachment (csi_attacher.go WaitForAttach).
// Both are read by their API paths, built and recognised here, so a cache can stand in for the reads.
import { z } from "zod";

const STORAGE_V1 = "/apis/storage.k8s.io/v1";

/** The API path of the CSIDriver `name`. */
export const csiDriverPath = (name: string) => `${STORAGE_V1}/csidrivers/${encodeURIComponent(name)}`;

/** The API path of the VolumeAttachment `name`. */
export const volumeAttachmentPath = (name: string) => `${STORAGE_V1}/volumeattachments/${encodeURIComponent(name)}`;

/** Which of the two objects an API path names, or undefined for any other path. */
export function csiObjectOfPath(path: string): { kind: "CSIDriver" | "VolumeAttachment"; name: string } | undefined {
  const m = /^\/apis\/storage\.k8s\.io\/v1\/(csidrivers|volumeattachments)\/([^/?]+)$/.exec(path);
  if (!m) return undefined;
  return { kind: m[1] === "csidrivers" ? "CSIDriver" : "VolumeAttachment", name: decodeURIComponent(m[2]!) };
}

export const csiDriverObjectSchema = z.looseObject({
  metadata: z.looseObject({ name: z.string().default("") }),
  spec: z
    .looseObject({
      attachRequired: z.boolean().nullish(),
      podInfoOnMount: z.boolean().nullish(),
      fsGroupPolicy: z.string().nullish(),
      volumeLifecycleModes: z.array(z.string()).nullish(),
    })
    .default({}),
});
export type CSIDriverObject = z.infer<typeof csiDriverObjectSchema>;

export const volumeAttachmentSchema = z.looseObject({
  metadata: z.looseObject({ name: z.string().default(""), deletionTimestamp: z.string().optional() }),
  status: z
    .looseObject({
      attached: z.boolean().optional(),
      attachmentMetadata: z.record(z.string(), z.string()).nullish(),
      attachError: z.looseObject({ message: z.string().optional() }).nullish(),
    })
    .default({}),
});
export type VolumeAttachmentObject = z.infer<typeof volumeAttachmentSchema>;

/** upstream storage.FSGroupPolicy values. */
export type FSGroupPolicy = "ReadWriteOnceWithFSType" | "File" | "None";

/** What a mount needs from the driver's CSIDriver, defaults filled in. */
export interface CSIDriverPolicy {
  attachRequired: boolean;
  podInfoOnMount: boolean;
  fsGroupPolicy: FSGroupPolicy;
  volumeLifecycleModes: string[];
}

/** The policy of a driver from its CSIDriver, or upstream's defaults when it has none. */
export function csiDriverPolicy(obj: CSIDriverObject | undefined): CSIDriverPolicy {
  const s = obj?.spec;
  const policy = s?.fsGroupPolicy;
  return {
    attachRequired: s?.attachRequired ?? true,
    podInfoOnMount: s?.podInfoOnMount ?? false,
    fsGroupPolicy: policy === "File" || policy === "None" ? policy : "ReadWriteOnceWithFSType",
    volumeLifecycleModes: s?.volumeLifecycleModes && s.volumeLifecycleModes.length > 0 ? s.volumeLifecycleModes : ["Persistent"],
  };
}

/** upstream supportsVolumeLifecycleMode: the driver must list the volume's mode. */
export function checkVolumeLifecycleMode(driver: string, mode: "Persistent" | "Ephemeral", p: CSIDriverPolicy): void {
  if (!p.volumeLifecycleModes.includes(mode))
    throw new Error(`volume mode ${JSON.stringify(mode)} not supported by driver ${driver} (only supports ${JSON.stringify(p.volumeLifecycleModes)})`);
}

/**
 * upstream waitForVolumeAttachmentInternal's verdict on one read: the attachment's metadata (the
 * publish context) once attached, else the error the mount is retried with.
 */
export function attachedMetadata(va: VolumeAttachmentObject | undefined, name: string, driver: string, volumeHandle: string): Record<string, string> {
  if (!va)
    throw new Error(`volume attachment ${name} for volume ${volumeHandle} of CSI driver ${driver} not found: waiting for the external-attacher to attach it`);
  if (va.metadata.deletionTimestamp) throw new Error(`volume attachment ${name} is being deleted`);
  if (va.status.attached === true) return va.status.attachmentMetadata ?? {};
  if (va.status.attachError?.message) throw new Error(`attachment for ${volumeHandle} failed: ${va.status.attachError.message}`);
  throw new Error(`timed out waiting for external-attacher of ${driver} CSI driver to attach volume ${volumeHandle} (volume attachment ${name} not attached)`);
}
