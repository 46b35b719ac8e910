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
 * The real clock with sub-millisecond now(): latencies of a few ms are what the eviction trace and
 * the StopContainer observer measure. Monotonic (performance.now), anchored to the wall clock by
 * performance.timeOrigin, which has sub-ms precision — an anchor taken from Date.now() would put
 * every timestamp up to 1 ms early against other clocks (a victim's own CLOCK_REALTIME, the kernel
 * notifier thread's). Timers are realClock's.
 */
export function preciseClock(): Clock {
  return { ...realClock, now: () => performance.timeOrigin + performance.now() };
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
