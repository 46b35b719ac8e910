// `bunlet eviction simulate`: the real manager (same synchronize) driven by a fake clock, one
// Summary per cycle, a kill function that records instead of killing, and node-level reclaim that
// does nothing (so the re-check after it sees the same stats). An evicted pod leaves the active
// set for the following steps, as it would once killed.
import { podKey, podUid, type PodLike } from "../pod/pod-like.ts";
import type { Summary } from "../stats/summary.ts";
import { createManualClock } from "../manual-clock.ts";
import { createEvictionManager } from "./manager.ts";
import { statsTimeMs } from "./observations.ts";
import { float32ToShortest, type Threshold, type ThresholdValue } from "./threshold.ts";
import { quantityValue } from "../config/quantity.ts";
import type { AdmitResult } from "./admission.ts";
import type { CycleReport } from "./synchronize.ts";
import type { EvictionConfig, Logger } from "./types.ts";

export interface SimulateInput {
  config: EvictionConfig;
  pods: PodLike[];
  steps: { source: string; summary: Summary }[];
  candidates?: PodLike[];
  logger?: Logger;
}

export interface JsonThresholdValue {
  quantity?: number;
  percentage?: number;
}

export interface JsonThreshold {
  signal: string;
  operator: string;
  value: JsonThresholdValue;
  gracePeriodSeconds: number;
  minReclaim: JsonThresholdValue | null;
}

export interface JsonEviction {
  pod: string;
  gracePeriodSeconds: number;
  message: string;
  annotations: Record<string, string>;
}

export interface SimulateStep {
  time: string;
  source: string;
  observations: Record<string, { available: number; capacity: number }>;
  thresholdsMet: string[];
  nodeConditions: string[];
  reclaim: { signal: string; resource: string } | null;
  ranked: string[];
  evicted: JsonEviction | null;
  /** Local-storage evictions can take several pods in one cycle; the rest are listed here. */
  alsoEvicted?: JsonEviction[];
  nodeReclaim?: { steps: string[]; relieved: boolean };
  note?: string;
  admission: Record<string, { admit: boolean; reason?: string; message?: string }>;
}

export interface SimulateOutput {
  thresholds: JsonThreshold[];
  steps: SimulateStep[];
}

export function jsonValue(v: ThresholdValue): JsonThresholdValue {
  return v.quantity !== undefined ? { quantity: quantityValue(v.quantity) } : { percentage: float32ToShortest(v.percentage) };
}

export function jsonThreshold(t: Threshold): JsonThreshold {
  return {
    signal: t.signal,
    operator: t.operator,
    value: jsonValue(t.value),
    gracePeriodSeconds: t.gracePeriodMs / 1000,
    minReclaim: t.minReclaim ? jsonValue(t.minReclaim) : null,
  };
}

/** The simulated time of a step: node.memory.time, else the latest section time, else previous + 10 s. */
export function stepTimeMs(summary: Summary, previousMs: number | undefined): number {
  const n = summary.node;
  const mem = statsTimeMs(n.memory?.time);
  if (mem !== 0) return mem;
  const times = [n.fs?.time, n.runtime?.imageFs?.time, n.runtime?.containerFs?.time, n.rlimit?.time, n.cpu?.time].map(statsTimeMs);
  const latest = Math.max(0, ...times);
  if (latest !== 0) return latest;
  return (previousMs ?? 0) + 10_000;
}

const jsonEviction = (e: CycleReport["evicted"][number]): JsonEviction => ({
  pod: podKey(e.pod),
  gracePeriodSeconds: e.gracePeriodSeconds,
  message: e.message,
  annotations: e.annotations,
});

export async function simulate(input: SimulateInput): Promise<SimulateOutput> {
  const clock = createManualClock(0);
  let current: Summary | undefined;
  let active = [...input.pods];
  const manager = createEvictionManager({
    config: input.config,
    clock,
    summary: async () => {
      if (!current) throw new Error("no summary for this step");
      return current;
    },
    activePods: () => active,
    killPod: async (pod) => {
      const uid = podUid(pod);
      active = active.filter((p) => podUid(p) !== uid);
    },
    reclaim: { deleteUnusedContainers: async () => {}, deleteUnusedImages: async () => {} },
    ...(input.logger ? { logger: input.logger } : {}),
  });
  const steps: SimulateStep[] = [];
  let prev: number | undefined;
  for (const step of input.steps) {
    const t = stepTimeMs(step.summary, prev);
    if (prev !== undefined && t < prev) {
      throw new Error(
        `${step.source}: node.memory.time ${new Date(t).toISOString()} is before the previous step's ${new Date(prev).toISOString()}; steps must be in time order`,
      );
    }
    prev = t;
    clock.set(t);
    current = step.summary;
    const r = await manager.synchronize();
    if (r.error) throw new Error(`${step.source}: ${r.error}`);
    const observations: SimulateStep["observations"] = {};
    for (const [sig, o] of Object.entries(r.observations)) observations[sig] = { available: o!.available, capacity: o!.capacity };
    const admission: SimulateStep["admission"] = {};
    for (const c of input.candidates ?? []) {
      const a: AdmitResult = manager.admit(c);
      admission[podKey(c)] = { admit: a.admit, reason: a.reason ?? "", message: a.message ?? "" };
    }
    const [first, ...rest] = r.evicted;
    steps.push({
      time: new Date(t).toISOString(),
      source: step.source,
      observations,
      thresholdsMet: [...new Set(r.met.map((x) => x.signal))],
      nodeConditions: [...r.conditions],
      reclaim: r.reclaim ? { signal: r.reclaim.signal, resource: r.reclaim.resource } : null,
      ranked: r.ranked.map((x) => podKey(x.pod)),
      evicted: first ? jsonEviction(first) : null,
      ...(rest.length > 0 ? { alsoEvicted: rest.map(jsonEviction) } : {}),
      ...(r.nodeReclaim ? { nodeReclaim: r.nodeReclaim } : {}),
      ...(r.note ? { note: r.note } : {}),
      admission,
    });
    // Let the recording kills settle so the next step sees the pods gone.
    await manager.idle();
    await Promise.resolve();
  }
  return { thresholds: manager.state().thresholds.map(jsonThreshold), steps };
}
