// Threshold data model and the arithmetic upstream does on it (docs/eviction-contract.md#data-model, #percentages,
// #thresholds-met).
import type { Quantity } from "../config/quantity.ts";
import { quantityValue } from "../config/quantity.ts";
import type { Signal } from "./signals.ts";

/** Exactly one of quantity (bytes or a count) or percentage (a float32 fraction 0..1). */
export type ThresholdValue = { quantity: Quantity; percentage?: undefined } | { percentage: number; quantity?: undefined };

export interface Threshold {
  signal: Signal;
  /** Always LessThan: upstream implies it from the signal. */
  operator: "LessThan";
  value: ThresholdValue;
  /** 0 = hard threshold; anything else is a soft threshold's grace period. */
  gracePeriodMs: number;
  minReclaim?: ThresholdValue;
}

export interface Observation {
  available: number;
  capacity: number;
  /** Sample time in ms since the epoch; 0 = unknown (Go zero time). */
  timeMs: number;
}

export type Observations = Partial<Record<Signal, Observation>>;

/** Hard vs soft is decided only by the grace period (upstream helpers.go isHardEvictionThreshold). */
export const isHardThreshold = (t: Threshold): boolean => t.gracePeriodMs === 0;

/**
 * GetThresholdQuantity: a quantity as-is, a percentage as trunc(capacity × float32 fraction).
 * The fraction is already a float32 value; multiplying in float64 and truncating matches Go
 * (20% of 1000Mi = 209715203; docs/eviction-contract.md#percentages).
 */
export function thresholdAmount(value: ThresholdValue, capacity: number): number {
  if (value.quantity !== undefined) return quantityValue(value.quantity);
  return Math.trunc(capacity * value.percentage);
}

/**
 * thresholdsMet: the thresholds whose amount (plus min-reclaim when enforced) is strictly
 * greater than what is available. Thresholds on unobserved signals are skipped.
 */
export function thresholdsMet(thresholds: readonly Threshold[], obs: Observations, enforceMinReclaim: boolean): Threshold[] {
  const met: Threshold[] = [];
  for (const t of thresholds) {
    const o = obs[t.signal];
    if (!o) continue;
    let amount = thresholdAmount(t.value, o.capacity);
    if (enforceMinReclaim && t.minReclaim) amount += thresholdAmount(t.minReclaim, o.capacity);
    if (amount > o.available) met.push(t);
  }
  return met;
}

/** Parses "10%%"-style percentages as Go does: ParseFloat(…, 32) then float32 division by 100. */
export function float32Fraction(percent: number): number {
  return Math.fround(Math.fround(percent) / 100);
}

/** Shortest decimal that round-trips a float32 (0.1, not 0.10000000149011612) for output. */
export function float32ToShortest(x: number): number {
  for (let p = 1; p <= 9; p++) {
    const y = Number(x.toPrecision(p));
    if (Math.fround(y) === x) return y;
  }
  return x;
}
