// cgroup v1 memory threshold notification (upstream pkg/kubelet/eviction linuxCgroupNotifier):
// the kernel signals an eventfd when the cgroup's `memory.usage_in_bytes` crosses a value, in
// either direction. Registration is `"<eventfd> <attribute fd> <bytes>"` written to
// cgroup.event_control; it lives until the eventfd is closed or the cgroup is removed.
// Removing the cgroup (rmdir) also signals the eventfd, so each wake-up checks the cgroup still
// exists and reports removal instead of a false threshold event.
import { existsSync, readFileSync, write as fsWrite } from "node:fs";
import { join } from "node:path";
import { close, EPOLLIN, O_CLOEXEC, O_RDONLY, O_WRONLY, open, SyscallError } from "../../ffi/libc.ts";
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
      const errno = Math.abs(Number((e as NodeJS.ErrnoException).errno));
      throw Number.isFinite(errno) && errno > 0
        ? new SyscallError("write", errno, reg.ctlPath)
        : Object.assign(e as Error, { path: reg.ctlPath, message: `${(e as Error).message} (writing ${reg.ctlPath})` });
    } finally {
      reg.close();
    }
    if (hub.closed) throw new Error(`threshold for ${attrPath}: the notifier hub closed while it was being armed`);
    return watch(hub, efd, opts, attribute, attrPath);
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

/** Watches a registered eventfd on the hub; the returned notifier owns `efd`. */
function watch(hub: NotifierHub, efd: Eventfd, opts: CgroupThresholdOptions, attribute: string, attrPath: string): CgroupThresholdNotifier {
  let stopped = false;
  const reg = hub.add({ fd: efd.fd, events: EPOLLIN, onReady });

  function stop(): void {
    if (stopped) return;
    stopped = true;
    reg.remove();
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

/**
 * Opens what a registration names: the attribute (only needed during the write — the kernel resolves
 * it then and keeps its own reference to the cgroup) and cgroup.event_control. `close()` after the write.
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
  };
}

function readNumber(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, "utf8").trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}
