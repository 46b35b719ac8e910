// An epoll set that owns its fd. Waiting with a timeout blocks the calling thread, so on the main
// thread only `poll()` (timeout 0) is offered; the blocking wait lives in epoll-worker.ts.
import {
  close,
  EPOLL_CLOEXEC,
  EPOLL_CTL_ADD,
  EPOLL_CTL_DEL,
  EPOLL_CTL_MOD,
  EPOLL_EVENT_SIZE,
  epoll_create1,
  epoll_ctl,
  epoll_wait,
  SyscallError,
  type EpollEvent,
} from "../../ffi/libc.ts";

export class Epoll {
  readonly fd: number;
  #closed = false;
  readonly #buf = new Uint8Array(64 * EPOLL_EVENT_SIZE);

  constructor() {
    this.fd = epoll_create1(EPOLL_CLOEXEC);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Watches `fd` for `events`; `token` comes back as EpollEvent.data. */
  add(fd: number, events: number, token: number): void {
    this.#assertOpen("add");
    epoll_ctl(this.fd, EPOLL_CTL_ADD, fd, events, token);
  }

  /** Changes the events/token of a watched fd (also re-arms an EPOLLONESHOT entry). */
  modify(fd: number, events: number, token: number): void {
    this.#assertOpen("modify");
    epoll_ctl(this.fd, EPOLL_CTL_MOD, fd, events, token);
  }

  /** Stops watching `fd`. Returns false when it was not watched or already closed (ENOENT/EBADF). */
  remove(fd: number): boolean {
    if (this.#closed) return false;
    try {
      epoll_ctl(this.fd, EPOLL_CTL_DEL, fd);
      return true;
    } catch (e) {
      if (e instanceof SyscallError && (e.code === "ENOENT" || e.code === "EBADF")) return false;
      throw e;
    }
  }

  /** Ready events right now, without blocking. */
  poll(maxEvents = 64): EpollEvent[] {
    this.#assertOpen("poll");
    return epoll_wait(this.fd, Math.min(maxEvents, 64), 0, this.#buf);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    close(this.fd);
  }

  #assertOpen(op: string): void {
    if (this.#closed) throw new Error(`epoll ${this.fd}: ${op} after close`);
  }
}
