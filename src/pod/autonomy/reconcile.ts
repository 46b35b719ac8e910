// What happens to the pods a node ran from its autonomy cache once the API server lists its pods
// again (the decision only; the config mux's SET carries it out, src/pod/sources/config-mux.ts):
//   same UID, same spec and metadata → adopt (the running containers are kept, no restart);
//   same UID, changed                → update (as any pod update);
//   deletionTimestamp set, or absent → stop (within the pod's grace period);
//   listed but not cached            → start.
// Pure: plain pods in, one decision per pod out, logged one line each by the caller.
import { ConfigFirstSeenAnnotationKey, ConfigSourceAnnotationKey, stableJson } from "../static-pod.ts";
import type { Pod } from "../types.ts";

export type ReconcileDecision = "adopt" | "update" | "stop" | "start";

export interface PodReconcile {
  uid: string;
  pod: Pod;
  decision: ReconcileDecision;
  /** Why, for the log line. */
  reason: string;
}

/** The pod as the config mux compares it: no status, none of the annotations the mux itself adds. */
export function podSpecKey(p: Pod): string {
  const annotations = { ...p.metadata.annotations };
  delete annotations[ConfigFirstSeenAnnotationKey];
  delete annotations[ConfigSourceAnnotationKey];
  return stableJson({ ...p, status: undefined, metadata: { ...p.metadata, annotations } });
}

/** One decision per pod of either set: `cached` what the node runs from its cache, `listed` the API server's list. */
export function reconcileWithApi(cached: readonly Pod[], listed: readonly Pod[]): PodReconcile[] {
  const byUid = new Map(listed.map((p) => [p.metadata.uid, p]));
  const out: PodReconcile[] = [];
  for (const c of cached) {
    const l = byUid.get(c.metadata.uid);
    if (!l) out.push({ uid: c.metadata.uid, pod: c, decision: "stop", reason: "deleted from the API server" });
    else if (l.metadata.deletionTimestamp) out.push({ uid: c.metadata.uid, pod: l, decision: "stop", reason: "being deleted" });
    else if (podSpecKey(l) !== podSpecKey(c)) out.push({ uid: c.metadata.uid, pod: l, decision: "update", reason: "changed in the API server" });
    else out.push({ uid: c.metadata.uid, pod: l, decision: "adopt", reason: "unchanged" });
  }
  const known = new Set(cached.map((p) => p.metadata.uid));
  for (const l of listed) if (!known.has(l.metadata.uid)) out.push({ uid: l.metadata.uid, pod: l, decision: "start", reason: "new in the API server" });
  return out;
}
