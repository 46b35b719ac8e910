// client-go's token bucket (flowcontrol.NewTokenBucketRateLimiter): `qps` tokens per second, at most
// `burst` saved; a request waits for a token. The kubelet's main client uses kubeAPIQPS/kubeAPIBurst;
// its heartbeat client (node status, lease) is not rate limited, as upstream.
import type { Clock } from "../clock.ts";

export interface RateLimiter {
  /** Resolves when the request may go; rejects if the signal aborts first. */
  wait(signal?: AbortSignal): Promise<void>;
}

export const unlimited: RateLimiter = { wait: async () => {} };

export function tokenBucket(qps: number, burst: number, clock: Clock): RateLimiter {
  if (qps <= 0) return unlimited;
  const cap = Math.max(1, burst);
  let tokens = cap;
  let last = clock.now();
  let queue = Promise.resolve();
  const refill = () => {
    const now = clock.now();
    tokens = Math.min(cap, tokens + ((now - last) / 1000) * qps);
    last = now;
  };
  const take = (signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const attempt = () => {
        if (signal?.aborted) return reject(signal.reason);
        refill();
        if (tokens >= 1) {
          tokens -= 1;
          return resolve();
        }
        clock.setTimeout(attempt, Math.ceil(((1 - tokens) / qps) * 1000));
      };
      attempt();
    });
  return {
    wait(signal) {
      // FIFO: each waiter takes its token after the one before it.
      const turn = queue.then(() => take(signal));
      queue = turn.catch(() => {});
      return turn;
    },
  };
}
