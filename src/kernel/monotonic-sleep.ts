// A thread's sleep on the monotonic clock that another thread can cut short: epoll_wait(2) on a set
// holding (or not) an eventfd the other thread signals.
//
// Not Atomics.wait: JSC parks it on an absolute CLOCK_REALTIME deadline (futex FUTEX_CLOCK_REALTIME,
// seen with strace), so a wall clock stepped back — NTP stepping at boot, `date -s`, a restored VM —
// lengthens a sleep by the step, and a notifier thread sleeping 5 ms between reads would not read
// again for as long. epoll_wait's timeout is relative, on the monotonic clock.
import { EPOLL_EVENT_SIZE, EPOLLIN, epoll_wait } from "../../ffi/libc.ts";
import { Epoll } from "./epoll.ts";
import { drainEventfd } from "./eventfd.ts";

export class MonotonicSleeper {
  readonly #ep = new Epoll();
  readonly #events = new Uint8Array(EPOLL_EVENT_SIZE);
  readonly #counter = new Uint8Array(8);
  readonly #wakeFd: number | undefined;

  /** wakeFd: an eventfd (non-blocking; another thread owns it) whose signal ends a sleep at once. */
  constructor(wakeFd?: number) {
    this.#wakeFd = wakeFd;
    if (wakeFd !== undefined) this.#ep.add(wakeFd, EPOLLIN, 1);
  }

  /**
   * Blocks this thread for ms, rounded up to a whole ms (at least 1: epoll_wait counts in ms), or until
   * the wake fd is signalled; true when it was (its counter is then reset, so the next sleep sleeps).
   */
  sleep(ms: number): boolean {
    const woken = epoll_wait(this.#ep.fd, 1, Math.max(1, Math.ceil(ms)), this.#events).length > 0;
    // EAGAIN (another sleeper took the signal) is not an error: drainEventfd returns false.
    if (woken && this.#wakeFd !== undefined) drainEventfd(this.#wakeFd, this.#counter);
    return woken;
  }

  /** Closes the epoll set (not the wake fd: its owner closes it). */
  close(): void {
    this.#ep.close();
  }
}
