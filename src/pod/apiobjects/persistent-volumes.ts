// The claims of a pod's persistentVolumeClaim volumes and the PersistentVolumes bound to them, read
// before each of its syncs as upstream's desired state of world populator reads them (getPVCExtractPV,
// getPVSpec: a GET of the claim in the pod's namespace, then a GET of its PV — no watch, no list). The
// API server's Node authorizer grants exactly these GETs to a node for the pods bound to it: the
// claim a pod names, the PV the claim is bound to. Checked in volumes/persistent-volume.ts; a claim
// that cannot be used yet is an Error in the result, for the volume set-up to report. The two GETs go
// through a PersistentVolumeReader, so a cache (node autonomy) can stand in when the API server cannot answer.
import type { z } from "zod";
import type { KubeClient } from "../../kube/index.ts";
import type { KubePod } from "../kuberuntime/index.ts";
import {
  claimedVolume,
  podVolumeNames,
  usedVolumeNames,
  persistentVolumeClaimSchema,
  persistentVolumeSchema,
  volumeClaimSource,
  type ClaimedVolume,
  type ClaimOwnerPod,
  type PersistentVolumeClaimObject,
  type PersistentVolumeObject,
  type VolumeClaimSource,
  type VolumeUsage,
} from "../volumes/index.ts";

const NO_CLIENT = "no kubeClient defined";

/** The pod's used persistentVolumeClaim and generic ephemeral volumes: volume name → its claim. */
export function podClaimVolumes(pod: KubePod): Map<string, VolumeClaimSource> {
  const used = usedVolumeNames(pod);
  const out = new Map<string, VolumeClaimSource>();
  for (const v of pod.spec.volumes ?? []) {
    const claim = volumeClaimSource(pod.metadata.name, v);
    if (claim && used.has(v.name)) out.set(v.name, claim);
  }
  return out;
}

/** The two reads a claim is resolved with; each answers the object or the error the API server gave. */
export interface PersistentVolumeReader {
  /** GET the claim `name` in `namespace`. */
  claim(namespace: string, name: string): Promise<PersistentVolumeClaimObject | Error>;
  /** GET the PersistentVolume `name`. */
  volume(name: string): Promise<PersistentVolumeObject | Error>;
}

async function get<T>(client: KubeClient | undefined, path: string, schema: z.ZodType<T>): Promise<T | Error> {
  if (!client) return new Error(NO_CLIENT);
  try {
    return await client.request({ path, schema });
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

/** The reader that asks the API server, through the node's client once it has one. */
export function apiPersistentVolumeReader(client: () => KubeClient | undefined): PersistentVolumeReader {
  return {
    claim: (namespace, name) =>
      get(client(), `/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(name)}`, persistentVolumeClaimSchema),
    volume: (name) => get(client(), `/api/v1/persistentvolumes/${encodeURIComponent(name)}`, persistentVolumeSchema),
  };
}

async function resolveClaim(
  reader: PersistentVolumeReader,
  namespace: string,
  volumeName: string,
  claimName: string,
  usage: VolumeUsage,
  ownerPod?: ClaimOwnerPod,
): Promise<ClaimedVolume | Error> {
  const pvc = await reader.claim(namespace, claimName);
  // The PV is read only for a claim bound to one (the authorizer grants it only then).
  const pvName = pvc instanceof Error || pvc.status.phase !== "Bound" ? undefined : pvc.spec.volumeName;
  let pv: PersistentVolumeObject | Error = new Error("not read");
  if (pvName) pv = await reader.volume(pvName);
  try {
    return claimedVolume(volumeName, namespace, claimName, pvc, () => pv, ownerPod, usage);
  } catch (e) {
    return e as Error;
  }
}

/** Each used persistentVolumeClaim volume of the pod, resolved to its PV or to upstream's error. */
export async function resolveClaimedVolumes(reader: PersistentVolumeReader, pod: KubePod): Promise<Map<string, ClaimedVolume | Error>> {
  const ns = pod.metadata.namespace ?? "";
  const vols = [...podClaimVolumes(pod)];
  const owner = { namespace: ns, name: pod.metadata.name, uid: pod.metadata.uid ?? "" };
  const { mounts, devices } = podVolumeNames(pod);
  const got = await Promise.all(
    vols.map(([volume, c]) =>
      resolveClaim(reader, ns, volume, c.claimName, { mounted: mounts.has(volume), device: devices.has(volume) }, c.ephemeral ? owner : undefined),
    ),
  );
  return new Map(vols.map(([volume], i) => [volume, got[i]!]));
}
