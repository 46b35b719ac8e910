// cgroup v2 memory.events watcher (beyond upstream kubelet): the kernel bumps the counters
// low/high/max/oom/oom_kill and notifies the file (kernfs_notify), which raises EPOLLPRI on an
// open fd (and IN_MODIFY for inotify). Re-reading the file through the same fd re-arms the
// EPOLLPRI edge, so each wake-up preads it and reports the counters that grew.
// Files that cannot be polled for EPOLLPRI (epoll_ctl refuses regular files with EPERM) are
// watched with inotify IN_MODIFY instead, through the same hub.
import { existsSync } from "node:fs";
import {
  close,
  EPOLLIN,
  EPOLLPRI,
  IN_ATTRIB,
  IN_CLOEXEC,
  IN_DELETE_SELF,
  IN_MODIFY,
  IN_MOVE_SELF,
  IN_NONBLOCK,
  inotify_add_watch,
  inotify_init1,
  O_CLOEXEC,
  O_RDONLY,
  open,
  pread,
  read,
  SyscallError,
} from "../../ffi/libc.ts";
import { memoryEventsDelta, parseMemoryEvents, type MemoryEvents } from "./cgroup-parse.ts";
import type { HubRegistration, NotifierHub } from "./hub.ts";

export interface MemoryEventsEvent {
  path: string;
  counters: MemoryEvents;
  /** Only the counters that grew since the previous read. */
  delta: Partial<MemoryEvents>;
  atMs: number;
}

export interface MemoryEventsWatcherOptions {
  /** Path to a memory.events file (a cgroup v2 directory + "/memory.events"). */
  path: string;
  onEvent(ev: MemoryEventsEvent): void;
  onRemoved?(path: string): void;
  onError?(err: Error): void;
}

export interface MemoryEventsWatcher {
  readonly mode: "epollpri" | "inotify";
  /** Counters at the last read. */
  readonly counters: MemoryEvents;
  readonly stopped: boolean;
  stop(): void;
}

export function watchMemoryEvents(hub: NotifierHub, opts: MemoryEventsWatcherOptions): MemoryEventsWatcher {
  const fd = open(opts.path, O_RDONLY | O_CLOEXEC);
  const buf = new Uint8Array(4096);
  const readCounters = (): MemoryEvents => {
    const n = pread(fd, buf, 0);
    return parseMemoryEvents(new TextDecoder().decode(buf.subarray(0, n)), opts.path);
  };
  let counters: MemoryEvents;
  let mode: "epollpri" | "inotify" = "epollpri";
  let inotifyFd: number | undefined;
  let reg: HubRegistration;
  let stopped = false;

  const stop = () => {
    if (stopped) return;
    stopped = true;
    reg.remove();
    if (inotifyFd !== undefined) close(inotifyFd);
    close(fd);
  };

  const onReady = () => {
    if (inotifyFd !== undefined) drainInotify(inotifyFd);
    if (!existsSync(opts.path)) {
      stop();
      opts.onRemoved?.(opts.path);
      return;
    }
    let next: MemoryEvents;
    try {
      next = readCounters();
    } catch (e) {
      opts.onError?.(e as Error);
      return;
    }
    const delta = memoryEventsDelta(counters, next);
    counters = next;
    if (Object.keys(delta).length > 0) opts.onEvent({ path: opts.path, counters: next, delta, atMs: performance.now() });
  };

  try {
    counters = readCounters();
    try {
      reg = hub.add({ fd, events: EPOLLPRI, onReady });
    } catch (e) {
      if (!(e instanceof SyscallError) || e.code !== "EPERM") throw e;
      mode = "inotify";
      inotifyFd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
      inotify_add_watch(inotifyFd, opts.path, IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF);
      reg = hub.add({ fd: inotifyFd, events: EPOLLIN, onReady });
    }
  } catch (e) {
    if (inotifyFd !== undefined) close(inotifyFd);
    close(fd);
    throw e;
  }

  return {
    get mode() {
      return mode;
    },
    get counters() {
      return counters;
    },
    get stopped() {
      return stopped;
    },
    stop,
  };
}

function drainInotify(fd: number): void {
  const buf = new Uint8Array(4096);
  try {
    while (read(fd, buf) > 0) {}
  } catch (e) {
    if (!(e instanceof SyscallError) || e.code !== "EAGAIN") throw e;
  }
}
