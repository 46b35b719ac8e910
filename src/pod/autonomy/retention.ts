// What the autonomy cache keeps (pure): the cached pods' secrets, configMaps, claims (and the PVs
// those claims are bound to, their CSI drivers' CSIDriver objects, their VolumeAttachments and the
// Secrets they name for the node), the CSIDriver objects and node-publish Secrets of their inline csi
// volumes and unexpired tokens, nothing else; and whether a write fits the size bound.
import { podConfigMapNames, podSecretNames, type RefPod } from "../api-references.ts";
import { volumeClaimSource } from "../volumes/index.ts";
import { cacheFileName, type CachedToken } from "./cache-entry.ts";

type CachedPod = RefPod & { metadata: { namespace: string; name: string } };

/** The claims a pod names: its persistentVolumeClaim volumes' and its generic ephemeral volumes' own. */
const podClaimNames = (p: CachedPod): string[] =>
  (p.spec.volumes ?? []).flatMap((v) => {
    const claim = volumeClaimSource(p.metadata.name, v as Parameters<typeof volumeClaimSource>[1]);
    return claim ? [claim.claimName] : [];
  });

/** The files the pods need besides their own: their secrets', configMaps' and claims' (`withSecrets` false: no secrets). */
export function referencedFiles(pods: readonly unknown[], withSecrets: boolean): Set<string> {
  const out = new Set<string>();
  for (const raw of pods) {
    const p = raw as CachedPod;
    const ns = p.metadata.namespace;
    try {
      if (withSecrets) for (const n of podSecretNames(p)) out.add(cacheFileName("Secret", { namespace: ns, name: n }));
      for (const n of podConfigMapNames(p)) out.add(cacheFileName("ConfigMap", { namespace: ns, name: n }));
      for (const n of podClaimNames(p)) out.add(cacheFileName("PersistentVolumeClaim", { namespace: ns, name: n }));
    } catch {
      // a name no API server would accept cannot name a file: nothing of it is kept
    }
  }
  return out;
}

/** The files of the PVs the kept claims are bound to (spec.volumeName). */
export function boundVolumeFiles(claims: readonly unknown[]): Set<string> {
  const out = new Set<string>();
  for (const c of claims) {
    const name = (c as { spec?: { volumeName?: string } }).spec?.volumeName;
    try {
      if (name) out.add(cacheFileName("PersistentVolume", { name }));
    } catch {
      // not a name a PV can have: nothing to keep
    }
  }
  return out;
}

/** A kept PV's CSI driver (spec.csi.driver), if it is a CSI volume. */
const csiDriverOf = (pv: unknown) => (pv as { spec?: { csi?: { driver?: unknown } } }).spec?.csi?.driver;

/** The CSIDriver files the pods' CSI volumes read: their kept PVs' drivers and their inline csi volumes' own. */
export function csiDriverFiles(pods: readonly unknown[], volumes: readonly unknown[]): Set<string> {
  const drivers = new Set<unknown>(volumes.map(csiDriverOf));
  for (const p of pods) for (const v of (p as CachedPod).spec.volumes ?? []) drivers.add((v as { csi?: { driver?: unknown } }).csi?.driver);
  const out = new Set<string>();
  for (const name of drivers) {
    try {
      if (typeof name === "string" && name) out.add(cacheFileName("CSIDriver", { name }));
    } catch {
      // not a name a CSIDriver can have: nothing to keep
    }
  }
  return out;
}

type SecretRefLike = { name?: unknown; namespace?: unknown } | null | undefined;

/**
 * The Secret files the pods' CSI volumes read on the node (upstream csi_attacher.go MountDevice,
 * csi_mounter.go SetUpAt): their kept PVs' nodeStageSecretRef and nodePublishSecretRef, their inline csi
 * volumes' nodePublishSecretRef in the pod's namespace.
 */
export function csiSecretFiles(pods: readonly unknown[], volumes: readonly unknown[]): Set<string> {
  const refs: SecretRefLike[] = [];
  for (const pv of volumes) {
    const csi = (pv as { spec?: { csi?: { nodeStageSecretRef?: SecretRefLike; nodePublishSecretRef?: SecretRefLike } } }).spec?.csi;
    refs.push(csi?.nodeStageSecretRef, csi?.nodePublishSecretRef);
  }
  for (const p of pods) {
    const namespace = (p as CachedPod).metadata.namespace;
    for (const v of (p as CachedPod).spec.volumes ?? []) {
      const name = (v as { csi?: { nodePublishSecretRef?: SecretRefLike } }).csi?.nodePublishSecretRef?.name;
      if (name) refs.push({ namespace, name });
    }
  }
  const out = new Set<string>();
  for (const ref of refs) {
    try {
      if (typeof ref?.name === "string" && typeof ref.namespace === "string" && ref.name)
        out.add(cacheFileName("Secret", { namespace: ref.namespace, name: ref.name }));
    } catch {
      // not a name a Secret can have: nothing to keep
    }
  }
  return out;
}

/** Whether a VolumeAttachment is kept: it attaches one of the kept PVs (spec.source.persistentVolumeName). */
export const keepAttachment = (va: unknown, volumeNames: ReadonlySet<unknown>) => {
  const pv = (va as { spec?: { source?: { persistentVolumeName?: unknown } } }).spec?.source?.persistentVolumeName;
  return typeof pv === "string" && volumeNames.has(pv);
};

/** Whether a token file is still worth keeping: its pod is cached and it has not expired. */
export const keepToken = (t: CachedToken, podUids: ReadonlySet<string>, nowMs: number) => podUids.has(t.podUid) && t.expirationMs > nowMs;

/** Whether replacing `oldBytes` with `newBytes` keeps the cache within `maxBytes`. */
export const fits = (usedBytes: number, oldBytes: number, newBytes: number, maxBytes: number) => usedBytes - oldBytes + newBytes <= maxBytes;
