// A static pod source as the lifecycle runs it (upstream pkg/kubelet/config file.go and http.go): read
// at start and again every check frequency (their wait.Until loop) until stopped, and on demand.
import { every, type Clock } from "../../clock.ts";
import type { ManifestError } from "../manifest.ts";

export interface PodSource {
  start(): Promise<void>;
  stop(): void;
  /** Re-reads now (tests, SIGHUP). */
  resync(): Promise<void>;
  errors(): ManifestError[];
}

export interface PeriodicSourceOptions {
  clock: Clock;
  checkFrequencyMs: number;
  /** One read of the source (it catches and reports its own failures). */
  resync(): Promise<void>;
  errors(): ManifestError[];
  /** What else stop ends (a watch, a pending timer). */
  onStop?(): void;
}

/** A source read by `resync` at start and every checkFrequencyMs; `stopped()` tells a read in flight not to deliver. */
export function periodicSource(opts: PeriodicSourceOptions): PodSource & { stopped(): boolean } {
  let stopped = true;
  let stopPeriodic: (() => void) | undefined;
  return {
    async start() {
      stopped = false;
      // The periodic re-read is armed before the first one, so a first failure never ends it.
      stopPeriodic = every(opts.clock, opts.checkFrequencyMs, opts.resync);
      await opts.resync();
    },
    stop() {
      stopped = true;
      opts.onStop?.();
      stopPeriodic?.();
    },
    resync: opts.resync,
    errors: opts.errors,
    stopped: () => stopped,
  };
}
