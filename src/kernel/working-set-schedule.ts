// The working-set thread's schedule (working-set-worker.ts) as pure functions of its settings and a
// target's last reads: when the next read is due, whether the growth projects the line within the
// imminent horizon, how long an imminent-crossing episode may last, and when a window of not-met
// retries is over. They run at every poll: numbers in, a number or a boolean out, nothing allocated.
import type { WorkingSetPollSettings } from "./working-set-protocol.ts";

/** The watch's schedule unless overridden; the measurements behind these: docs/adr/0003-v2-working-set-watch.md. */
export const DEFAULT_WORKING_SET_POLL: WorkingSetPollSettings = {
  minIntervalMs: 5,
  maxIntervalMs: 500,
  maxGrowthBytesPerSec: 4 * 2 ** 30,
  statRefreshMs: 1000,
  renotifyMs: 100,
  notMetRetryMs: 100,
  imminentHorizonMs: 25,
  imminentCapMs: 30,
  imminentBudgetMsPerSec: 60,
};

/** Far from the line the next read can wait as long as the fastest growth needs to close the gap. */
export function nextIntervalMs(headroomBytes: number, settings: WorkingSetPollSettings): number {
  const ms = (headroomBytes / settings.maxGrowthBytesPerSec) * 1000;
  return Math.min(settings.maxIntervalMs, Math.max(settings.minIntervalMs, ms));
}

/** How late a read at `now` comes after it was due at `dueMs` (0 for "at once": a new or moved target, dueMs 0). */
export function dueLateMs(dueMs: number, now: number): number {
  return dueMs > 0 ? Math.max(0, now - dueMs) : 0;
}

/** The growth projection's shortest base (see anchorMoves). */
export const RATE_SPAN_MS = 20;

/**
 * Whether the growth since the anchor read (usage, not the working set, is what grows) reaches the line
 * within horizonMs from a usage still at or under it. 0 or less: never.
 */
export function projectsLineWithin(usage: number, anchorUsage: number, anchorMs: number, now: number, lineBytes: number, horizonMs: number): boolean {
  const rate = (usage - anchorUsage) / (now - anchorMs);
  return horizonMs > 0 && usage <= lineBytes && rate > 0 && (lineBytes - usage) / rate <= horizonMs;
}

/**
 * Whether a timed read at `now` becomes the projection's anchor: only once the anchor is RATE_SPAN_MS old.
 * Usage grows in charge batches, and two reads a few ms apart around one batch would project a rate the
 * workload does not have (natively, a 10 MiB/s grower started episodes it never needed: +2.4 % of a core
 * with spinning). A NaN anchor (none yet) moves.
 */
export function anchorMoves(anchorMs: number, now: number): boolean {
  return !(now - anchorMs < RATE_SPAN_MS);
}

/** Imminent-crossing episode ms spent in the current one-second window. */
export interface EpisodeBudget {
  windowMs: number;
  usedMs: number;
}

/** The budget an episode starting at `startMs` draws from: the current one-second window's, or a fresh one. */
export function budgetAt(budget: EpisodeBudget, startMs: number): EpisodeBudget {
  return startMs - budget.windowMs >= 1000 ? { windowMs: startMs, usedMs: 0 } : budget;
}

/** The longest an episode may last: imminentCapMs (default 30), within what the second's budget has left (default 60). */
export function episodeCapMs(budget: EpisodeBudget, settings: WorkingSetPollSettings): number {
  return Math.min(settings.imminentCapMs ?? 30, (settings.imminentBudgetMsPerSec ?? 60) - budget.usedMs);
}

/**
 * How an episode waits between reads: a real-time thread never spins (it would hold its CPU from every
 * ordinary thread for the episode); else as configured, or spin with more than one CPU, sleep with one.
 */
export function episodeWait(realtime: boolean, configured: WorkingSetPollSettings["imminentWait"], cpus: () => number): "spin" | "sleep" {
  if (realtime) return "sleep";
  return configured ?? (cpus() > 1 ? "spin" : "sleep");
}

/** Windows of not-met retries (notMetRetryMs) start at least this far apart, per target. */
export const NOT_MET_WINDOWS_APART_MS = 1000;

/** Whether the window of not-met retries that began at notMetAtMs is over at `now` (false when none began: NaN). */
export function notMetWindowOver(notMetAtMs: number, now: number, settings: WorkingSetPollSettings): boolean {
  return now - notMetAtMs >= Math.max(settings.notMetRetryMs ?? 0, NOT_MET_WINDOWS_APART_MS);
}
