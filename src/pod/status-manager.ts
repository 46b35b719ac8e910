// Status manager (upstream pkg/kubelet/status/status_manager.go, local only): the latest v1
// PodStatus of each pod, served by /pods. A terminal phase (Succeeded/Failed) is never replaced by a
// non-terminal one — an evicted pod stays Failed/Evicted for as long as it is listed.
import type { PodStatus } from "./types.ts";

export interface StatusManager {
  get(uid: string): PodStatus | undefined;
  set(uid: string, status: PodStatus): void;
  /** Extra annotations shown on the API pod (e.g. from the eviction manager). */
  annotations(uid: string): Record<string, string> | undefined;
  setAnnotations(uid: string, a: Record<string, string>): void;
  delete(uid: string): void;
  uids(): string[];
}

export const isTerminalPhase = (s: PodStatus | undefined): boolean => s?.phase === "Failed" || s?.phase === "Succeeded";

export function createStatusManager(): StatusManager {
  const statuses = new Map<string, PodStatus>();
  const extra = new Map<string, Record<string, string>>();
  return {
    get: (uid) => statuses.get(uid),
    set(uid, status) {
      const old = statuses.get(uid);
      if (isTerminalPhase(old) && !isTerminalPhase(status)) {
        statuses.set(uid, { ...status, phase: old!.phase, reason: old!.reason, message: old!.message });
        return;
      }
      statuses.set(uid, status);
    },
    annotations: (uid) => extra.get(uid),
    setAnnotations: (uid, a) => void extra.set(uid, { ...extra.get(uid), ...a }),
    delete(uid) {
      statuses.delete(uid);
      extra.delete(uid);
    },
    uids: () => [...statuses.keys()],
  };
}
