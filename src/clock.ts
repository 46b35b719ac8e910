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
 * the StopContainer observer measure. Monotonic from its creation (performance.now), anchored to
 * the wall clock once; timers are realClock's.
 */
export function preciseClock(): Clock {
  const d0 = Date.now();
  const p0 = performance.now();
  return { ...realClock, now: () => d0 + (performance.now() - p0) };
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
