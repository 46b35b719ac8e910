// ParseThresholdConfig (docs/eviction-contract.md#parsing-thresholds): the four eviction maps → a list of thresholds, with
// upstream's error texts prefixed by the flag/field and value so a bad config names its source.
import { DurationError, parseDuration } from "../config/duration.ts";
import { ERR_FORMAT_WRONG, formatQuantity, parseQuantity, QuantityError, type Quantity } from "../config/quantity.ts";
import { isSignal, SIGNALS, type Signal } from "./signals.ts";
import { float32Fraction, type Threshold, type ThresholdValue } from "./threshold.ts";

export class ThresholdParseError extends Error {
  override name = "ThresholdParseError";
  constructor(
    readonly source: string,
    readonly key: string,
    readonly value: string,
    readonly reason: string,
  ) {
    super(`invalid ${source} value ${JSON.stringify(value)} for ${key}: ${reason}`);
  }
}

/** Linux defaults, newest (v1.30+, PR #121834): applied only when evictionHard is unset. */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = {
  "memory.available": "100Mi",
  "nodefs.available": "10%",
  "nodefs.inodesFree": "5%",
  "imagefs.available": "15%",
  "imagefs.inodesFree": "5%",
};

export interface ThresholdConfigInput {
  /** undefined = unset → the Linux defaults; any key set drops the other defaults (docs/eviction-contract.md#default-hard-thresholds). */
  evictionHard?: Record<string, string>;
  evictionSoft?: Record<string, string>;
  evictionSoftGracePeriod?: Record<string, string>;
  evictionMinimumReclaim?: Record<string, string>;
  /** Default ["pods"]: hard memory thresholds are copied onto allocatableMemory.available. */
  enforceNodeAllocatable?: string[];
  /** v1.33+: fill the default keys the user left out of evictionHard. */
  mergeDefaultEvictionSettings?: boolean;
  /** Names used in error messages (default: the KubeletConfiguration field names). */
  hardSource?: string;
  softSource?: string;
  gracePeriodSource?: string;
  minReclaimSource?: string;
}

/** The effective evictionHard map after defaulting / merging (docs/eviction-contract.md#default-hard-thresholds). */
export function effectiveEvictionHard(hard: Record<string, string> | undefined, merge = false): Record<string, string> {
  if (hard === undefined) return { ...DEFAULT_EVICTION_HARD };
  if (merge) return { ...DEFAULT_EVICTION_HARD, ...hard };
  return { ...hard };
}

const VALID = `valid signals: ${SIGNALS.join(", ")}`;

function checkSignal(source: string, key: string, value: string): Signal {
  if (!isSignal(key)) throw new ThresholdParseError(source, key, value, `unsupported eviction signal ${key} (${VALID})`);
  return key;
}

// Go strconv.ParseFloat accepts decimal floats with an optional exponent (and inf/nan, which are
// either rejected by the range checks or meaningless, so they are refused here).
const FLOAT = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

function parsePercentage(source: string, key: string, value: string): number {
  const s = value.replace(/%+$/, "");
  if (!FLOAT.test(s)) {
    throw new ThresholdParseError(source, key, value, `strconv.ParseFloat: parsing ${JSON.stringify(s)}: invalid syntax`);
  }
  return float32Fraction(Number(s));
}

function parseQty(source: string, key: string, value: string): Quantity {
  // Upstream ParseQuantity does not trim: " 100Mi" from a YAML file is an error.
  try {
    if (value !== value.trim()) throw new QuantityError(ERR_FORMAT_WRONG);
    return parseQuantity(value);
  } catch (e) {
    if (e instanceof QuantityError) throw new ThresholdParseError(source, key, value, e.message);
    throw e;
  }
}

/** parseThresholdStatement: undefined means "ignore" (exactly "0%" or "100%"). */
export function parseThresholdValue(source: string, key: string, value: string): ThresholdValue | undefined {
  const signal = checkSignal(source, key, value);
  if (value.endsWith("%")) {
    if (value === "0%" || value === "100%") return undefined;
    const percentage = parsePercentage(source, key, value);
    if (percentage < 0) throw new ThresholdParseError(source, key, value, `eviction percentage threshold ${signal} must be >= 0%: ${value}`);
    if (percentage > 1) throw new ThresholdParseError(source, key, value, `eviction percentage threshold ${signal} must be <= 100%: ${value}`);
    return { percentage };
  }
  const quantity = parseQty(source, key, value);
  if (quantity.nanos <= 0n) {
    throw new ThresholdParseError(source, key, value, `eviction threshold ${signal} must be positive: ${formatQuantity(quantity)}`);
  }
  return { quantity };
}

export function parseGracePeriod(source: string, key: string, value: string): number {
  checkSignal(source, key, value);
  let ns: number;
  try {
    ns = parseDuration(value);
  } catch (e) {
    if (e instanceof DurationError) throw new ThresholdParseError(source, key, value, `${e.message} (a Go duration such as 30s or 1m30s)`);
    throw e;
  }
  if (ns < 0) throw new ThresholdParseError(source, key, value, `invalid eviction grace period specified: ${value}, must be a positive value`);
  return ns / 1e6;
}

export function parseMinReclaim(source: string, key: string, value: string): ThresholdValue {
  const signal = checkSignal(source, key, value);
  if (value.endsWith("%")) {
    const percentage = parsePercentage(source, key, value);
    if (!(percentage > 0)) {
      throw new ThresholdParseError(source, key, value, `eviction percentage minimum reclaim ${signal} must be positive: ${value}`);
    }
    return { percentage };
  }
  const quantity = parseQty(source, key, value);
  if (quantity.nanos < 0n) throw new ThresholdParseError(source, key, value, `negative eviction minimum reclaim specified for ${signal}`);
  return { quantity };
}

/**
 * ParseThresholdConfig. Output order: hard (map order), then soft, then the allocatable copies —
 * upstream's order is map-random, so callers must not depend on it beyond that.
 */
export function parseThresholdConfig(input: ThresholdConfigInput): Threshold[] {
  const hardSource = input.hardSource ?? "evictionHard";
  const softSource = input.softSource ?? "evictionSoft";
  const graceSource = input.gracePeriodSource ?? "evictionSoftGracePeriod";
  const minSource = input.minReclaimSource ?? "evictionMinimumReclaim";

  const hard: Threshold[] = [];
  for (const [k, v] of Object.entries(effectiveEvictionHard(input.evictionHard, input.mergeDefaultEvictionSettings))) {
    const value = parseThresholdValue(hardSource, k, v);
    if (value) hard.push({ signal: k as Signal, operator: "LessThan", value, gracePeriodMs: 0 });
  }
  const soft: Threshold[] = [];
  for (const [k, v] of Object.entries(input.evictionSoft ?? {})) {
    const value = parseThresholdValue(softSource, k, v);
    if (value) soft.push({ signal: k as Signal, operator: "LessThan", value, gracePeriodMs: 0 });
  }
  const grace = new Map<string, number>();
  for (const [k, v] of Object.entries(input.evictionSoftGracePeriod ?? {})) grace.set(k, parseGracePeriod(graceSource, k, v));
  const minReclaim = new Map<string, ThresholdValue>();
  for (const [k, v] of Object.entries(input.evictionMinimumReclaim ?? {})) minReclaim.set(k, parseMinReclaim(minSource, k, v));

  for (const t of soft) {
    const g = grace.get(t.signal);
    if (g === undefined) {
      const v = input.evictionSoft?.[t.signal] ?? "";
      throw new ThresholdParseError(
        softSource,
        t.signal,
        v,
        `grace period must be specified for the soft eviction threshold ${t.signal} (set ${graceSource} ${t.signal}=<duration>)`,
      );
    }
    t.gracePeriodMs = g;
  }
  const all = [...hard, ...soft];
  for (const t of all) {
    const m = minReclaim.get(t.signal);
    if (m) t.minReclaim = m;
  }
  // "Hard" here means grace 0 (upstream isHardEvictionThreshold), so a soft threshold with 0s grace is copied too.
  if ((input.enforceNodeAllocatable ?? ["pods"]).includes("pods")) {
    for (const t of [...all]) {
      if (t.signal === "memory.available" && t.gracePeriodMs === 0) {
        all.push({
          signal: "allocatableMemory.available",
          operator: "LessThan",
          value: t.value,
          gracePeriodMs: 0,
          ...(t.minReclaim ? { minReclaim: t.minReclaim } : {}),
        });
      }
    }
  }
  return all;
}

export class MapFlagError extends Error {
  override name = "MapFlagError";
}

/**
 * component-base cliflag map parsing: split on ",", skip empty pieces, split each at the first
 * separator, trim key and value; a repeated key overwrites (last wins).
 * `sep` is "<" for --eviction-hard/--eviction-soft and "=" for the grace and min-reclaim flags.
 */
export function parseEvictionMapFlag(flag: string, value: string, sep: "<" | "="): Record<string, string> {
  const out: Record<string, string> = {};
  for (const piece of value.split(",")) {
    if (piece.length === 0) continue;
    const i = piece.indexOf(sep);
    if (i < 0) throw new MapFlagError(`invalid argument ${JSON.stringify(value)} for "${flag}" flag: malformed pair, expect string${sep}string`);
    out[piece.slice(0, i).trim()] = piece.slice(i + 1).trim();
  }
  return out;
}
