// How many image pulls run at once (upstream pkg/kubelet/images/puller.go, chosen by
// image_manager.go NewImageManager): serializeImagePulls (the default) → one at a time, in the
// order asked (serialImagePuller's queue); false → in parallel, at most maxParallelImagePulls at
// once when it is set (parallelImagePuller's tokens), unbounded when it is not. Pure: a queue of
// waiters, no timers.

/** The pull limit chosen from the configuration; Infinity = unbounded. */
export function imagePullLimit(serializeImagePulls: boolean, maxParallelImagePulls: number | undefined): number {
  if (serializeImagePulls) return 1;
  return maxParallelImagePulls !== undefined && maxParallelImagePulls >= 1 ? maxParallelImagePulls : Number.POSITIVE_INFINITY;
}

/** What one pull spent waiting for its turn and pulling (upstream pullResult.pullDuration, and the wait). */
export interface PullTiming {
  waitedMs: number;
  pulledMs: number;
}

export interface ImagePuller {
  readonly limit: number;
  /** Runs `pull` once a pull slot is free (arrival order); `now` gives epoch ms for the timing. */
  pull<T>(pull: () => Promise<T>, now: () => number): Promise<{ value: T; timing: PullTiming }>;
  /** Pulls running and waiting right now. */
  inFlight(): { running: number; waiting: number };
}

export function createImagePuller(limit: number): ImagePuller {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return {
    limit,
    async pull(pull, now) {
      const askedMs = now();
      if (running < limit) running++;
      else await new Promise<void>((go) => waiting.push(go));
      const startMs = now();
      try {
        const value = await pull();
        return { value, timing: { waitedMs: startMs - askedMs, pulledMs: now() - startMs } };
      } finally {
        release();
      }
    },
    inFlight: () => ({ running, waiting: waiting.length }),
  };
}
