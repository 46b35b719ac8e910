// After the notifier thread signalled a victim (kernel/fast-evict.ts), whether the victim took its
// signal: the pending masks of /proc/<pid>/status, checked asleep at doubling intervals, so the main
// thread's bookkeeping never runs ahead of the victim's own handler on a busy CPU.
/**
 * Whether `signal` is still pending for the process whose /proc/<pid>/status is `status` (its
 * ShdPnd or SigPnd mask has the bit): true until the process dequeued it — ran its handler, or
 * died of it. undefined when the text has neither mask.
 */
export function signalPending(status: string, signal: number): boolean | undefined {
  let seen = false;
  const bit = 1n << BigInt(signal - 1);
  for (const key of ["ShdPnd:", "SigPnd:"]) {
    const at = status.indexOf(key);
    if (at < 0) continue;
    const end = status.indexOf("\n", at);
    const hex = status.slice(at + key.length, end < 0 ? undefined : end).trim();
    if (!/^[0-9a-f]+$/i.test(hex)) continue;
    seen = true;
    if ((BigInt(`0x${hex}`) & bit) !== 0n) return true;
  }
  return seen ? false : undefined;
}

export interface SignalsTakenIo {
  /** /proc/<pid>/status, or undefined when the process is gone. */
  procStatus(pid: number): string | undefined;
  /** Blocks this thread (a Worker's: monotonic-sleep.ts) for ms. */
  sleep(ms: number): void;
  now(): number;
}

/**
 * After the thread signalled a victim, it waits — asleep, checking after `firstMs`, then at intervals
 * that double — until every signalled process took its signal (or is gone), for at most `capMs`: the
 * main thread's bookkeeping (status, events, the runtime's stop) is posted after it, so on a busy CPU it
 * never runs ahead of the victim's own handler. No check right after the signal: reading a busy victim's
 * /proc/<pid>/status takes the CPU it needs to reach its handler (in the one-CPU v2 guest, a memory hog:
 * kill → handler p50 1.1–1.2 ms, max 3.7–14.8 ms when checked at once and every 1 ms; p50 0.35 ms, max
 * 1.1–1.9 ms — as with no check at all — when the first check waits 2 ms). Returns when that was seen
 * (wall-clock ms), or undefined at the cap or when a PID is unknown (then it waited `minMs`).
 */
export function awaitSignalsTaken(
  sent: readonly { pid: number; signal: number }[],
  io: SignalsTakenIo,
  opts: { minMs: number; capMs: number; firstMs: number },
): number | undefined {
  const start = io.now();
  if (sent.length === 0 || sent.some((s) => s.pid <= 0)) {
    io.sleep(opts.minMs);
    return undefined;
  }
  let left = [...sent];
  for (let wait = opts.firstMs; ; wait *= 2) {
    io.sleep(Math.min(wait, Math.max(0, opts.capMs - (io.now() - start))));
    left = left.filter((s) => {
      const st = io.procStatus(s.pid);
      return st !== undefined && signalPending(st, s.signal) !== false;
    });
    const now = io.now();
    if (left.length === 0) return now;
    if (now - start >= opts.capMs) return undefined;
  }
}
