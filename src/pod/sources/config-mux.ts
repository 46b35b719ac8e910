// Merges the per-source pod streams into one incremental stream, as upstream pkg/kubelet/config
// (PodConfig with PodConfigNotificationIncremental): each source keeps its own set of pods by UID;
// a SET replaces that set; the merge emits REMOVE, ADD, UPDATE, DELETE and RECONCILE updates in that
// order, only when non-empty. Pods identical to what we already have produce nothing, so sources may
// resend their full state freely (the file source does every fileCheckFrequency).
// Every pod is stamped with the source it came through (upstream podStorage.updatePods: "Annotate the
// pod with the source before any comparison"), so kubernetes.io/config.source — which makes a pod
// static, hence critical — can never be set by whoever wrote an API object.
import { kv, log } from "../../log.ts";
import { rfc3339, type Clock } from "../../clock.ts";
import { ConfigFirstSeenAnnotationKey, ConfigSourceAnnotationKey, stableJson } from "../static-pod.ts";
import type { Pod } from "../types.ts";
import type { PodUpdate } from "./update.ts";
import { podKey } from "../pod-like.ts";

export interface PodConfig {
  /** Feeds one update from `source` (the update's own source field is ignored). */
  merge(source: string, update: Omit<PodUpdate, "source">): void;
  /** Sources that have sent at least one SET (upstream SeenAllSources). */
  seenAllSources(expected: readonly string[]): boolean;
  /** Current merged pods of every source. */
  pods(): Pod[];
}

export function createPodConfig(opts: { clock: Clock; onUpdate: (u: PodUpdate) => void }): PodConfig {
  const bySource = new Map<string, Map<string, Pod>>();
  const seen = new Set<string>();
  // The very objects of each source's last SET, by UID: a source that sends the same object again
  // (the file source's unchanged manifests, every 20 s) sent an unchanged pod — no clone, no compare.
  const lastSet = new Map<string, Map<string, Pod>>();

  function specKey(p: Pod): string {
    // Everything but status and our own first-seen annotation decides "changed" (upstream
    // checkAndUpdatePod compares spec, labels, annotations, deletion fields).
    const annotations = { ...p.metadata.annotations };
    delete annotations[ConfigFirstSeenAnnotationKey];
    return stableJson({ ...p, status: undefined, metadata: { ...p.metadata, annotations } });
  }

  /** Upstream filterInvalidPods: the second pod with the same namespace/name in a source is dropped. */
  function dedupe(source: string, pods: Pod[]): Pod[] {
    const names = new Set<string>();
    return pods.filter((p) => {
      const key = podKey(p);
      if (names.has(key)) {
        log.warn(`pod rejected: duplicate pod name ${kv({ source, pod: key, uid: p.metadata.uid })}`);
        return false;
      }
      names.add(key);
      return true;
    });
  }

  function merge(source: string, update: Omit<PodUpdate, "source">): void {
    let current = bySource.get(source);
    if (!current) bySource.set(source, (current = new Map()));
    const adds: Pod[] = [];
    const updates: Pod[] = [];
    const deletes: Pod[] = [];
    const removes: Pod[] = [];
    const reconciles: Pod[] = [];

    const upsert = (pods: Pod[], into: Map<string, Pod>, sent?: { last?: Map<string, Pod>; next: Map<string, Pod> }) => {
      for (const pod of dedupe(source, pods)) {
        const uid = pod.metadata.uid;
        const existing = current.get(uid);
        sent?.next.set(uid, pod);
        if (existing && sent?.last?.get(uid) === pod) {
          into.set(uid, existing);
          continue;
        }
        if (!existing) {
          const p = structuredClone(pod);
          p.metadata.annotations = {
            ...p.metadata.annotations,
            [ConfigSourceAnnotationKey]: source,
            [ConfigFirstSeenAnnotationKey]: rfc3339Nano(opts.clock.now()),
          };
          into.set(uid, p);
          adds.push(p);
          continue;
        }
        const p = structuredClone(pod);
        p.metadata.annotations = {
          ...p.metadata.annotations,
          [ConfigSourceAnnotationKey]: source,
          [ConfigFirstSeenAnnotationKey]: existing.metadata.annotations?.[ConfigFirstSeenAnnotationKey] ?? rfc3339Nano(opts.clock.now()),
        };
        into.set(uid, p);
        // Upstream checkAndUpdatePod: a newly set deletionTimestamp is a DELETE (graceful stop).
        if (specKey(existing) !== specKey(p)) (p.metadata.deletionTimestamp && !existing.metadata.deletionTimestamp ? deletes : updates).push(p);
        else if (stableJson(existing.status) !== stableJson(p.status)) reconciles.push(p);
        else into.set(uid, existing);
      }
    };

    // Only a run of SETs may skip: any other op changes the source's pods behind lastSet.
    if (update.op !== "SET") lastSet.delete(source);
    switch (update.op) {
      case "ADD":
      case "UPDATE":
      case "DELETE":
        upsert(update.pods, current);
        if (update.op === "DELETE") deletes.push(...updates.splice(0));
        break;
      case "REMOVE":
        for (const pod of update.pods) {
          const existing = current.get(pod.metadata.uid);
          if (existing) {
            current.delete(pod.metadata.uid);
            removes.push(existing);
          }
        }
        break;
      case "SET": {
        seen.add(source);
        const next = new Map<string, Pod>();
        const sent = { last: lastSet.get(source), next: new Map<string, Pod>() };
        upsert(update.pods, next, sent);
        lastSet.set(source, sent.next);
        for (const [uid, old] of current) if (!next.has(uid)) removes.push(old);
        bySource.set(source, next);
        break;
      }
      case "RECONCILE":
        upsert(update.pods, current);
        reconciles.push(...updates.splice(0));
        break;
    }

    const emit = (op: PodUpdate["op"], pods: Pod[]) => {
      if (pods.length > 0) opts.onUpdate({ op, pods, source });
    };
    emit("REMOVE", removes);
    emit("ADD", adds);
    emit("UPDATE", updates);
    emit("DELETE", deletes);
    emit("RECONCILE", reconciles);
  }

  return {
    merge,
    seenAllSources: (expected) => expected.every((s) => seen.has(s)),
    pods: () => [...bySource.values()].flatMap((m) => [...m.values()]),
  };
}

/** Go's RFC3339Nano renders as 2006-01-02T15:04:05.999999999Z07:00 (trailing zeros trimmed). */
function rfc3339Nano(ms: number): string {
  const frac = ms % 1000;
  return frac === 0 ? rfc3339(ms) : new Date(ms).toISOString().replace(/0+Z$/, "Z");
}
