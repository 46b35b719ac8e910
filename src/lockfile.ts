// The kubelet's --lock-file / --exit-on-lock-contention (cmd/kubelet/app/server.go run()):
// flock(LOCK_EX) on the file, waiting until it is free; with exit-on-lock-contention, an inotify
// watch (IN_OPEN|IN_DELETE_SELF) on it tells the holder that another instance wants the lock, and
// the holder exits so the newcomer takes over (a rolling upgrade of the node agent).
//
// Upstream blocks in flock(2); we poll LOCK_NB so the event loop (and HTTP serving, signals) keep
// running while waiting, and read inotify through a non-blocking fd stream.
import * as libc from "../ffi/libc.ts";
import { log, kv } from "./log.ts";

export interface LockFile {
  path: string;
  /** Releases the lock and closes the fd. Idempotent. */
  release(): void;
}

export interface AcquireOpts {
  /** How often to retry while another process holds the lock. */
  pollMs?: number;
  /** Aborting stops waiting; acquireLockFile then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export class LockFileError extends Error {
  override name = "LockFileError";
}

const isContended = (err: unknown) => err instanceof libc.SyscallError && err.errno === libc.ERRNO.EAGAIN;

/** Opens (creating, mode 0600) and exclusively locks `path`, waiting for the current holder. */
export async function acquireLockFile(path: string, opts: AcquireOpts = {}): Promise<LockFile> {
  const pollMs = opts.pollMs ?? 100;
  let fd: number;
  try {
    fd = libc.open(path, libc.O_CREAT | libc.O_RDWR | libc.O_CLOEXEC, 0o600);
  } catch (err) {
    throw new LockFileError(`unable to acquire file lock on ${JSON.stringify(path)}: ${(err as Error).message}`);
  }
  const closeFd = () => {
    try {
      libc.close(fd);
    } catch {}
  };

  let waitingLogged = false;
  for (;;) {
    if (opts.signal?.aborted) {
      closeFd();
      throw opts.signal.reason ?? new LockFileError(`gave up waiting for the lock on ${JSON.stringify(path)}`);
    }
    try {
      libc.flock(fd, libc.LOCK_EX | libc.LOCK_NB);
      break;
    } catch (err) {
      if (!isContended(err)) {
        closeFd();
        throw new LockFileError(`unable to acquire file lock on ${JSON.stringify(path)}: ${(err as Error).message}`);
      }
    }
    if (!waitingLogged) {
      log.info(`Waiting for file lock held by another process ${kv({ path })}`);
      waitingLogged = true;
    }
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, pollMs);
      opts.signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
    });
  }

  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      try {
        libc.flock(fd, libc.LOCK_UN);
      } catch {}
      closeFd(); // closing also drops the lock; the explicit unlock covers a leaked dup of the fd
    },
  };
}

export interface LockContentionEvent {
  /** inotify mask of the event (IN_OPEN, IN_DELETE_SELF, …). */
  mask: number;
  /** "open" or "delete_self", for the log. */
  kind: string;
}

export interface ContentionWatch {
  /** Stops watching. Idempotent. */
  close(): Promise<void>;
}

/** Decodes the mask of the first struct inotify_event (wd i32, mask u32, cookie u32, len u32). */
export function decodeInotifyMask(buf: Uint8Array): number | undefined {
  if (buf.byteLength < 16) return undefined;
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength).getUint32(4, true);
}

export function describeMask(mask: number): string {
  const names: string[] = [];
  if (mask & libc.IN_OPEN) names.push("open");
  if (mask & libc.IN_DELETE_SELF) names.push("delete_self");
  if (mask & libc.IN_IGNORED) names.push("ignored");
  return names.join("|") || `0x${mask.toString(16)}`;
}

/**
 * Calls `onContention` once when another process opens or deletes `path`. Must be set up after
 * this process opened the file itself, or the watch would see our own open.
 */
export function watchLockContention(path: string, onContention: (ev: LockContentionEvent) => void): ContentionWatch {
  const fd = libc.inotify_init1(libc.IN_NONBLOCK | libc.IN_CLOEXEC);
  try {
    libc.inotify_add_watch(fd, path, libc.IN_OPEN | libc.IN_DELETE_SELF);
  } catch (err) {
    libc.close(fd);
    throw err;
  }
  const reader = Bun.file(fd).stream().getReader();
  let closed = false;

  void (async () => {
    try {
      const { value, done } = await reader.read();
      if (closed || done || !value) return;
      const mask = decodeInotifyMask(value) ?? 0;
      onContention({ mask, kind: describeMask(mask) });
    } catch (err) {
      if (!closed) log.error(`inotify watcher error ${kv({ path, error: String(err) })}`);
    }
  })();

  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        closed = true;
        await reader.cancel().catch(() => {});
        try {
          libc.close(fd);
        } catch {}
      })();
      return closing;
    },
  };
}
