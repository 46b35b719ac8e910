// PersistentVolumes and PersistentVolumeClaims as the real-cluster tests apply them with kubectl (upstream
// core/v1 PersistentVolumeSpec, PersistentVolumeClaimSpec): a static Retain PV of one volume source and
// no storage class, and a claim pre-bound to it by name or left to a storage class's provisioner. Both
// ReadWriteOnce, 1Gi unless told. Pure: plain objects out.

/** The PV's one volume source, as its spec names it. */
export type PersistentVolumeSource =
  | { local: { path: string; fsType?: string } }
  | { hostPath: { path: string; type?: string } }
  | {
      csi: {
        driver: string;
        volumeHandle: string;
        fsType?: string;
        volumeAttributes?: Record<string, string>;
        nodeStageSecretRef?: { name: string; namespace: string };
        nodePublishSecretRef?: { name: string; namespace: string };
      };
    };

export interface PersistentVolumeOptions {
  /** spec.capacity.storage; default 1Gi. */
  storage?: string;
  /** spec.volumeMode; unset is the API server's Filesystem. */
  volumeMode?: "Filesystem" | "Block";
  /** The node a local PV is on: its required node affinity on kubernetes.io/hostname (API validation wants one). */
  node?: string;
}

/** A Retain PV of `source`, no storage class, ReadWriteOnce. */
export function persistentVolume(name: string, source: PersistentVolumeSource, o: PersistentVolumeOptions = {}): object {
  const affinity = o.node && { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [o.node] }] }] } };
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name },
    spec: {
      capacity: { storage: o.storage ?? "1Gi" },
      accessModes: ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Retain",
      storageClassName: "",
      ...(o.volumeMode ? { volumeMode: o.volumeMode } : {}),
      ...source,
      ...(affinity ? { nodeAffinity: affinity } : {}),
    },
  };
}

export interface PersistentVolumeClaimOptions {
  /** spec.resources.requests.storage; default 1Gi. */
  storage?: string;
  /** spec.volumeMode; unset is the API server's Filesystem. */
  volumeMode?: "Filesystem" | "Block";
  /** spec.storageClassName; default "" (static PVs of no class only). */
  storageClassName?: string;
  /** spec.volumeName: the PV the claim is pre-bound to. */
  volumeName?: string;
}

/** A claim's spec, ReadWriteOnce (also a generic ephemeral volume's volumeClaimTemplate.spec). */
export function persistentVolumeClaimSpec(o: PersistentVolumeClaimOptions = {}): object {
  return {
    accessModes: ["ReadWriteOnce"],
    storageClassName: o.storageClassName ?? "",
    ...(o.volumeMode ? { volumeMode: o.volumeMode } : {}),
    resources: { requests: { storage: o.storage ?? "1Gi" } },
    ...(o.volumeName ? { volumeName: o.volumeName } : {}),
  };
}

/** A claim in the default namespace with persistentVolumeClaimSpec(o). */
export function persistentVolumeClaim(name: string, o: PersistentVolumeClaimOptions = {}): object {
  return { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name, namespace: "default" }, spec: persistentVolumeClaimSpec(o) };
}
