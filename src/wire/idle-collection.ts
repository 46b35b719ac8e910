// A full collection of the JS heap every 2 minutes, so the code of paths the agent no longer runs is
// released. JSC drops a function's compiled code (bytecode, its metadata, JIT code) once it has lived
// past its tier's time-to-live (up to 60 s) and nothing runs it — but only in a full collection, and
// the idle agent rarely has one: Bun's GC timer is off (docs/adr/0010-runtime-env.md) and its
// allocation-paced collector mostly collects the young generation. A burst of pod starts leaves the
// code of starting pods (sandbox setup, image checks, status writes) in memory until then; the hot
// idle paths (relist, summary, eviction cycle) are run every second and keep theirs. Measured with
// scripts/bench/idle.ts and vs-kubelet.ts (docs/benchmarks.md#idle-cost).
import type { AgentComponent } from "../agent-component.ts";
import type { Clock, TimerHandle } from "../clock.ts";

/** Past JSC's longest code time-to-live (60 s, optimized code), with room for a burst to end. */
export const IDLE_COLLECTION_INTERVAL_MS = 120_000;

export interface IdleCollectionDeps {
  clock: Clock;
  /** A synchronous full collection (Bun.gc(true)); an asynchronous one leaves the code in place. */
  collect?: () => void;
  intervalMs?: number;
}

/** The component that collects every intervalMs from start() until stop(). */
export function idleCollectionComponent(deps: IdleCollectionDeps): AgentComponent {
  const collect = deps.collect ?? (() => Bun.gc(true));
  const intervalMs = deps.intervalMs ?? IDLE_COLLECTION_INTERVAL_MS;
  let timer: TimerHandle | undefined;
  let running = false;
  const arm = () => {
    timer = deps.clock.setTimeout(() => {
      if (!running) return;
      collect();
      arm();
    }, intervalMs);
  };
  return {
    name: "idle collection",
    start() {
      running = true;
      arm();
    },
    stop() {
      running = false;
      if (timer) deps.clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
