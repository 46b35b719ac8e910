// One garbage collection once the node settles after its pods changed (issue #14). Bun's own GC timer
// is off (src/runtime-env.ts: it collected every second while the heap moved at all), so what a burst
// of pod starts left behind waited for JSC's allocation-paced collector, which an idle agent seldom
// wakes: 100 pods started at once left ~25 MB more resident than the same agent restarted on them.
// A relist that saw the runtime change re-arms the wait; quiet for `quietMs`, one collection runs.
// An idle node runs none; a crash-looping container, one per back-off.
import { realClock, type Clock, type TimerHandle } from "../clock.ts";

export const SETTLE_GC_QUIET_MS = 10_000;

export function gcWhenSettled(o: {
  onRuntimeChange: (fn: () => void) => () => void;
  /** Default: a full collection, concurrent (Bun.gc(false)): no long pause on the main thread. */
  gc?: () => void;
  clock?: Clock;
  quietMs?: number;
}): () => void {
  const clock = o.clock ?? realClock;
  const gc = o.gc ?? (() => Bun.gc(false));
  let timer: TimerHandle | undefined;
  const off = o.onRuntimeChange(() => {
    if (timer) clock.clearTimeout(timer);
    timer = clock.setTimeout(() => {
      timer = undefined;
      gc();
    }, o.quietMs ?? SETTLE_GC_QUIET_MS);
  });
  return () => {
    off();
    if (timer) clock.clearTimeout(timer);
    timer = undefined;
  };
}
