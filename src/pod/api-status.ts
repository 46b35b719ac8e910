// Pod status to the API server (upstream pkg/kubelet/status/status_manager.go syncPod): for every pod
// of the "api" source, the status the lifecycle computed is PATCHed to pods/<name>/status as a
// strategic merge patch with the pod's UID as precondition — only when it differs from what was last
// sent. A 409 is retried at the next sync; a 404 or a UID mismatch (pod gone or recreated) drops it.
// A static pod's status goes to its mirror pod, with the mirror's UID as precondition (upstream
// translates the static pod's UID to the mirror's); a static pod without a mirror is skipped.
// As upstream's SetPodStatus → podStatusChannel → syncPod, a status change is reported through
// podStatusChanged and sent at once (coalesced per pod, off the caller's stack); the periodic pass
// (upstream syncBatch, 10 s) reconciles whatever was missed or failed. A pod being deleted gets its
// final status first; once its containers are stopped and cleaned up it is deleted (grace 0, UID
// precondition), once: a finalizer may keep the object, with that status, for a while.
import { kv, log } from "../log.ts";
import { every, type Clock } from "../clock.ts";
import { isConflict, isNotFound, type KubeClient } from "../kube/index.ts";
import { stableJson } from "./static-pod.ts";
import type { Pod, PodStatus } from "./types.ts";
import { podKey } from "./pod-like.ts";

export interface ApiStatusSyncerOptions {
  client: KubeClient;
  clock: Clock;
  /** Pods of the api source (their latest set). */
  pods: () => Pod[];
  status: (uid: string) => PodStatus | undefined;
  /** Static pods (file/http sources) and their current mirror pod in the API. */
  staticPods?: () => Pod[];
  mirrorOf?: (staticPod: Pod) => Pod | undefined;
  /** Containers stopped and cgroup removed: a pod being deleted may then be removed from the API. */
  cleanedUp?: (pod: Pod) => boolean;
  /** The reconcile period (upstream syncPeriod, 10 s); changes go out at once via podStatusChanged. */
  periodMs?: number;
}

export interface ApiStatusSyncer {
  start(): void;
  stop(): void;
  syncOnce(): Promise<void>;
  /** The status of this pod UID (or the pod's worker state) changed: sync that pod soon, without blocking. */
  podStatusChanged(uid: string): void;
  /** Resolves when no change-triggered sync is queued or running (for tests). */
  whenFlushed(): Promise<void>;
}

/**
 * The status as a strategic merge patch: a condition sent before and gone now (PodResizePending once
 * the resize is allocated, PodResizeInProgress once done) gets a `$patch: delete` entry — conditions
 * merge by type, so leaving it out would keep it (upstream's patch is the diff of old and new status).
 */
export function withDeletedConditions(status: PodStatus, sentTypes: string[] | undefined): PodStatus {
  const now = new Set((status.conditions ?? []).map((c) => c.type));
  const gone = (sentTypes ?? []).filter((t) => !now.has(t));
  if (gone.length === 0) return status;
  const deletes = gone.map((type) => ({ type, $patch: "delete" }) as unknown as NonNullable<PodStatus["conditions"]>[number]);
  return { ...status, conditions: [...(status.conditions ?? []), ...deletes] };
}

/**
 * The status as a strategic merge patch. podIPs merge by `ip` in the Pod schema, so an IP sent alone
 * would be added to the old one (a new sandbox after a reboot: two IPs of one family, which the API
 * server refuses); they are the kubelet's alone and replaced whole, as upstream's two-way patch
 * (statusutil.PatchPodStatus) deletes the old entries.
 */
export function statusPatch(status: PodStatus): unknown {
  return status.podIPs?.length ? { ...status, podIPs: [...status.podIPs, { $patch: "replace" }] } : status;
}

export function createApiStatusSyncer(opts: ApiStatusSyncerOptions): ApiStatusSyncer {
  const sent = new Map<string, string>();
  /** The condition types last sent per pod: one no longer there is deleted by the patch. */
  const sentConditions = new Map<string, string[]>();
  /** Pods deleted from the API (a finalizer may keep them listed a while): not deleted again. */
  const deleted = new Set<string>();
  let stopPeriodic: (() => void) | undefined;
  let running = false;
  /** UIDs whose status changed since the last change-triggered sync. */
  const dirty = new Set<string>();
  let flushing: Promise<void> | undefined;

  /** True when the API has this status (sent now or before). */
  async function syncPod(pod: Pod, status: PodStatus): Promise<boolean> {
    const uid = pod.metadata.uid;
    const body = stableJson(status);
    if (sent.get(uid) === body) return true;
    const path = `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`;
    try {
      const patch = statusPatch(withDeletedConditions(status, sentConditions.get(uid)));
      await opts.client.request({ method: "PATCH", path, contentType: "application/strategic-merge-patch+json", body: { metadata: { uid }, status: patch } });
      sent.set(uid, body);
      sentConditions.set(
        uid,
        (status.conditions ?? []).map((c) => c.type),
      );
      log.info(`Patch status for pod ${kv({ pod: podKey(pod), podUID: uid, phase: status.phase })}`);
      return true;
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) {
        log.info(`Pod status not patched; retried at the next sync ${kv({ pod: podKey(pod), podUID: uid, reason: (e as Error).message })}`);
        return false;
      }
      log.warn(`Failed to update status for pod ${kv({ pod: podKey(pod), podUID: uid, error: (e as Error).message })}`);
      return false;
    }
  }

  /** Upstream canBeDeleted → DELETE with grace 0 and the UID as precondition; true once the API took it (or the pod is gone). */
  async function deletePod(pod: Pod): Promise<boolean> {
    const path = `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`;
    try {
      await opts.client.request({
        method: "DELETE",
        path,
        body: { kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } },
      });
      log.info(`Pod fully terminated and removed from etcd ${kv({ pod: podKey(pod), podUID: pod.metadata.uid })}`);
      return true;
    } catch (e) {
      if (isNotFound(e)) return true;
      if (!isConflict(e)) log.warn(`Failed to delete status for pod ${kv({ pod: podKey(pod), podUID: pod.metadata.uid, error: (e as Error).message })}`);
      return false;
    }
  }

  /** One pass over the pods (all of them, or only the UIDs in `only`). */
  async function syncPass(only?: Set<string>): Promise<void> {
    const wanted = (uid: string) => !only || only.has(uid);
    const pods = opts.pods();
    const mirrored = (opts.staticPods?.() ?? []).flatMap((p) => {
      if (!wanted(p.metadata.uid)) return [];
      const mirror = opts.mirrorOf?.(p);
      return mirror ? [{ p, mirror }] : [];
    });
    if (!only) {
      const live = new Set([...pods, ...mirrored.map((m) => m.mirror)].map((p) => p.metadata.uid));
      for (const uid of sent.keys()) if (!live.has(uid)) sent.delete(uid);
      for (const uid of sentConditions.keys()) if (!live.has(uid)) sentConditions.delete(uid);
      for (const uid of deleted) if (!live.has(uid)) deleted.delete(uid);
    }
    for (const { p, mirror } of mirrored) {
      const status = opts.status(p.metadata.uid);
      if (status) await syncPod(mirror, status);
    }
    for (const pod of pods) {
      const uid = pod.metadata.uid;
      if (!wanted(uid) || deleted.has(uid)) continue;
      // The final status first, then the deletion (upstream syncPod, then canBeDeleted): the API
      // object a finalizer keeps shows how its containers ended.
      const status = opts.status(uid);
      const reported = status ? await syncPod(pod, status) : true;
      if (reported && pod.metadata.deletionTimestamp && opts.cleanedUp?.(pod) && (await deletePod(pod))) deleted.add(uid);
    }
  }

  /** Passes never overlap: a change-triggered pass and the periodic one take turns. */
  let chain: Promise<void> = Promise.resolve();
  function exclusive(fn: () => Promise<void>): Promise<void> {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  }

  async function syncOnce(): Promise<void> {
    if (running) return;
    running = true;
    try {
      await exclusive(() => syncPass());
    } finally {
      running = false;
    }
  }

  function flush(): Promise<void> {
    flushing ??= (async () => {
      try {
        while (dirty.size > 0) {
          const batch = new Set(dirty);
          dirty.clear();
          await exclusive(() => syncPass(batch));
        }
      } catch (e) {
        log.warn(`Pod status sync failed ${kv({ error: (e as Error).message })}`);
      } finally {
        flushing = undefined;
      }
    })();
    return flushing;
  }

  return {
    start() {
      stopPeriodic = every(opts.clock, opts.periodMs ?? 10_000, syncOnce);
    },
    stop() {
      stopPeriodic?.();
    },
    syncOnce,
    podStatusChanged(uid) {
      dirty.add(uid);
      if (!flushing) queueMicrotask(() => void flush());
    },
    async whenFlushed() {
      while (flushing || dirty.size > 0) await (flushing ?? flush());
    },
  };
}
