// Mirror pods, pure parts (upstream pkg/kubelet/pod/mirror_client.go, pod_manager.go): the API
// object that mirrors a static pod — the static pod as the kubelet holds it, its annotations plus
// kubernetes.io/config.mirror = its config hash, owned by the Node (controller: true, as the
// NodeRestriction admission plugin requires of a node's mirror pods) — and the tests on it.
import type { Pod } from "../types.ts";
import { ConfigHashAnnotationKey, ConfigMirrorAnnotationKey } from "../static-pod.ts";

export const podFullName = (p: { metadata: { name: string; namespace?: string } }) => `${p.metadata.name}_${p.metadata.namespace ?? "default"}`;

/** getPodHash: the config hash every static pod carries. */
export const staticPodHash = (p: Pod): string | undefined => p.metadata.annotations?.[ConfigHashAnnotationKey];
export const mirrorPodHash = (p: Pod): string | undefined => p.metadata.annotations?.[ConfigMirrorAnnotationKey];

/** IsMirrorPodOf: same name and namespace, and the mirror's hash is the static pod's. */
export function isMirrorPodOf(mirror: Pod, staticPod: Pod): boolean {
  if (mirror.metadata.name !== staticPod.metadata.name || (mirror.metadata.namespace ?? "default") !== (staticPod.metadata.namespace ?? "default"))
    return false;
  const h = mirrorPodHash(mirror);
  return h !== undefined && h === staticPodHash(staticPod);
}

/**
 * CreateMirrorPod's body. The server assigns the mirror its own UID and resets the status; the
 * static pod's UID, resourceVersion and status are left out.
 */
export interface MirrorPodBody {
  kind: "Pod";
  apiVersion: "v1";
  metadata: Record<string, unknown> & { name: string; namespace?: string; annotations: Record<string, string> };
  spec: Pod["spec"];
}

export function buildMirrorPod(staticPod: Pod, node: { name: string; uid: string }): MirrorPodBody {
  const {
    uid: _uid,
    resourceVersion: _rv,
    creationTimestamp: _ct,
    deletionTimestamp: _dt,
    deletionGracePeriodSeconds: _dg,
    ...meta
  } = staticPod.metadata as Pod["metadata"] & Record<string, unknown>;
  return {
    kind: "Pod",
    apiVersion: "v1",
    metadata: {
      ...meta,
      annotations: { ...staticPod.metadata.annotations, [ConfigMirrorAnnotationKey]: staticPodHash(staticPod) ?? "" },
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name: node.name, uid: node.uid, controller: true }],
    },
    spec: staticPod.spec,
  };
}
