// The CSI volume set-up's API reads, backed by the autonomy cache: a CSIDriver (attachRequired,
// podInfoOnMount, fsGroupPolicy, volumeLifecycleModes), a VolumeAttachment and the Secrets a volume
// names for its driver (a PV's nodeStageSecretRef and nodePublishSecretRef, an inline volume's
// nodePublishSecretRef), read by the kubelet's csi plugin (upstream csi_plugin.go, csi_attacher.go
// WaitForAttach and MountDevice, csi_mounter.go SetUpAt) before it stages and publishes a volume. What
// the API server answers is stored; "not found" removes the stored copy and stays not found; the stored
// copy is served only when the API server gave no answer (a network error, a 5xx or 429), never over a
// refusal. A Secret is stored as the pods' own are (the same file, and not at all with secrets off). A
// VolumeAttachment served from the cache cannot be checked: bunlet trusts the copy it stored, attached or
// not — the volume stays attached to the node while the node cannot reach the API server, as the
// attach/detach controller does not detach a volume its pod still uses.
import { kv, log } from "../../log.ts";
import { csiObjectOfPath, secretRefOfPath } from "../volumes/csi/index.ts";
import { noAnswer, storable } from "./offline-objects.ts";
import type { AutonomyStore, StoredObjectKind } from "./store.ts";

/** The CSI volume manager's GET: the object, or undefined when the API server says it does not exist. */
export type GetObject = (path: string) => Promise<unknown>;

/** The stored object an API path names: a CSIDriver or VolumeAttachment (cluster-scoped) or a Secret. */
function storedObjectOfPath(path: string): { kind: StoredObjectKind; namespace: string; name: string } | undefined {
  const csi = csiObjectOfPath(path);
  if (csi) return { ...csi, namespace: "" };
  const secret = secretRefOfPath(path);
  return secret && { kind: "Secret", ...secret };
}

/** `getObject` with its CSIDriver, VolumeAttachment and Secret reads stored in and, without an answer, served from `store`. */
export function withCSIObjectsCache(getObject: GetObject, store: AutonomyStore): GetObject {
  const served = new Set<string>();
  return async (path) => {
    const ref = storedObjectOfPath(path);
    if (!ref) return getObject(path);
    const what = `${ref.kind.toLowerCase()}/${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;
    let got: unknown;
    try {
      got = await getObject(path);
    } catch (e) {
      const cached = noAnswer(e as Error) ? store.object(ref.kind, ref.namespace, ref.name) : undefined;
      if (cached === undefined) throw e;
      if (!served.has(what)) log.warn(`API server unreachable; using the autonomy cache's copy ${kv({ object: what, error: (e as Error).message })}`);
      served.add(what);
      return cached;
    }
    served.delete(what);
    try {
      if (got === undefined) store.removeObject(ref.kind, ref.namespace, ref.name);
      else store.putObject(ref.kind, ref.namespace, ref.name, storable(got));
    } catch (e) {
      log.warn(`autonomy cache: not storing an object ${kv({ object: what, error: (e as Error).message })}`);
    }
    return got;
  };
}
