// Status manager (upstream pkg/kubelet/status/status_manager.go, local only): the latest v1
// PodStatus of each pod, served by /pods. A terminal phase (Succeeded/Failed) is never replaced by a
// non-terminal one — an evicted pod stays Failed/Evicted for as long as it is listed.
// Listeners are told of each set (upstream SetPodStatus → podStatusChannel); they must not block.
import type { PodStatus } from "./types.ts";

export interface StatusManager {
  get(uid: string): PodStatus | undefined;
  set(uid: string, status: PodStatus): void;
  /** Extra annotations shown on the API pod (e.g. from the eviction manager). */
  annotations(uid: string): Record<string, string> | undefined;
  setAnnotations(uid: string, a: Record<string, string>): void;
  delete(uid: string): void;
  uids(): string[];
  /** Calls `fn(uid)` after each set; returns an unsubscribe. */
  onChange(fn: (uid: string) => void): () => void;
}

export const isTerminalPhase = (s: PodStatus | undefined): boolean => s?.phase === "Failed" || s?.phase === "Succeeded";

export function createStatusManager(): StatusManager {
  const statuses = new Map<string, PodStatus>();
  const extra = new Map<string, Record<string, string>>();
  const listeners = new Set<(uid: string) => void>();
  const notify = (uid: string) => {
    for (const fn of listeners) fn(uid);
  };
  return {
    get: (uid) => statuses.get(uid),
    set(uid, status) {
      const old = statuses.get(uid);
      if (isTerminalPhase(old) && !isTerminalPhase(status)) {
        statuses.set(uid, { ...status, phase: old!.phase, reason: old!.reason, message: old!.message });
      } else statuses.set(uid, status);
      notify(uid);
    },
    annotations: (uid) => extra.get(uid),
    setAnnotations: (uid, a) => void extra.set(uid, { ...extra.get(uid), ...a }),
    delete(uid) {
      statuses.delete(uid);
      extra.delete(uid);
    },
    uids: () => [...statuses.keys()],
    onChange(fn) {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
  };
}
