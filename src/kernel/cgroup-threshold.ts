// cgroup v1 memory threshold notification (upstream pkg/kubelet/eviction linuxCgroupNotifier):
// the kernel signals an eventfd when the cgroup's `memory.usage_in_bytes` crosses a value, in
// either direction. Registration is `"<eventfd> <attribute fd> <bytes>"` written to
// cgroup.event_control; it lives until the eventfd is closed or the cgroup is removed.
// Removing the cgroup (rmdir) also signals the eventfd, so each wake-up checks the cgroup still
// exists and reports removal instead of a false threshold event.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { close, EPOLLIN, O_CLOEXEC, O_RDONLY, O_WRONLY, open, write } from "../../ffi/libc.ts";
import { Eventfd } from "./eventfd.ts";
import type { NotifierHub } from "./hub.ts";

export const MEMORY_USAGE_ATTRIBUTE = "memory.usage_in_bytes";

export interface ThresholdEvent {
  cgroupPath: string;
  attribute: string;
  thresholdBytes: number;
  /** Crossings the kernel counted since the last wake-up (usually 1). */
  count: number;
  /** The attribute's value read right after the wake-up, when readable. */
  usageBytes?: number;
  /** performance.now() when the main thread saw the event. */
  atMs: number;
  /** Wall-clock ms (performance.timeOrigin + now) when the notifier thread woke up. */
  wokeAtMs: number;
}

export interface CgroupThresholdOptions {
  cgroupPath: string;
  thresholdBytes: number;
  attribute?: string;
  onEvent(ev: ThresholdEvent): void;
  /** The cgroup went away; the notifier has stopped itself. */
  onRemoved?(cgroupPath: string): void;
}

export interface CgroupThresholdNotifier {
  readonly cgroupPath: string;
  readonly thresholdBytes: number;
  readonly stopped: boolean;
  /** Unregisters (closing the eventfd ends the kernel registration). Idempotent. */
  stop(): void;
}

/** Registers a threshold on the hub; throws SyscallError (naming the file) when the kernel refuses. */
export function startCgroupThreshold(hub: NotifierHub, opts: CgroupThresholdOptions): CgroupThresholdNotifier {
  const attribute = opts.attribute ?? MEMORY_USAGE_ATTRIBUTE;
  const attrPath = join(opts.cgroupPath, attribute);
  if (!Number.isSafeInteger(opts.thresholdBytes) || opts.thresholdBytes < 0) {
    throw new RangeError(`threshold for ${attrPath}: ${opts.thresholdBytes} is not a non-negative integer byte count`);
  }
  const efd = new Eventfd();
  let stopped = false;
  let reg: { remove(): void } | undefined;
  try {
    register(efd.fd, opts.cgroupPath, attrPath, opts.thresholdBytes);
    reg = hub.add({ fd: efd.fd, events: EPOLLIN, onReady });
  } catch (e) {
    efd.close();
    throw e;
  }

  function stop(): void {
    if (stopped) return;
    stopped = true;
    reg?.remove();
    efd.close();
  }

  function onReady(_events: number, wokeAtMs: number): void {
    const count = efd.drain();
    if (count === 0) return;
    if (!existsSync(opts.cgroupPath)) {
      stop();
      opts.onRemoved?.(opts.cgroupPath);
      return;
    }
    const ev: ThresholdEvent = {
      cgroupPath: opts.cgroupPath,
      attribute,
      thresholdBytes: opts.thresholdBytes,
      count,
      atMs: performance.now(),
      wokeAtMs,
    };
    const usage = readNumber(attrPath);
    if (usage !== undefined) ev.usageBytes = usage;
    opts.onEvent(ev);
  }

  return {
    cgroupPath: opts.cgroupPath,
    thresholdBytes: opts.thresholdBytes,
    get stopped() {
      return stopped;
    },
    stop,
  };
}

function register(efd: number, cgroupPath: string, attrPath: string, bytes: number): void {
  // The attribute fd is only needed during the write: the kernel resolves it then and keeps its own
  // reference to the cgroup, so we close it right away.
  const attrFd = open(attrPath, O_RDONLY | O_CLOEXEC);
  try {
    const ctlPath = join(cgroupPath, "cgroup.event_control");
    const ctlFd = open(ctlPath, O_WRONLY | O_CLOEXEC);
    try {
      write(ctlFd, `${efd} ${attrFd} ${bytes}`);
    } catch (e) {
      throw Object.assign(e as Error, { path: ctlPath, message: `${(e as Error).message} (writing ${ctlPath})` });
    } finally {
      close(ctlFd);
    }
  } finally {
    close(attrFd);
  }
}

function readNumber(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, "utf8").trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}
