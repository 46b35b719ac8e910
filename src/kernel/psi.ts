// PSI trigger notifier (cgroup v2 / /proc/pressure, beyond upstream kubelet): write
// "<some|full> <stall µs> <window µs>" to an O_RDWR|O_NONBLOCK fd of a *.pressure file; the kernel
// raises EPOLLPRI when that much stall accumulates within the window (at most once per window).
// Kernels without PSI triggers (or unprivileged writers, EPERM) refuse the write: we report that
// once with the reason and fall back to polling the file, firing with the same rule.
import { existsSync, readFileSync } from "node:fs";
import { close, EPOLLERR, EPOLLPRI, O_CLOEXEC, O_NONBLOCK, O_RDWR, open, SyscallError, write } from "../../ffi/libc.ts";
import { parsePressure, parsePsiTrigger, type Pressure, type PsiTrigger } from "./cgroup-parse.ts";
import type { HubRegistration, NotifierHub } from "./hub.ts";

export interface PsiEvent {
  path: string;
  trigger: PsiTrigger;
  /** "kernel" for an EPOLLPRI wake-up, "poll" when the fallback loop detected it. */
  source: "kernel" | "poll";
  /** The file's content right after the event, when readable. */
  pressure?: Pressure;
  atMs: number;
}

export interface PsiNotifierOptions {
  /** e.g. /sys/fs/cgroup/unified/memory.pressure or /proc/pressure/memory. */
  path: string;
  /** e.g. "some 150000 1000000". */
  trigger: string;
  onEvent(ev: PsiEvent): void;
  /** Called once when the kernel refuses the trigger (`hint` explains likely causes); polling takes over. */
  onUnsupported?(reason: SyscallError, hint: string): void;
  /** The file (its cgroup) went away; the notifier has stopped. */
  onRemoved?(path: string): void;
  /** Fallback poll interval (default 1000 ms). */
  pollIntervalMs?: number;
}

export interface PsiNotifier {
  readonly mode: "kernel" | "poll";
  readonly stopped: boolean;
  stop(): void;
}

/** errnos meaning "this kernel/file cannot do triggers here", as opposed to a bad path. */
const UNSUPPORTED = new Set(["EPERM", "EINVAL", "EOPNOTSUPP", "ENOTSUP", "EBUSY", "EACCES"]);

export function startPsiNotifier(hub: NotifierHub, opts: PsiNotifierOptions): PsiNotifier {
  const trigger = parsePsiTrigger(opts.trigger);
  const fd = open(opts.path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
  let reg: HubRegistration;
  try {
    // The kernel overwrites the last byte written with NUL, so the NUL must be ours.
    write(fd, `${opts.trigger.trim()}\0`);
    reg = hub.add({ fd, events: EPOLLPRI, onReady });
  } catch (e) {
    close(fd);
    if (!(e instanceof SyscallError) || !UNSUPPORTED.has(e.code)) throw e;
    opts.onUnsupported?.(Object.assign(e, { path: opts.path }), unsupportedHint(e, trigger));
    return startPsiPolling(opts, trigger);
  }

  let stopped = false;
  function stop(): void {
    if (stopped) return;
    stopped = true;
    reg.remove();
    close(fd);
  }
  function onReady(events: number): void {
    // A removed cgroup's pressure file reports EPOLLERR from then on.
    if ((events & EPOLLERR) !== 0 && !existsSync(opts.path)) {
      stop();
      opts.onRemoved?.(opts.path);
      return;
    }
    if ((events & EPOLLPRI) === 0) return;
    opts.onEvent({ path: opts.path, trigger, source: "kernel", pressure: readPressure(opts.path), atMs: performance.now() });
  }
  return {
    mode: "kernel",
    get stopped() {
      return stopped;
    },
    stop,
  };
}

/** The fallback: re-reads the file every pollIntervalMs and fires when `total` grew by ≥ stall within the window. */
export function startPsiPolling(opts: PsiNotifierOptions, trigger: PsiTrigger = parsePsiTrigger(opts.trigger)): PsiNotifier {
  const intervalMs = opts.pollIntervalMs ?? 1000;
  const windowMs = trigger.windowUs / 1000;
  const samples: Array<{ atMs: number; totalUs: number }> = [];
  let lastFiredMs = Number.NEGATIVE_INFINITY;
  let stopped = false;
  const tick = () => {
    const pressure = readPressure(opts.path);
    if (!pressure) {
      if (!existsSync(opts.path)) {
        stop();
        opts.onRemoved?.(opts.path);
      }
      return;
    }
    const line = trigger.kind === "full" ? pressure.full : pressure.some;
    if (!line) return;
    const now = performance.now();
    samples.push({ atMs: now, totalUs: line.total });
    while (samples.length > 1 && samples[0]!.atMs < now - windowMs) samples.shift();
    const stalledUs = line.total - samples[0]!.totalUs;
    if (stalledUs >= trigger.stallUs && now - lastFiredMs >= windowMs) {
      lastFiredMs = now;
      opts.onEvent({ path: opts.path, trigger, source: "poll", pressure, atMs: now });
    }
  };
  const timer = setInterval(tick, intervalMs);
  tick();
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
  };
  return {
    mode: "poll",
    get stopped() {
      return stopped;
    },
    stop,
  };
}

function readPressure(path: string): Pressure | undefined {
  try {
    return parsePressure(readFileSync(path, "utf8"), path);
  } catch {
    return undefined;
  }
}

/** CAP_SYS_RESOURCE (bit 24) in the effective set: without it the kernel only accepts 2 s-multiple windows. */
export function hasCapSysResource(status = readStatus()): boolean {
  const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(status);
  return m ? (BigInt(`0x${m[1]}`) & (1n << 24n)) !== 0n : false;
}

function readStatus(): string {
  try {
    return readFileSync("/proc/self/status", "utf8");
  } catch {
    return "";
  }
}

function unsupportedHint(e: SyscallError, t: PsiTrigger): string {
  if (e.code === "EINVAL" && t.windowUs % 2_000_000 !== 0 && !hasCapSysResource()) {
    return `without CAP_SYS_RESOURCE the kernel accepts only windows that are multiples of 2 s (got ${t.windowUs} µs); polling instead`;
  }
  if (e.code === "EOPNOTSUPP" || e.code === "ENOTSUP") return "PSI is disabled in this kernel (psi=0); polling instead";
  if (e.code === "EBUSY") return "a trigger is already registered on this fd; polling instead";
  return `the kernel refused the trigger; polling instead`;
}
