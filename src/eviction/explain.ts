// `bunlet eviction explain`: one synchronize of the real manager over a node's pods and stats,
// with a kill function that only records, rendered for a human (or as JSON): observations,
// thresholds with their amounts and grace state, conditions, the ranking and the next victim.
import { podKey, type PodLike } from "../pod/pod-like.ts";
import type { Summary } from "../stats/summary.ts";
import { createManualClock } from "../manual-clock.ts";
import { createEvictionManager, type EvictionManager } from "./manager.ts";
import { evictionMessage, formatAmount, formatThresholdAmount } from "./message.ts";
import { makeSignalObservations, podStatsByUid } from "./observations.ts";
import { rankFuncFor } from "./rank.ts";
import { signalIsCount, type Signal } from "./signals.ts";
import { exemptFromEviction, gracePeriodOverride, sortThresholdsForReclaim, type CycleReport, type EvictionState } from "./synchronize.ts";
import { jsonThreshold, stepTimeMs, type JsonThreshold } from "./simulate.ts";
import { thresholdAmount } from "./threshold.ts";
import type { EvictionConfig, Logger } from "./types.ts";

type EvictionSummary = { pod: string; gracePeriodSeconds: number; message: string; annotations: Record<string, string> };

export interface ExplainReport {
  /** offline: one cycle over given stats; live: a running manager's state. */
  mode: "offline" | "live";
  node: string;
  time: string;
  layout: { dedicatedImageFs: boolean; splitContainerImageFs: boolean };
  observations: Record<string, { available: number; capacity: number; availableText: string; capacityText: string }>;
  thresholds: (JsonThreshold & { amount: number | null; amountText: string | null; met: boolean; actionable: boolean; graceRemainingSeconds: number | null })[];
  nodeConditions: string[];
  reclaim: { signal: string; resource: string } | null;
  /** The signal the ranking is for: the one being reclaimed, else memory.available (hypothetical). */
  rankedFor: string;
  ranked: { pod: string; qos: string; priority: number; statsFound: boolean; usage: number; request: number; exceedsRequest: boolean; exempt: boolean }[];
  nextEviction: EvictionSummary | null;
  /** live only: the eviction the last cycle made, and kills still running. */
  lastEviction?: EvictionSummary | null;
  inFlight?: { pod: string; gracePeriodSeconds: number; startedSecondsAgo: number; finished: boolean }[];
  note?: string;
}

/** Offline explain: one synchronize of a throw-away manager over the given pods and stats. */
export async function explain(input: { config: EvictionConfig; pods: PodLike[]; summary: Summary; logger?: Logger }): Promise<ExplainReport> {
  const t = stepTimeMs(input.summary, Date.now() - 10_000);
  const clock = createManualClock(t);
  const manager = createEvictionManager({
    config: input.config,
    clock,
    summary: async () => input.summary,
    activePods: () => input.pods,
    killPod: async () => {},
    reclaim: { deleteUnusedContainers: async () => {}, deleteUnusedImages: async () => {} },
    ...(input.logger ? { logger: input.logger } : {}),
  });
  const r = await manager.synchronize();
  if (r.error) throw new Error(r.error);
  const x = buildReport(input.config, input.pods, input.summary, manager.state(), r, t);
  const ev = r.evicted[0];
  x.nextEviction = ev ? { pod: podKey(ev.pod), gracePeriodSeconds: ev.gracePeriodSeconds, message: ev.message, annotations: ev.annotations } : null;
  return x;
}

/**
 * Live explain from a running manager (for an agent endpoint such as /debug/eviction): the real
 * grace clocks, conditions and in-flight kills; the next victim is computed, not evicted.
 */
export function explainLive(manager: EvictionManager, pods: PodLike[], config: EvictionConfig, nowMs = Date.now()): ExplainReport | undefined {
  const st = manager.state();
  const r = st.lastReport;
  if (!r || !st.lastSummary) return undefined;
  const x = buildReport(config, pods, st.lastSummary, st, r, r.timeMs);
  x.mode = "live";
  x.inFlight = [...st.inFlight.values()].map((k) => ({
    pod: podKey(k.pod),
    gracePeriodSeconds: k.gracePeriodSeconds,
    startedSecondsAgo: Math.max(0, nowMs - k.startedAtMs) / 1000,
    finished: k.settled,
  }));
  const ev = r.evicted[0];
  x.lastEviction = ev ? { pod: podKey(ev.pod), gracePeriodSeconds: ev.gracePeriodSeconds, message: ev.message, annotations: ev.annotations } : null;
  if (r.reclaim && r.actionableFresh.length > 0) {
    const busy = new Set(st.inFlight.keys());
    const next = r.ranked.find((p) => !exemptFromEviction(p.pod, config.evictStaticPods) && !busy.has(p.pod.metadata.uid ?? ""));
    if (next) {
      const byUid = podStatsByUid(st.lastSummary);
      const { message, annotations } = evictionMessage(
        r.reclaim.resource,
        next.pod,
        next.pod.metadata.uid ? byUid.get(next.pod.metadata.uid) : undefined,
        sortThresholdsForReclaim(r.actionableFresh),
        r.observations,
      );
      x.nextEviction = {
        pod: podKey(next.pod),
        gracePeriodSeconds: gracePeriodOverride(r.reclaim.threshold, next.pod, config.maxPodGracePeriodSeconds),
        message,
        annotations,
      };
    }
  }
  return x;
}

function buildReport(config: EvictionConfig, pods: PodLike[], summary: Summary, st: Readonly<EvictionState>, r: CycleReport, t: number): ExplainReport {
  const obs = makeSignalObservations(summary).observations;
  const observations: ExplainReport["observations"] = {};
  for (const [sig, o] of Object.entries(obs)) {
    const count = signalIsCount(sig as Signal);
    observations[sig] = {
      available: o!.available,
      capacity: o!.capacity,
      availableText: formatAmount(o!.available, count),
      capacityText: formatAmount(o!.capacity, count),
    };
  }
  const thresholds = st.thresholds.map((th) => {
    const o = obs[th.signal];
    const first = st.firstObservedAt.get(th);
    return {
      ...jsonThreshold(th),
      amount: o ? thresholdAmount(th.value, o.capacity) : null,
      amountText: o ? formatThresholdAmount(th, o.capacity) : null,
      met: r.met.includes(th),
      actionable: r.actionable.includes(th),
      graceRemainingSeconds: first === undefined ? null : Math.max(0, th.gracePeriodMs - (t - first)) / 1000,
    };
  });
  const rankedFor: Signal = r.reclaim?.signal ?? "memory.available";
  let ranked = r.ranked;
  if (!r.reclaim) {
    const byUid = podStatsByUid(summary);
    ranked = rankFuncFor(rankedFor, st.layout ?? { dedicatedImageFs: false, splitContainerImageFs: false })(pods, (p) =>
      p.metadata.uid ? byUid.get(p.metadata.uid) : undefined,
    );
  }
  return {
    mode: "offline",
    node: summary.node.nodeName,
    time: new Date(t).toISOString(),
    layout: st.layout ?? { dedicatedImageFs: false, splitContainerImageFs: false },
    observations,
    thresholds,
    nodeConditions: [...r.conditions],
    reclaim: r.reclaim ? { signal: r.reclaim.signal, resource: r.reclaim.resource } : null,
    rankedFor,
    ranked: ranked.map((x) => ({
      pod: podKey(x.pod),
      qos: x.qos,
      priority: x.priority,
      statsFound: x.found,
      usage: x.usage,
      request: x.request,
      exceedsRequest: x.exceedsRequest,
      exempt: exemptFromEviction(x.pod, config.evictStaticPods),
    })),
    nextEviction: null,
    ...(r.note ? { note: r.note } : {}),
  };
}

const pct = (v: { percentage?: number; quantity?: number }, count: boolean) =>
  v.percentage !== undefined ? `${+(v.percentage * 100).toPrecision(6)}%` : formatAmount(v.quantity!, count);

export function renderExplain(x: ExplainReport): string {
  const lines: string[] = [];
  lines.push(
    `${x.mode === "live" ? "live state of" : "one cycle over"} node ${x.node}, stats at ${x.time}, filesystems: ${x.layout.dedicatedImageFs ? (x.layout.splitContainerImageFs ? "split image fs" : "dedicated image fs") : "single fs"}`,
  );
  lines.push("observations:");
  for (const [sig, o] of Object.entries(x.observations)) {
    const free = o.capacity > 0 ? ` (${((o.available / o.capacity) * 100).toFixed(1)}% free)` : "";
    lines.push(`  ${sig.padEnd(28)} available=${o.availableText} capacity=${o.capacityText}${free}`);
  }
  if (Object.keys(x.observations).length === 0) lines.push("  (none)");
  lines.push("thresholds:");
  for (const t of x.thresholds) {
    const count = signalIsCount(t.signal as Signal);
    const kind = t.gracePeriodSeconds === 0 ? "hard" : `soft grace=${t.gracePeriodSeconds}s`;
    const min = t.minReclaim ? ` minReclaim=${pct(t.minReclaim, count)}` : "";
    const state =
      t.amountText === null ? "not observed" : t.met ? (t.actionable ? "MET, actionable" : `MET, grace remaining ${t.graceRemainingSeconds}s`) : "not met";
    lines.push(`  ${t.signal} < ${pct(t.value, count)} (${kind}${min}) = ${t.amountText ?? "?"}: ${state}`);
  }
  lines.push(`node conditions: ${x.nodeConditions.join(", ") || "none"}`);
  lines.push(`reclaiming: ${x.reclaim ? `${x.reclaim.signal} (${x.reclaim.resource})` : "nothing"}`);
  lines.push(`ranking for ${x.rankedFor}${x.reclaim ? "" : " (if it were under pressure)"}:`);
  x.ranked.forEach((p, i) => {
    const flags = [p.statsFound ? "" : "no-stats", p.exceedsRequest ? "exceeds-request" : "", p.exempt ? "exempt(critical/static/mirror)" : ""]
      .filter(Boolean)
      .join(" ");
    lines.push(`  ${String(i + 1).padStart(3)}. ${p.pod} qos=${p.qos} priority=${p.priority} usage=${p.usage} request=${p.request}${flags ? ` ${flags}` : ""}`);
  });
  if (x.ranked.length === 0) lines.push("  (no pods)");
  for (const k of x.inFlight ?? [])
    lines.push(
      `eviction in flight: ${k.pod} grace=${k.gracePeriodSeconds}s started ${k.startedSecondsAgo}s ago${k.finished ? " (kill returned, waiting for cleanup)" : ""}`,
    );
  if (x.lastEviction) lines.push(`last eviction: ${x.lastEviction.pod} grace=${x.lastEviction.gracePeriodSeconds}s: ${x.lastEviction.message.trim()}`);
  if (x.nextEviction) {
    lines.push(`next eviction: ${x.nextEviction.pod} grace=${x.nextEviction.gracePeriodSeconds}s`);
    lines.push(`  why: ${x.nextEviction.message.trim()}`);
  } else {
    lines.push(`next eviction: none${x.note ? ` (${x.note})` : ""}`);
  }
  return lines.join("\n");
}
