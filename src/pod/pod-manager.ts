// The desired pods (upstream pkg/kubelet/pod/pod_manager.go): what the sources currently want on this
// node, by UID and by namespace/name. Pods leave it only when their source drops them.
import type { Pod } from "./types.ts";
import { podKey, podKeyOf } from "./pod-like.ts";

export interface PodManager {
  add(pod: Pod): void;
  remove(uid: string): Pod | undefined;
  get(uid: string): Pod | undefined;
  byFullName(namespace: string, name: string): Pod | undefined;
  pods(): Pod[];
  uids(): Set<string>;
}

export function createPodManager(): PodManager {
  const byUid = new Map<string, Pod>();
  const byName = new Map<string, Pod>();
  return {
    add(pod) {
      const old = byUid.get(pod.metadata.uid);
      if (old) byName.delete(podKey(old));
      byUid.set(pod.metadata.uid, pod);
      byName.set(podKey(pod), pod);
    },
    remove(uid) {
      const p = byUid.get(uid);
      if (!p) return undefined;
      byUid.delete(uid);
      const k = podKey(p);
      if (byName.get(k) === p) byName.delete(k);
      return p;
    },
    get: (uid) => byUid.get(uid),
    byFullName: (ns, name) => byName.get(podKeyOf(ns, name)),
    pods: () => [...byUid.values()],
    uids: () => new Set(byUid.keys()),
  };
}
