// One JSON object per eviction cycle, for the agent's --eviction-trace file (JSON lines) and for
// anything else that wants the decision record: observations, thresholds met with their grace
// state, conditions, the threshold reclaimed, the top of the ranking and the victims.
import { podKey } from "../pod/pod-like.ts";
import { formatThresholdAmount } from "./message.ts";
import type { CycleReport, EvictionState } from "./synchronize.ts";
import { isHardThreshold } from "./threshold.ts";

export interface CycleRecord {
  time: string;
  observations: Record<string, { available: number; capacity: number }>;
  met: { signal: string; kind: "hard" | "soft"; threshold: string; graceRemainingSeconds: number; actionable: boolean }[];
  nodeConditions: string[];
  reclaim: { signal: string; resource: string } | null;
  nodeReclaim: { steps: string[]; relieved: boolean } | null;
  /** The first `rankedLimit` pods in eviction order, with what ranked them. */
  ranked: { pod: string; priority: number; usage: number; request: number; exceedsRequest: boolean; statsFound: boolean }[];
  evicted: { pod: string; signal: string; gracePeriodSeconds: number; message: string; escalated?: boolean }[];
  note?: string;
  error?: string;
}

export function cycleRecord(report: CycleReport, state: Pick<EvictionState, "firstObservedAt">, rankedLimit = 10): CycleRecord {
  const observations: CycleRecord["observations"] = {};
  for (const [sig, o] of Object.entries(report.observations ?? {})) observations[sig] = { available: o!.available, capacity: o!.capacity };
  return {
    time: new Date(report.timeMs).toISOString(),
    observations,
    met: (report.met ?? []).map((t) => {
      const o = report.observations[t.signal];
      const first = state.firstObservedAt.get(t) ?? report.timeMs;
      return {
        signal: t.signal,
        kind: isHardThreshold(t) ? "hard" : "soft",
        threshold: o ? formatThresholdAmount(t, o.capacity) : "",
        graceRemainingSeconds: Math.max(0, t.gracePeriodMs - (report.timeMs - first)) / 1000,
        actionable: report.actionable.includes(t),
      };
    }),
    nodeConditions: [...(report.conditions ?? [])],
    reclaim: report.reclaim ? { signal: report.reclaim.signal, resource: report.reclaim.resource } : null,
    nodeReclaim: report.nodeReclaim ?? null,
    ranked: (report.ranked ?? []).slice(0, rankedLimit).map((r) => ({
      pod: podKey(r.pod),
      priority: r.priority,
      usage: r.usage,
      request: r.request,
      exceedsRequest: r.exceedsRequest,
      statsFound: r.found,
    })),
    evicted: (report.evicted ?? []).map((e) => ({
      pod: podKey(e.pod),
      signal: e.signal,
      gracePeriodSeconds: e.gracePeriodSeconds,
      message: e.message,
      ...(e.escalated ? { escalated: true } : {}),
    })),
    ...(report.note ? { note: report.note } : {}),
    ...(report.error ? { error: report.error } : {}),
  };
}
