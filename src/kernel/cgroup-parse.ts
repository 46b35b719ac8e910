// Pure parsers for cgroup files. Each takes the file's text plus a name for error messages.

export class CgroupParseError extends Error {
  override name = "CgroupParseError";
}

/**
 * Flat-keyed files: "key value" per line (v1/v2 memory.stat, v2 memory.events). Values must be
 * integers; a malformed line throws naming the file, line and what was expected.
 */
export function parseFlatKeyed(text: string, file = "flat-keyed file"): Record<string, number> {
  const out: Record<string, number> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    const parts = line.split(/\s+/);
    const value = parts.length === 2 ? Number(parts[1]) : Number.NaN;
    if (!Number.isFinite(value) || !/^-?\d+$/.test(parts[1] ?? "")) {
      throw new CgroupParseError(`${file} line ${i + 1}: ${JSON.stringify(line)} is not "<key> <integer>"`);
    }
    out[parts[0]!] = value;
  }
  return out;
}

/** cgroup v2 memory.events counters (events since the cgroup was created). */
export interface MemoryEvents {
  low: number;
  high: number;
  max: number;
  oom: number;
  oom_kill: number;
  oom_group_kill?: number;
}

export const MEMORY_EVENT_KEYS = ["low", "high", "max", "oom", "oom_kill"] as const;

export function parseMemoryEvents(text: string, file = "memory.events"): MemoryEvents {
  const kv = parseFlatKeyed(text, file);
  const missing = MEMORY_EVENT_KEYS.filter((k) => kv[k] === undefined);
  if (missing.length > 0) throw new CgroupParseError(`${file}: missing ${missing.join(", ")} (expected keys ${MEMORY_EVENT_KEYS.join(", ")})`);
  const ev: MemoryEvents = { low: kv.low!, high: kv.high!, max: kv.max!, oom: kv.oom!, oom_kill: kv.oom_kill! };
  if (kv.oom_group_kill !== undefined) ev.oom_group_kill = kv.oom_group_kill;
  return ev;
}

/** Counters that grew from `prev` to `next` (only positive deltas). */
export function memoryEventsDelta(prev: MemoryEvents, next: MemoryEvents): Partial<MemoryEvents> {
  const d: Partial<MemoryEvents> = {};
  for (const k of [...MEMORY_EVENT_KEYS, "oom_group_kill"] as const) {
    const delta = (next[k] ?? 0) - (prev[k] ?? 0);
    if (delta > 0) d[k] = delta;
  }
  return d;
}

export interface PressureLine {
  /** Percent of wall time stalled over the last 10 s / 60 s / 300 s. */
  avg10: number;
  avg60: number;
  avg300: number;
  /** Total stall time in microseconds. */
  total: number;
}

export interface Pressure {
  some: PressureLine;
  /** Absent in cpu.pressure of old kernels and /proc/pressure/cpu before 5.13. */
  full?: PressureLine;
}

const PRESSURE_LINE = /^(some|full)\s+avg10=(\d+(?:\.\d+)?)\s+avg60=(\d+(?:\.\d+)?)\s+avg300=(\d+(?:\.\d+)?)\s+total=(\d+)$/;

/** memory.pressure / cpu.pressure / io.pressure and /proc/pressure/*. */
export function parsePressure(text: string, file = "pressure file"): Pressure {
  let some: PressureLine | undefined;
  let full: PressureLine | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const m = PRESSURE_LINE.exec(line);
    if (!m) throw new CgroupParseError(`${file}: ${JSON.stringify(line)} is not "some|full avg10=<pct> avg60=<pct> avg300=<pct> total=<us>"`);
    const parsed = { avg10: Number(m[2]), avg60: Number(m[3]), avg300: Number(m[4]), total: Number(m[5]) };
    if (m[1] === "some") some = parsed;
    else full = parsed;
  }
  if (!some) throw new CgroupParseError(`${file}: no "some" line`);
  return full ? { some, full } : { some };
}

export interface PsiTrigger {
  kind: "some" | "full";
  /** Stall time within the window that fires the trigger, in microseconds. */
  stallUs: number;
  /** Tracking window in microseconds; the kernel accepts 500 ms … 10 s. */
  windowUs: number;
}

export const PSI_WINDOW_MIN_US = 500_000;
export const PSI_WINDOW_MAX_US = 10_000_000;

/** "some 150000 1000000" → trigger; validates against the kernel's limits so errors are ours, not EINVAL. */
export function parsePsiTrigger(text: string): PsiTrigger {
  const m = /^\s*(some|full)\s+(\d+)\s+(\d+)\s*$/.exec(text);
  if (!m) throw new CgroupParseError(`PSI trigger ${JSON.stringify(text)}: expected "<some|full> <stall µs> <window µs>", e.g. "some 150000 1000000"`);
  const t: PsiTrigger = { kind: m[1] as "some" | "full", stallUs: Number(m[2]), windowUs: Number(m[3]) };
  if (t.windowUs < PSI_WINDOW_MIN_US || t.windowUs > PSI_WINDOW_MAX_US) {
    throw new CgroupParseError(`PSI trigger ${JSON.stringify(text)}: window ${t.windowUs} µs must be within ${PSI_WINDOW_MIN_US}..${PSI_WINDOW_MAX_US}`);
  }
  if (t.stallUs === 0 || t.stallUs > t.windowUs) {
    throw new CgroupParseError(`PSI trigger ${JSON.stringify(text)}: stall ${t.stallUs} µs must be within 1..window (${t.windowUs})`);
  }
  return t;
}

export function formatPsiTrigger(t: PsiTrigger): string {
  return `${t.kind} ${t.stallUs} ${t.windowUs}`;
}
