// bunlet's own scheduling priority (config `schedulingNice`, a bunlet extension; 0 = leave it), as
// earlyoom's -p: under CPU contention the path from the kernel notifier's wake to the eviction signal
// (notifier thread → main thread → synchronize → pidfd signal) competes with every busy process on
// the node, and a lower nice value gives it a larger share. It changes when the eviction runs, never
// what it decides (signals, thresholds, ranking, grace periods are untouched).
// On Linux the nice value is per thread: the main thread's is set at start, before the notifier
// worker thread exists, and threads inherit their creator's value. Lowering it needs CAP_SYS_NICE;
// without it the call fails (EACCES), we say so once and go on at the current priority.
import { getpriority, PRIO_PROCESS, setpriority } from "../../ffi/libc.ts";
import { kv, log } from "../log.ts";

export interface NiceIo {
  get(): number;
  set(nice: number): void;
}

/** The calling thread (who = 0 is the calling thread on Linux). */
const threadIo: NiceIo = {
  get: () => getpriority(PRIO_PROCESS, 0),
  set: (n) => setpriority(PRIO_PROCESS, 0, n),
};

export interface NiceResult {
  requested: number;
  applied: boolean;
  /** The value in effect afterwards, when readable. */
  effective?: number;
  error?: string;
}

/** Sets the calling thread's nice value to `nice` (0 = no change); never throws. */
export function applySchedulingNice(nice: number, io: NiceIo = threadIo): NiceResult {
  const readBack = (): number | undefined => {
    try {
      return io.get();
    } catch {
      return undefined;
    }
  };
  if (!Number.isInteger(nice) || nice < -20 || nice > 19)
    return { requested: nice, applied: false, effective: readBack(), error: `schedulingNice ${nice} is outside [-20, 19]` };
  if (nice === 0) return { requested: 0, applied: false, effective: readBack() };
  try {
    io.set(nice);
  } catch (e) {
    const err = e as Error & { code?: string };
    return { requested: nice, applied: false, effective: readBack(), error: err.code ?? err.message };
  }
  const effective = readBack();
  return { requested: nice, applied: effective === undefined || effective === nice, effective };
}

/** Applies and logs the outcome (one line; nothing when 0). */
export function raiseSchedulingPriority(nice: number, io?: NiceIo): NiceResult {
  const r = applySchedulingNice(nice, io);
  if (r.applied) log.info(`scheduling priority set for bunlet (main thread and the threads it starts) ${kv({ nice: r.effective ?? nice })}`);
  else if (r.error)
    log.warn(
      `could not set bunlet's scheduling priority; it runs at the current one ${kv({ requested: nice, effective: r.effective, error: r.error, hint: r.error === "EACCES" || r.error === "EPERM" ? "lowering the nice value needs CAP_SYS_NICE" : undefined })}`,
    );
  return r;
}
