// The pod resize conditions (upstream status_manager.go podResizeConditions: SetPodResizePendingCondition,
// SetPodResizeInProgressCondition, their Clear*, updatedPodResizeCondition): PodResizePending
// (reason Deferred or Infeasible) and PodResizeInProgress (no reason, or Error), both status True,
// with the generation of the resize they speak of.
import { rfc3339 } from "../../clock.ts";
import type { PodCondition } from "../types.ts";

interface ResizeCondition {
  reason: string;
  message: string;
  observedGeneration: number;
  lastProbeMs: number;
  lastTransitionMs: number;
}

export interface ResizeConditions {
  /** True when the reason or generation changed (an event is due). Any reason but Infeasible becomes Deferred. */
  setPending(uid: string, reason: string, message: string, generation: number, nowMs: number): boolean;
  clearPending(uid: string): void;
  /** Keeps an existing condition's generation (and its reason and message when none is given); true when it changed. */
  setInProgress(uid: string, reason: string, message: string, generation: number, nowMs: number): boolean;
  /** The cleared condition's generation, undefined when there was none. */
  clearInProgress(uid: string): number | undefined;
  isDeferred(uid: string): boolean;
  /** The pod's conditions as the status shows them: PodResizePending, then PodResizeInProgress. */
  list(uid: string): PodCondition[];
  forget(uid: string): void;
}

function updated(old: ResizeCondition | undefined, reason: string, message: string, generation: number, nowMs: number): ResizeCondition {
  return {
    reason,
    message,
    observedGeneration: generation,
    lastProbeMs: nowMs,
    lastTransitionMs: old === undefined || old.reason !== reason ? nowMs : old.lastTransitionMs,
  };
}

function toPodCondition(type: string, c: ResizeCondition): PodCondition {
  return {
    type,
    status: "True",
    lastProbeTime: rfc3339(c.lastProbeMs),
    lastTransitionTime: rfc3339(c.lastTransitionMs),
    ...(c.observedGeneration ? { observedGeneration: c.observedGeneration } : {}),
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
  };
}

export function createResizeConditions(): ResizeConditions {
  const pending = new Map<string, ResizeCondition>();
  const inProgress = new Map<string, ResizeCondition>();
  return {
    setPending(uid, reason, message, generation, nowMs) {
      const why = reason === "Infeasible" ? "Infeasible" : "Deferred";
      const old = pending.get(uid);
      pending.set(uid, updated(old, why, message, generation, nowMs));
      return !old || old.reason !== why || old.observedGeneration !== generation;
    },
    clearPending: (uid) => void pending.delete(uid),
    setInProgress(uid, reason, message, generation, nowMs) {
      const old = inProgress.get(uid);
      const r = old && !reason && !message ? old.reason : reason;
      const m = old && !reason && !message ? old.message : message;
      inProgress.set(uid, updated(old, r, m, old?.observedGeneration ?? generation, nowMs));
      return !old || old.reason !== r || old.message !== m;
    },
    clearInProgress(uid) {
      const old = inProgress.get(uid);
      inProgress.delete(uid);
      return old?.observedGeneration;
    },
    isDeferred: (uid) => pending.get(uid)?.reason === "Deferred",
    list(uid) {
      const out: PodCondition[] = [];
      const p = pending.get(uid);
      if (p) out.push(toPodCondition("PodResizePending", p));
      const i = inProgress.get(uid);
      if (i) out.push(toPodCondition("PodResizeInProgress", i));
      return out;
    },
    forget(uid) {
      pending.delete(uid);
      inProgress.delete(uid);
    },
  };
}
