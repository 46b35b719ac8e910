// An eventfd(2) that owns its fd: created non-blocking and close-on-exec, closed exactly once (a
// second close must never hit a reused fd number that now belongs to someone else).
import { close, EFD_CLOEXEC, EFD_NONBLOCK, EFD_SEMAPHORE, eventfd, read, SyscallError, write } from "../../ffi/libc.ts";

export interface EventfdOptions {
  initval?: number;
  /** Default true: reads return 0 instead of blocking when the counter is 0. */
  nonblock?: boolean;
  semaphore?: boolean;
}

/**
 * Reads (and so resets) a non-blocking eventfd's counter into buf (8 bytes); false when it was 0
 * (EAGAIN). For a thread that waits on an eventfd another thread owns.
 */
export function drainEventfd(fd: number, buf: Uint8Array): boolean {
  try {
    read(fd, buf);
    return true;
  } catch (e) {
    if (e instanceof SyscallError && e.code === "EAGAIN") return false;
    throw e;
  }
}

export class Eventfd {
  readonly fd: number;
  #closed = false;
  readonly #buf = new Uint8Array(8);
  readonly #view = new DataView(this.#buf.buffer);

  constructor(opts: EventfdOptions = {}) {
    const flags = EFD_CLOEXEC | (opts.nonblock === false ? 0 : EFD_NONBLOCK) | (opts.semaphore ? EFD_SEMAPHORE : 0);
    this.fd = eventfd(opts.initval ?? 0, flags);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Adds `n` to the counter, waking whoever polls the fd. */
  signal(n = 1): void {
    this.#assertOpen("signal");
    this.#view.setBigUint64(0, BigInt(n), true);
    write(this.fd, this.#buf);
  }

  /** Reads and resets the counter; 0 when nothing was signalled (non-blocking fd). */
  drain(): number {
    this.#assertOpen("drain");
    return drainEventfd(this.fd, this.#buf) ? Number(this.#view.getBigUint64(0, true)) : 0;
  }

  /** Closes the fd; later calls are no-ops. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    close(this.fd);
  }

  #assertOpen(op: string): void {
    if (this.#closed) throw new Error(`eventfd ${this.fd}: ${op} after close`);
  }
}
