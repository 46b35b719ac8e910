// Polling for tests and scripts: one bounded poll loop, failing with "timed out after N ms waiting for
// <what>" (and, with retryErrors, the last error the poll threw).

/** What a poll returns: undefined or false means "not yet"; anything else is the result. */
export type Polled<T> = T | undefined | false;

export interface UntilOptions {
  /** Pause between polls (default 100 ms). */
  intervalMs?: number;
  /** Treat a throwing poll as "not yet" and name its last error on timeout (default: the error fails at once). */
  retryErrors?: boolean;
}

/**
 * Polls `fn` until it returns something other than undefined or false, and returns that. Throws after
 * `timeoutMs` (default 60 s), naming `what`.
 */
export async function until<T>(what: string, fn: () => Polled<T> | Promise<Polled<T>>, timeoutMs = 60_000, opts: UntilOptions = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const intervalMs = opts.intervalMs ?? 100;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as T;
    } catch (e) {
      if (!opts.retryErrors) throw e;
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last}` : ""}`);
    await Bun.sleep(intervalMs);
  }
}

/** Polls `cond` every `intervalMs` until it holds; throws, naming `what`, after `timeoutMs`. */
export async function pollUntil(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000, intervalMs = 20): Promise<void> {
  await until(what, async () => (await cond()) || undefined, timeoutMs, { intervalMs });
}
