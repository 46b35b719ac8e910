// The time source of the pod lifecycle. Injected everywhere so tests drive workers, PLEG, back-off and
// probes with a fake clock instead of sleeping.
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
    // Timers of a loop must never keep a finished test or a stopping agent alive on their own.
    (t as { unref?: () => void }).unref?.();
    return { id: t };
  },
  clearTimeout(h) {
    clearTimeout(h.id as ReturnType<typeof setTimeout>);
  },
};

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
