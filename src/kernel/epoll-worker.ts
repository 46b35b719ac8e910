// The one thread that blocks: it sits in epoll_wait(-1) on the hub's epoll set and posts the ready
// tokens to the main thread. It never touches the watched fds themselves (entries are
// EPOLLONESHOT, the main thread drains and re-arms them), so an fd closed or reused by the main
// thread can never be read here. Control token 0 (the hub's stop eventfd) ends the loop.
// Built as an extra entrypoint of `bun build --compile` (scripts/build.sh globs src/**/*-worker.ts).
import { EPOLL_EVENT_SIZE, epoll_wait } from "../../ffi/libc.ts";

declare const self: Worker;

export interface WorkerStart {
  type: "start";
  epfd: number;
}

export type WorkerMessage =
  /** pairs = [token, events, token, events, …]; wokeAtMs = wall-clock ms (timeOrigin + now) at wake-up. */
  | { type: "ready"; pairs: number[]; wokeAtMs: number }
  | { type: "stopped" }
  | { type: "error"; message: string };

const MAX_EVENTS = 64;

function run(epfd: number): void {
  const buf = new Uint8Array(MAX_EVENTS * EPOLL_EVENT_SIZE);
  for (;;) {
    let events;
    try {
      events = epoll_wait(epfd, MAX_EVENTS, -1, buf);
    } catch (e) {
      self.postMessage({ type: "error", message: (e as Error).message } satisfies WorkerMessage);
      return;
    }
    const wokeAtMs = performance.timeOrigin + performance.now();
    const pairs: number[] = [];
    let stop = false;
    for (const ev of events) {
      if (ev.data === 0) stop = true;
      else pairs.push(ev.data, ev.events);
    }
    if (pairs.length > 0) self.postMessage({ type: "ready", pairs, wokeAtMs } satisfies WorkerMessage);
    if (stop) return;
  }
}

self.onmessage = (e: MessageEvent<WorkerStart>) => {
  if (e.data?.type !== "start") return;
  run(e.data.epfd);
  self.postMessage({ type: "stopped" } satisfies WorkerMessage);
};
