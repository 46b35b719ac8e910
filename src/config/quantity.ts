// Kubernetes resource.Quantity: parsing and canonical formatting.
// Mirrors k8s.io/apimachinery/pkg/api/resource (quantity.go, suffix.go): a number with an optional
// binary-SI (Ki…Ei), decimal-SI (n, u, m, "", k, M, G, T, P, E) or decimal-exponent (e3) suffix.
// Values are held exactly as BigInt nano-units; like upstream, precision below 1n rounds up.

export type QuantityFormat = "BinarySI" | "DecimalSI" | "DecimalExponent";

export interface Quantity {
  /** Exact value × 10^9 (nano-units). */
  readonly nanos: bigint;
  /** The suffix family the quantity was written in; canonical formatting keeps it. */
  readonly format: QuantityFormat;
}

export class QuantityError extends Error {
  override name = "QuantityError";
}

// Upstream error texts (resource.ErrFormatWrong / ErrSuffix).
export const ERR_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const ERR_SUFFIX = "unable to parse quantity's suffix";

const NANO = 1_000_000_000n;
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

const SHAPE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/;

/** Parses a Kubernetes quantity ("100Mi", "1.5Gi", "500m", "1e3"). Throws QuantityError. */
export function parseQuantity(input: string): Quantity {
  const s = input.trim();
  const m = SHAPE.exec(s);
  if (!s || !m) throw new QuantityError(ERR_FORMAT_WRONG);
  const [, sign, intPart = "", fracPart = "", suffix = ""] = m;
  if (intPart === "" && fracPart === "") throw new QuantityError(ERR_FORMAT_WRONG);
  if (!/^[eEinumkKMGTP]*[-+]?[0-9]*$/.test(suffix)) throw new QuantityError(ERR_FORMAT_WRONG);

  // Exact numerator/denominator of the written number.
  const digits = BigInt((intPart || "0") + fracPart);
  let num = digits;
  let den = 10n ** BigInt(fracPart.length);
  let format: QuantityFormat;
  if (suffix in BINARY) {
    format = "BinarySI";
    num *= 1n << BigInt(BINARY[suffix]!);
  } else if (suffix in DECIMAL) {
    format = "DecimalSI";
    const exp = DECIMAL[suffix]!;
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  } else if (/^[eE][-+]?[0-9]+$/.test(suffix)) {
    format = "DecimalExponent";
    const exp = Number(suffix.slice(1));
    if (!Number.isSafeInteger(exp) || Math.abs(exp) > 1000) throw new QuantityError(ERR_SUFFIX);
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  } else {
    throw new QuantityError(ERR_SUFFIX);
  }
  // Round up (away from zero for the magnitude, as upstream rounds to nano precision).
  let nanos = (num * NANO + den - 1n) / den;
  if (sign === "-") nanos = -nanos;
  return { nanos, format };
}

/** True when the string parses as a quantity. */
export function isQuantity(s: string): boolean {
  try {
    parseQuantity(s);
    return true;
  } catch {
    return false;
  }
}

/** Integer value rounded up, like Quantity.Value(). */
export function quantityValue(q: Quantity): number {
  const whole = q.nanos / NANO;
  const rem = q.nanos % NANO;
  return Number(rem > 0n ? whole + 1n : whole);
}

/** Value in milli-units rounded up, like Quantity.MilliValue(). */
export function quantityMilliValue(q: Quantity): number {
  const milli = 1_000_000n;
  const whole = q.nanos / milli;
  const rem = q.nanos % milli;
  return Number(rem > 0n ? whole + 1n : whole);
}

/** Builds a quantity from a plain number (bytes, counts). */
export function quantityFromNumber(value: number, format: QuantityFormat = "BinarySI"): Quantity {
  const text = Number.isInteger(value) ? BigInt(value).toString() : value.toFixed(9);
  return { nanos: parseQuantity(text).nanos, format };
}

/** Canonical string, like Quantity.String(): 1.5Gi → 1536Mi, 1500000 → 1500k, 0.5 → 500m. */
export function formatQuantity(q: Quantity): string {
  if (q.nanos === 0n) return "0";
  const neg = q.nanos < 0n;
  const abs = neg ? -q.nanos : q.nanos;
  const sign = neg ? "-" : "";
  let format = q.format;
  if (format === "BinarySI") {
    // Upstream formats small or fractional binary quantities as decimal SI.
    if (abs < 1024n * NANO || abs % NANO !== 0n) format = "DecimalSI";
  }
  if (format === "BinarySI") {
    let n = abs / NANO;
    let exp = 0;
    while (exp < 60 && n % 1024n === 0n) {
      n /= 1024n;
      exp += 10;
    }
    const suffix = Object.entries(BINARY).find(([, e]) => e === exp)?.[0] ?? "";
    return `${sign}${n}${suffix}`;
  }
  // Decimal: the smallest exponent (multiple of 3, ≥ -9) that keeps the mantissa integral, then
  // strip whole groups of three trailing zeros.
  let mantissa = abs; // in units of 10^-9
  let exp = -9;
  while (exp < 18 && mantissa % 1000n === 0n) {
    mantissa /= 1000n;
    exp += 3;
  }
  if (format === "DecimalExponent") return `${sign}${mantissa}${exp === 0 ? "" : `e${exp}`}`;
  const suffix = Object.entries(DECIMAL).find(([, e]) => e === exp)?.[0] ?? "";
  return `${sign}${mantissa}${suffix}`;
}

/** Parses and re-formats: the canonical text of a quantity string. */
export function canonicalQuantity(s: string): string {
  return formatQuantity(parseQuantity(s));
}
