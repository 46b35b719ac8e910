// What the eviction record file (record-file.ts) is fed and what it decides: each cycle's evictions
// written to it off the eviction path — counts by signal, and the static pods evicted — and a static pod
// refused at admission while the file names its UID (its manifest), across restarts.
import type { Clock } from "../clock.ts";
import { kv, log } from "../log.ts";
import type { PodAdmitHandler, PodLifecycle } from "../pod/lifecycle-types.ts";
import { CONFIG_SOURCE_ANNOTATION, isStaticPod, podKeyOf } from "../pod/pod-like.ts";
import type { EvictionRecordStore } from "./record-file.ts";
import type { CycleReport } from "./state.ts";

/**
 * The cycle's evictions into the record file, off the eviction path (the kill is already on its way;
 * the write runs on a later tick). Once a minute, evicted pods no source delivers any more are
 * forgotten: their manifest changed (new UID) or went.
 */
export function persistEvictions(records: EvictionRecordStore, lifecycle: PodLifecycle, clock: Clock): (report: CycleReport) => void {
  let lastPruneMs = -Infinity;
  return (report) => {
    const done = report.evicted.filter((e) => !e.escalated);
    const pruneDue = clock.now() - lastPruneMs >= 60_000 && lifecycle.sourcesReady();
    if (done.length === 0 && !pruneDue) return;
    const evictedAt = new Date(report.timeMs).toISOString();
    setTimeout(() => {
      if (done.length > 0)
        void records.record(
          done.map((e) => ({
            signal: e.signal,
            pod:
              isStaticPod(e.pod) && e.pod.metadata.uid
                ? {
                    uid: e.pod.metadata.uid,
                    namespace: e.pod.metadata.namespace ?? "default",
                    name: e.pod.metadata.name,
                    source: e.pod.metadata.annotations?.[CONFIG_SOURCE_ANNOTATION] ?? "",
                    signal: e.signal,
                    message: e.message,
                    evictedAt,
                  }
                : undefined,
          })),
        );
      if (pruneDue) {
        lastPruneMs = clock.now();
        void records.prune(new Set(lifecycle.listPodsForApi().map((p) => p.metadata.uid)));
      }
    }, 0);
  };
}

/** Refuses a static pod whose UID (its manifest) was evicted before, with the eviction's message. */
export function evictedStaticPodAdmitHandler(records: Pick<EvictionRecordStore, "evicted">): PodAdmitHandler {
  return (pod) => {
    const uid = pod.metadata.uid;
    const rec = uid && isStaticPod(pod) ? records.evicted(uid) : undefined;
    if (!rec) return { admit: true };
    const key = podKeyOf(rec.namespace, rec.name);
    log.warn(
      `static pod stays evicted until its manifest changes or \`bunlet eviction clear ${key}\` ${kv({ pod: key, uid, evictedAt: rec.evictedAt, signal: rec.signal })}`,
    );
    return { admit: false, reason: "Evicted", message: rec.message };
  };
}
