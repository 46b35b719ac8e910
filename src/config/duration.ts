// Go time.Duration: ParseDuration and String(), as the kubelet reads and prints durations
// ("1m30s", "10s", "2h45m0s", "100ms"). Values are nanoseconds held in a number (exact up to
// ~104 days, far beyond any kubelet duration).

export class DurationError extends Error {
  override name = "DurationError";
}

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3, // U+00B5 micro sign
  μs: 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

const quote = (s: string) => JSON.stringify(s);

/** Parses a Go duration string into nanoseconds. Error texts match Go's. */
export function parseDuration(input: string): number {
  let s = input;
  const orig = input;
  let neg = false;
  if (s[0] === "-" || s[0] === "+") {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") throw new DurationError(`time: invalid duration ${quote(orig)}`);
  let total = 0;
  while (s !== "") {
    const m = /^([0-9]*)(?:\.([0-9]*))?/.exec(s)!;
    const intPart = m[1] ?? "";
    const fracPart = m[2];
    if (intPart === "" && (fracPart === undefined || fracPart === "")) {
      throw new DurationError(`time: invalid duration ${quote(orig)}`);
    }
    s = s.slice(m[0].length);
    const u = /^[^0-9.]*/.exec(s)![0];
    if (u === "") throw new DurationError(`time: missing unit in duration ${quote(orig)}`);
    const unit = UNIT_NS[u];
    if (unit === undefined) throw new DurationError(`time: unknown unit ${quote(u)} in duration ${quote(orig)}`);
    s = s.slice(u.length);
    const value = Number(`${intPart || "0"}.${fracPart ?? ""}0`);
    total += Math.round(value * unit);
  }
  // Go: overflow past math.MaxInt64 (2^63 − 1, which is 2^63 as a double).
  if (total > 2 ** 63) throw new DurationError(`time: invalid duration ${quote(orig)}`);
  return neg ? -total : total;
}

/** Like Go's Duration.String(): 90s → "1m30s", 0 → "0s", 1.5e9 → "1.5s", 1e8 → "100ms". */
export function formatDuration(ns: number): string {
  if (ns === 0) return "0s";
  const neg = ns < 0;
  let n = Math.abs(Math.round(ns));
  const sign = neg ? "-" : "";
  if (n < 1e9) {
    // Sub-second: the largest unit among ns, µs, ms with a fractional part.
    if (n < 1e3) return `${sign}${n}ns`;
    if (n < 1e6) return `${sign}${fmtFrac(n, 1e3)}µs`;
    return `${sign}${fmtFrac(n, 1e6)}ms`;
  }
  const h = Math.floor(n / 3600e9);
  n -= h * 3600e9;
  const m = Math.floor(n / 60e9);
  n -= m * 60e9;
  const secs = `${fmtFrac(n, 1e9)}s`;
  if (h > 0) return `${sign}${h}h${m}m${secs}`;
  if (m > 0) return `${sign}${m}m${secs}`;
  return `${sign}${secs}`;
}

function fmtFrac(n: number, unit: number): string {
  const whole = Math.floor(n / unit);
  const frac = n - whole * unit;
  if (frac === 0) return String(whole);
  const width = Math.round(Math.log10(unit));
  return `${whole}.${String(frac).padStart(width, "0").replace(/0+$/, "")}`;
}

/** Canonical text of a duration string ("90s" → "1m30s"). */
export function canonicalDuration(s: string): string {
  return formatDuration(parseDuration(s));
}

export const durationMs = (s: string): number => parseDuration(s) / 1e6;
export const durationSeconds = (s: string): number => parseDuration(s) / 1e9;
