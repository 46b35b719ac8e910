// Watches a cgroup (kernfs) file that the kernel "notifies" on change — memory.events,
// cgroup.events, memory.swap.events… kernfs_notify raises EPOLLPRI (with EPOLLERR) on every open
// fd until that fd re-reads the file, so each wake-up preads the file from offset 0 (which
// re-arms it) and hands the text over. Removing the cgroup does NOT wake pollers of its kernfs
// files (unlike memcg eventfds and PSI triggers), so a slow unref'd timer checks the file still
// exists (removalCheckMs) and each wake-up checks too. Files that cannot be polled (epoll_ctl refuses regular files with
// EPERM) are watched with inotify (IN_MODIFY and the unlink/rename events) through the same hub.
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
import type { HubRegistration, NotifierHub } from "./hub.ts";

export interface KernfsWatchOptions {
  path: string;
  /** The file's content after a change notification (may equal the previous content). */
  onChange(text: string, wokeAtMs: number): void;
  onRemoved?(path: string): void;
  /** How often to check the file still exists (default 10000 ms; 0 = only on wake-ups). */
  removalCheckMs?: number;
}

export interface KernfsWatch {
  readonly mode: "epollpri" | "inotify";
  /** The content read at start. */
  readonly initial: string;
  readonly stopped: boolean;
  stop(): void;
}

export function watchKernfsFile(hub: NotifierHub, opts: KernfsWatchOptions): KernfsWatch {
  const fd = open(opts.path, O_RDONLY | O_CLOEXEC);
  const buf = new Uint8Array(8192);
  const decoder = new TextDecoder();
  const readText = () => decoder.decode(buf.subarray(0, pread(fd, buf, 0)));
  let mode: "epollpri" | "inotify" = "epollpri";
  let inotifyFd: number | undefined;
  let reg: HubRegistration;
  let stopped = false;
  let initial: string;

  let timer: ReturnType<typeof setInterval> | undefined;

  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    reg.remove();
    if (inotifyFd !== undefined) close(inotifyFd);
    close(fd);
  };

  const onReady = (_events: number, wokeAtMs: number) => {
    if (inotifyFd !== undefined) drainInotify(inotifyFd);
    if (!existsSync(opts.path)) {
      stop();
      opts.onRemoved?.(opts.path);
      return;
    }
    let text: string;
    try {
      text = readText();
    } catch (e) {
      // ENODEV/ENOENT: the kernfs node went away between the check and the read.
      stop();
      if (e instanceof SyscallError) opts.onRemoved?.(opts.path);
      else throw e;
      return;
    }
    opts.onChange(text, wokeAtMs);
  };

  try {
    initial = readText();
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

  const checkMs = opts.removalCheckMs ?? 10_000;
  if (checkMs > 0) {
    timer = setInterval(() => {
      if (stopped || existsSync(opts.path)) return;
      stop();
      opts.onRemoved?.(opts.path);
    }, checkMs);
    timer.unref();
  }

  return {
    get mode() {
      return mode;
    },
    initial,
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
