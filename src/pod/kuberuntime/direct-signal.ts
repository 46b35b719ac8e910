// Signalling a container's init process directly, right before the CRI StopContainer that does
// the same. Why: a StopContainer reaches the process through containerd → shim → a fresh `runc
// kill` process, ~10 ms on the CI host (reaction benchmark, StopContainer sent → victim got
// SIGTERM); under memory pressure those are the milliseconds the kernel OOM killer races. The
// runtime's own stop still follows at once and stays in charge (the SIGKILL after the grace
// period, the exit status, cleanup); the process just gets its first signal sooner.
//
// Only for stops that grant ≤ DIRECT_SIGNAL_MAX_GRACE_SECONDS (hard and local-storage evictions get
// 1 s, as upstream; grace 0 means SIGKILL): the process receives the stop signal twice, ~10 ms apart,
// which is harmless when it is killed within the second anyway, but could cut short a longer graceful
// shutdown that treats a second SIGTERM as "force". A preStop hook runs before the stop
// (container-hooks.ts killContainer), so the direct signal, as the runtime's, comes after it.
//
// What it needs per running container, learnt in the background when kuberuntime first sees it
// running (never on the stop path): its init's host PID (containerd's verbose ContainerStatus) held
// as a pidfd — so a PID reused after the container exited can never be signalled — checked to sit in
// the container's cgroup, and its image's StopSignal (verbose ImageStatus, cached per image).
import { readFileSync } from "node:fs";
import { close, pidfd_open, pidfd_send_signal, SyscallError } from "../../../ffi/libc.ts";
import type { CriClient } from "../../cri/client.ts";
import { kv, log } from "../../log.ts";
import { cgroupFileNamesContainer, containerInitPid, firstStopSignal, imageStopSignal } from "./stop-signal.ts";

export const DIRECT_SIGNAL_MAX_GRACE_SECONDS = 1;

export interface DirectSignalEvent {
  containerId: string;
  podUid: string;
  pid: number;
  signal: number;
  /** Clock ms right before the signal was sent. */
  atMs: number;
}

export interface DirectSignaller {
  /**
   * A running container of pod `podUid`: learn its init and stop signal in the background (idempotent).
   * `justStarted`: this agent's StartContainer just returned for it (learnt a relist earlier than the
   * listing would show it); a `retain` from a listing taken before the start spares it for a while.
   */
  track(containerId: string, podUid: string, justStarted?: boolean): void;
  /** Forgets (and closes the pidfds of) containers not in `running`. */
  retain(running: ReadonlySet<string>): void;
  /**
   * Sends the container's init the stop's first signal (SIGKILL for grace 0, else the stop signal) when
   * the grace is ≤ DIRECT_SIGNAL_MAX_GRACE_SECONDS and the container is known; returns the event, or
   * undefined when nothing was sent (the CRI stop does it all then). Never throws.
   */
  signal(containerId: string, graceSeconds: number): DirectSignalEvent | undefined;
  /** Containers ready to be signalled (tests, debugging). */
  readonly size: number;
  /**
   * The containers of pod `podUid` ready to be signalled: their init's PID, the pidfd held on it (never
   * to be closed by the caller) and stop signal. For the eviction fast path (wire/fast-eviction.ts).
   */
  knownContainers?(podUid: string): { containerId: string; pid: number; pidfd: number; stopSignal: number }[];
  /** Calls `fn(podUid)` each time a container of that pod becomes ready to be signalled; returns an unsubscribe. */
  onKnown?(fn: (podUid: string) => void): () => void;
  close(): void;
}

/** How long `retain` spares a container tracked at its start that the listing did not show yet. */
export const STARTED_RETAIN_GRACE_MS = 5_000;

export interface DirectSignallerOptions {
  cri: Pick<CriClient, "containerStatus" | "imageStatusInfo">;
  now?: () => number;
  /** Called with every direct signal sent (the eviction trace's "stop signal sent"). */
  onSignal?(e: DirectSignalEvent): void;
  /** Test hooks. */
  pidfdOpen?: (pid: number) => number;
  sendSignal?: (pidfd: number, signal: number) => void;
  closeFd?: (fd: number) => void;
  /** /proc/<pid>/cgroup text (default: read from /proc). */
  procCgroup?: (pid: number) => string;
}

interface Known {
  podUid: string;
  pidfd: number;
  pid: number;
  stopSignal: number;
}

export function createDirectSignaller(opts: DirectSignallerOptions): DirectSignaller {
  const now = opts.now ?? Date.now;
  const openPidfd = opts.pidfdOpen ?? ((pid: number) => pidfd_open(pid));
  const send = opts.sendSignal ?? pidfd_send_signal;
  const closeFd = opts.closeFd ?? close;
  const procCgroup = opts.procCgroup ?? ((pid: number) => readFileSync(`/proc/${pid}/cgroup`, "utf8"));
  const known = new Map<string, Known>();
  /** Containers being looked up, known, or found not signallable (not looked up again until they leave `running`). */
  const seen = new Set<string>();
  const stopSignals = new Map<string, Promise<number | undefined>>();
  /** Containers tracked at their start, and when: spared by a `retain` until STARTED_RETAIN_GRACE_MS. */
  const startedAt = new Map<string, number>();
  const knownListeners = new Set<(podUid: string) => void>();
  let closed = false;
  let unsupported = false;

  const forget = (id: string) => {
    seen.delete(id);
    startedAt.delete(id);
    const k = known.get(id);
    if (!k) return;
    known.delete(id);
    try {
      closeFd(k.pidfd);
    } catch {}
  };

  const stopSignalOf = (imageRef: string) => {
    let p = stopSignals.get(imageRef);
    if (!p) {
      p = opts.cri.imageStatusInfo(imageRef).then(
        (r) => imageStopSignal(r.info),
        () => undefined,
      );
      stopSignals.set(imageRef, p);
      // A failed lookup is retried for the next container of that image.
      void p.then((s) => s === undefined && stopSignals.delete(imageRef));
    }
    return p;
  };

  async function learn(id: string, podUid: string): Promise<void> {
    const st = await opts.cri.containerStatus(id, true);
    const pid = containerInitPid(st.info);
    const imageRef = st.status?.imageRef || st.status?.image?.image;
    if (pid === undefined || !imageRef || st.status?.state !== "CONTAINER_RUNNING") return;
    const stopSignal = await stopSignalOf(imageRef);
    if (stopSignal === undefined || closed || !seen.has(id)) return;
    let pidfd: number;
    try {
      pidfd = openPidfd(pid);
    } catch (e) {
      if (e instanceof SyscallError && e.code === "ENOSYS") {
        unsupported = true;
        log.info("containers are signalled through the runtime only: this kernel has no pidfd_open (Linux ≥ 5.3)");
      }
      return;
    }
    // The pidfd holds the process that had `pid` when it was opened: if that process is in the
    // container's cgroup and still alive after the check, the pidfd is the container's init.
    let ok = false;
    try {
      ok = cgroupFileNamesContainer(procCgroup(pid), id);
      if (ok) send(pidfd, 0);
    } catch {
      ok = false;
    }
    if (!ok || closed || !seen.has(id)) {
      closeFd(pidfd);
      return;
    }
    known.set(id, { podUid, pidfd, pid, stopSignal });
    // The eviction fast path re-plans on this (wire/fast-eviction.ts): a new pod is signallable from the
    // notifier thread as soon as its init is known, not at the planner's next timer.
    for (const fn of knownListeners) {
      try {
        fn(podUid);
      } catch {}
    }
  }

  return {
    track(id, podUid, justStarted) {
      if (closed || unsupported || seen.has(id)) return;
      seen.add(id);
      if (justStarted) startedAt.set(id, now());
      learn(id, podUid).catch((e: unknown) => {
        // A runtime error is retried at the next relist; a container found not signallable is not.
        seen.delete(id);
        log.debug(`direct signal: cannot learn container ${kv({ id: id.slice(0, 13), error: (e as Error).message })}`);
      });
    },
    retain(running) {
      const at = now();
      for (const id of [...seen]) {
        if (running.has(id)) {
          startedAt.delete(id);
          continue;
        }
        const started = startedAt.get(id);
        if (started !== undefined && at - started < STARTED_RETAIN_GRACE_MS) continue; // listed before its start
        forget(id);
      }
    },
    signal(id, graceSeconds) {
      if (graceSeconds > DIRECT_SIGNAL_MAX_GRACE_SECONDS) return undefined;
      const k = known.get(id);
      if (!k) return undefined;
      const signal = firstStopSignal(graceSeconds, k.stopSignal);
      const e: DirectSignalEvent = { containerId: id, podUid: k.podUid, pid: k.pid, signal, atMs: now() };
      try {
        send(k.pidfd, signal);
      } catch {
        forget(id); // exited already (ESRCH): the runtime's stop finds it stopped
        return undefined;
      }
      try {
        opts.onSignal?.(e);
      } catch {}
      return e;
    },
    get size() {
      return known.size;
    },
    knownContainers(podUid) {
      const out: { containerId: string; pid: number; pidfd: number; stopSignal: number }[] = [];
      for (const [containerId, k] of known) if (k.podUid === podUid) out.push({ containerId, pid: k.pid, pidfd: k.pidfd, stopSignal: k.stopSignal });
      return out;
    },
    onKnown(fn) {
      knownListeners.add(fn);
      return () => void knownListeners.delete(fn);
    },
    close() {
      closed = true;
      knownListeners.clear();
      for (const id of [...known.keys()]) forget(id);
      seen.clear();
    },
  };
}
