// cgroup v2 memory.events watcher (beyond upstream kubelet): the kernel bumps the counters
// low/high/max/oom/oom_kill and notifies the file; each notification is re-read (kernfs-watch.ts)
// and the counters that grew are reported — e.g. oom_kill +1 means the kernel OOM killer acted in
// that cgroup, high +n means it was throttled at memory.high.
import { memoryEventsDelta, parseMemoryEvents, type MemoryEvents } from "./cgroup-parse.ts";
import type { NotifierHub } from "./hub.ts";
import { watchKernfsFile } from "./kernfs-watch.ts";

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
  /** The file could not be parsed after a change (the watch continues). */
  onError?(err: Error): void;
  /** How often to check the cgroup still exists (default 10000 ms), see kernfs-watch.ts. */
  removalCheckMs?: number;
}

export interface MemoryEventsWatcher {
  readonly mode: "epollpri" | "inotify";
  /** Counters at the last read. */
  readonly counters: MemoryEvents;
  readonly stopped: boolean;
  stop(): void;
}

export function watchMemoryEvents(hub: NotifierHub, opts: MemoryEventsWatcherOptions): MemoryEventsWatcher {
  let counters: MemoryEvents | undefined;
  const w = watchKernfsFile(hub, {
    path: opts.path,
    onChange(text) {
      let next: MemoryEvents;
      try {
        next = parseMemoryEvents(text, opts.path);
      } catch (e) {
        opts.onError?.(e as Error);
        return;
      }
      const delta = memoryEventsDelta(counters!, next);
      counters = next;
      if (Object.keys(delta).length > 0) opts.onEvent({ path: opts.path, counters: next, delta, atMs: performance.now() });
    },
    onRemoved: opts.onRemoved,
    removalCheckMs: opts.removalCheckMs,
  });
  try {
    counters = parseMemoryEvents(w.initial, opts.path);
  } catch (e) {
    w.stop();
    throw e;
  }
  return {
    get mode() {
      return w.mode;
    },
    get counters() {
      return counters!;
    },
    get stopped() {
      return w.stopped;
    },
    stop: () => w.stop(),
  };
}
