// One operation at a time per plugin socket, with exponential backoff after a failure (upstream
// pkg/util/goroutinemap with exponentialbackoff, as the plugin manager's operation executor uses it):
// an operation whose last run failed is refused until its backoff passed (500 ms, doubling, at most
// 2m2s); a success forgets the socket's backoff.
import type { Clock } from "../../clock.ts";
import { kv, log } from "../../log.ts";

/** Upstream exponentialbackoff.initialDurationBeforeRetry / maxDurationBeforeRetry. */
export const INITIAL_DURATION_BEFORE_RETRY_MS = 500;
export const MAX_DURATION_BEFORE_RETRY_MS = 122_000;

/** Why run() did not start an operation. */
export type NotStarted = "already running" | "backing off";

export interface OperationExecutor {
  /** Starts op under the name unless one runs or the name is backing off; resolves once it ends. */
  run(name: string, op: () => Promise<void>): { started: true; done: Promise<void> } | { started: false; why: NotStarted };
  /** Whether an operation of that name is running. */
  isRunning(name: string): boolean;
  /** Resolves once every running operation ended. */
  settled(): Promise<void>;
}

interface Entry {
  running?: Promise<void>;
  lastErrorMs?: number;
  durationBeforeRetryMs: number;
}

/** The next backoff after a failure (upstream ExponentialBackoff.Update). */
export function nextDurationBeforeRetry(currentMs: number): number {
  if (currentMs === 0) return INITIAL_DURATION_BEFORE_RETRY_MS;
  return Math.min(currentMs * 2, MAX_DURATION_BEFORE_RETRY_MS);
}

export function createOperationExecutor(clock: Pick<Clock, "now">): OperationExecutor {
  const ops = new Map<string, Entry>();
  const start = (name: string, e: Entry, op: () => Promise<void>): Promise<void> => {
    const done = (async () => {
      try {
        await op();
        ops.delete(name);
      } catch (err) {
        e.running = undefined;
        e.lastErrorMs = clock.now();
        e.durationBeforeRetryMs = nextDurationBeforeRetry(e.durationBeforeRetryMs);
        const until = new Date(e.lastErrorMs + e.durationBeforeRetryMs).toISOString();
        log.error(
          `Operation for ${JSON.stringify(name)} failed. No retries permitted until ${until} ${kv({ durationBeforeRetryMs: e.durationBeforeRetryMs, error: (err as Error).message })}`,
        );
      }
    })();
    e.running = done;
    return done;
  };
  return {
    run(name, op) {
      const e = ops.get(name) ?? { durationBeforeRetryMs: 0 };
      if (e.running) return { started: false, why: "already running" };
      if (e.lastErrorMs !== undefined && clock.now() < e.lastErrorMs + e.durationBeforeRetryMs) return { started: false, why: "backing off" };
      ops.set(name, e);
      return { started: true, done: start(name, e, op) };
    },
    isRunning: (name) => ops.get(name)?.running !== undefined,
    async settled() {
      await Promise.all([...ops.values()].map((e) => e.running));
    },
  };
}
