// cgroup v1 memory threshold notification (upstream pkg/kubelet/eviction linuxCgroupNotifier):
// the kernel signals an eventfd when the cgroup's `memory.usage_in_bytes` crosses a value, in
// either direction. Registration is `"<eventfd> <attribute fd> <bytes>"` written to
// cgroup.event_control; it lives until the eventfd is closed or the cgroup is removed.
// Removing the cgroup (rmdir) also signals the eventfd, so each wake-up checks the cgroup still
// exists and reports removal instead of a false threshold event.
// The wake-up path opens no file: the attribute's fd (opened for the registration) is kept and re-read
// with pread at offset 0, so an agent out of file descriptors (EMFILE) still reads the usage it was
// woken for (the kernel regenerates a cgroup file's text on each read from 0).
import { existsSync, write as fsWrite } from "node:fs";
import { join } from "node:path";
import { close, EPOLLIN, O_CLOEXEC, O_RDONLY, O_WRONLY, open, pread, SyscallError } from "../../ffi/libc.ts";
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
  /** Wall-clock ms (preciseNow) when the notifier thread woke up. */
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
  /** The hub registration's epoll token (what the worker reports at a wake-up). */
  readonly token: number;
  /** Unregisters (closing the eventfd ends the kernel registration). Idempotent. */
  stop(): void;
}

/**
 * Registers a threshold on the hub. The cgroup.event_control write, which the kernel holds for an
 * RCU grace period (synchronize_rcu in the memcg threshold registration, measured 8–20 ms on the CI
 * host), runs on Bun's I/O thread pool, never on the event loop; the fds it names stay open until it
 * returns. Rejects with a SyscallError naming the file when the kernel refuses.
 */
export async function armCgroupThreshold(hub: NotifierHub, opts: CgroupThresholdOptions): Promise<CgroupThresholdNotifier> {
  const { attribute, attrPath } = thresholdTarget(opts);
  const efd = new Eventfd();
  try {
    const reg = openRegistration(efd.fd, opts.cgroupPath, attrPath, opts.thresholdBytes);
    try {
      await new Promise<void>((resolve, reject) => fsWrite(reg.ctlFd, reg.line, (err) => (err ? reject(err) : resolve())));
    } catch (e) {
      reg.close();
      const errno = Math.abs(Number((e as NodeJS.ErrnoException).errno));
      throw Number.isFinite(errno) && errno > 0
        ? new SyscallError("write", errno, reg.ctlPath)
        : Object.assign(e as Error, { path: reg.ctlPath, message: `${(e as Error).message} (writing ${reg.ctlPath})` });
    }
    const attrFd = reg.keepAttr();
    if (hub.closed) {
      close(attrFd);
      throw new Error(`threshold for ${attrPath}: the notifier hub closed while it was being armed`);
    }
    try {
      return watch(hub, efd, attrFd, opts, attribute);
    } catch (e) {
      close(attrFd);
      throw e;
    }
  } catch (e) {
    efd.close();
    throw e;
  }
}

function thresholdTarget(opts: CgroupThresholdOptions): { attribute: string; attrPath: string } {
  const attribute = opts.attribute ?? MEMORY_USAGE_ATTRIBUTE;
  const attrPath = join(opts.cgroupPath, attribute);
  if (!Number.isSafeInteger(opts.thresholdBytes) || opts.thresholdBytes < 0) {
    throw new RangeError(`threshold for ${attrPath}: ${opts.thresholdBytes} is not a non-negative integer byte count`);
  }
  return { attribute, attrPath };
}

/** Watches a registered eventfd on the hub; the returned notifier owns `efd` and `attrFd`. */
function watch(hub: NotifierHub, efd: Eventfd, attrFd: number, opts: CgroupThresholdOptions, attribute: string): CgroupThresholdNotifier {
  let stopped = false;
  const reg = hub.add({ fd: efd.fd, events: EPOLLIN, onReady });
  const buf = new Uint8Array(32);

  function stop(): void {
    if (stopped) return;
    stopped = true;
    reg.remove();
    efd.close();
    close(attrFd);
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
    const usage = readKept(attrFd, buf);
    if (usage !== undefined) ev.usageBytes = usage;
    opts.onEvent(ev);
  }

  return {
    cgroupPath: opts.cgroupPath,
    thresholdBytes: opts.thresholdBytes,
    token: reg.token,
    get stopped() {
      return stopped;
    },
    stop,
  };
}

/**
 * Opens what a registration names: the attribute (the kernel resolves it during the write and keeps
 * its own reference to the cgroup) and cgroup.event_control. After the write, `keepAttr()` closes the
 * control file and hands over the attribute's fd (read on each wake-up); `close()` closes both.
 */
function openRegistration(efd: number, cgroupPath: string, attrPath: string, bytes: number) {
  const attrFd = open(attrPath, O_RDONLY | O_CLOEXEC);
  const ctlPath = join(cgroupPath, "cgroup.event_control");
  let ctlFd: number;
  try {
    ctlFd = open(ctlPath, O_WRONLY | O_CLOEXEC);
  } catch (e) {
    close(attrFd);
    throw e;
  }
  return {
    ctlFd,
    ctlPath,
    line: `${efd} ${attrFd} ${bytes}`,
    close() {
      close(ctlFd);
      close(attrFd);
    },
    keepAttr(): number {
      close(ctlFd);
      return attrFd;
    },
  };
}

/** The number in a kept cgroup file, read from offset 0; undefined when unreadable (cgroup gone). */
function readKept(fd: number, buf: Uint8Array): number | undefined {
  try {
    const n = pread(fd, buf, 0);
    const v = Number(new TextDecoder().decode(buf.subarray(0, n)).trim());
    return n > 0 && Number.isFinite(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
