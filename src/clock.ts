// Injected time for every area (eviction, pod lifecycle, wire, stats, the agent): one interface and
// one real clock, so a test or `bunlet eviction simulate` drives the same code with a manual clock
// (src/manual-clock.ts, test/support/settling-clock.ts) instead of sleeping.
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(h: TimerHandle): void;
}

export type TimerHandle = { readonly id: unknown };

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    // Unref'ed for every area: a loop's timer (eviction monitoring, PLEG relist, probes, image GC)
    // must never keep a finished test or a stopping agent alive on its own. A stop() that misses
    // one timer, or a cycle in flight that re-arms one, would otherwise hold the process past its
    // shutdown. What keeps a running agent alive is `bunlet run` waiting for the agent to finish
    // (src/cli/run.ts), not whichever loop happens to have a timer pending.
    (t as { unref?: () => void }).unref?.();
    return { id: t };
  },
  clearTimeout(h) {
    clearTimeout(h.id as ReturnType<typeof setTimeout>);
  },
};

/**
 * Wall-clock epoch ms with sub-ms resolution, for one thread: the monotonic clock (`perf`) plus an
 * anchor, first `origin` (performance.timeOrigin, sub-ms precise — an anchor taken from Date.now() would
 * put every timestamp up to 1 ms early against other clocks: a victim's own CLOCK_REALTIME, the kernel
 * notifier thread's), then moved whenever the sum leaves the millisecond `date()` (Date.now(), which
 * truncates) says it is in. Without the re-anchoring the sum drifts from the wall clock as NTP slews it
 * — up to 0.5 ms a second; 0.19 ms within one CI run — and a long-running agent's timestamps drift with
 * it. The returned function maps a `perf` reading to the wall clock (the reading may be a few ms old).
 */
export function wallClock(perf: () => number, date: () => number, origin: number): (perfMs?: number) => number {
  let anchor = origin;
  return (perfMs) => {
    const w = date();
    const p = perf();
    const t = anchor + p;
    if (t < w) anchor += w - t;
    else if (t >= w + 1) anchor -= t - (w + 1);
    return anchor + (perfMs ?? p);
  };
}

/** This thread's sub-ms wall clock (see wallClock); `preciseNow(p)` is the wall time of performance.now() reading p. */
export const preciseNow = wallClock(
  () => performance.now(),
  () => Date.now(),
  performance.timeOrigin,
);

/**
 * The real clock with sub-millisecond now() (preciseNow): latencies of a few ms are what the eviction
 * trace and the StopContainer observer measure. Timers are realClock's.
 */
export function preciseClock(): Clock {
  return { ...realClock, now: () => preciseNow() };
}

/** Runs `fn` every `ms` until the returned stop function is called (next run scheduled after fn settles). */
export function every(clock: Clock, ms: number, fn: () => void | Promise<void>): () => void {
  let stopped = false;
  let handle: TimerHandle | undefined;
  const tick = async () => {
    if (stopped) return;
    try {
      await fn();
    } finally {
      if (!stopped) handle = clock.setTimeout(tick, ms);
    }
  };
  handle = clock.setTimeout(tick, ms);
  return () => {
    stopped = true;
    if (handle) clock.clearTimeout(handle);
  };
}

export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
