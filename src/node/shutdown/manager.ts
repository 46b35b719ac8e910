// Graceful node shutdown (upstream pkg/kubelet/nodeshutdown, nodeshutdown_manager_linux.go): hold a
// logind "delay" inhibitor so systemd waits for us, and on PrepareForShutdown(true) kill the pods
// group by group (ascending priority, each group bounded by its grace period), then let go of the
// lock so the shutdown proceeds. PrepareForShutdown(false) — shutdown cancelled — takes the lock
// again. While shutting down the node is not Ready and admission refuses pods ("NodeShutdown").
// Everything it touches (logind, pods, kill, clock, events) is injected: the whole sequence runs in
// a unit test with a fake logind; src/node/shutdown/logind.ts is the real one.
import type { Clock } from "../../clock.ts";
import { nodeRef, reasons } from "../../events/index.ts";
import type { EventRecorder } from "../../events/types.ts";
import { flushLog, kv, log } from "../../log.ts";
import { podKey, type PodLike } from "../../pod/pod-like.ts";
import type { KillPodRequest } from "../../pod/lifecycle-types.ts";
import {
  groupByPriority,
  NODE_SHUTDOWN_MESSAGE,
  NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE,
  NODE_SHUTDOWN_NOT_ADMITTED_REASON,
  NODE_SHUTDOWN_REASON,
  NODE_SHUTTING_DOWN_ERROR,
  periodRequestedSeconds,
  podShutdownGracePeriodSeconds,
  type ShutdownGracePeriodByPodPriority,
} from "./priority-groups.ts";

/** A held logind inhibitor (upstream systemd.InhibitLock: an fd whose close releases it). */
export interface InhibitLock {
  release(): void;
}

/** What the manager needs of systemd-logind (upstream systemd.DBusCon); one connection. */
export interface Logind {
  /** InhibitDelayMaxUSec, in ms. */
  currentInhibitDelayMs(): Promise<number>;
  /** Writes the logind.conf.d drop-in raising InhibitDelayMaxSec. */
  overrideInhibitDelay(ms: number): Promise<void>;
  /** Makes logind re-read its configuration (SIGHUP through systemd). */
  reloadLogindConf(): Promise<void>;
  /** Manager.Inhibit("shutdown", "kubelet", …, "delay"). */
  inhibitShutdown(): Promise<InhibitLock>;
  /** Subscribes to PrepareForShutdown; `onEnd` when the connection is lost. */
  monitorShutdown(onEvent: (shuttingDown: boolean) => void, onEnd: (e: Error) => void): Promise<void>;
  close(): void;
}

export interface ShutdownManagerDeps {
  groups: readonly ShutdownGracePeriodByPodPriority[];
  /** A new logind connection (called again to reconnect after the bus went away). */
  logind: () => Logind;
  activePods: () => PodLike[];
  killPod: (pod: PodLike, gracePeriodOverrideSeconds: number, req: KillPodRequest) => Promise<void>;
  clock: Clock;
  nodeName: string;
  recorder?: EventRecorder;
  /** The shutting-down state changed: sync the node status now (upstream `go m.syncNodeStatus()`). */
  onStatusChange?: () => void;
  /** Told when a shutdown starts and ends (state file + gauges: state.ts). */
  record?: { start(nowMs: number): void; end(nowMs: number): void };
  /** Reconnect delay after the bus went away (upstream dbusReconnectPeriod, 1 s). */
  reconnectMs?: number;
  /** Polls of InhibitDelayMaxUSec after the reload, and their spacing (logind applies SIGHUP asynchronously). */
  reloadPolls?: number;
  reloadPollMs?: number;
}

export interface ShutdownManager {
  /** Takes the lock and watches; rejects when logind cannot be used (the kubelet goes on without). */
  start(): Promise<void>;
  stop(): void;
  /** The pod admit handler: no new pods while shutting down. */
  admit(pod: PodLike): { admit: boolean; reason?: string; message?: string };
  /** Upstream ShutdownStatus(): the Ready condition's error while shutting down. */
  shutdownStatus(): string | undefined;
  /** Resolves when the shutdown in progress (if any) finished killing pods and released the lock. */
  idle(): Promise<void>;
}

export function createShutdownManager(d: ShutdownManagerDeps): ShutdownManager {
  const periodMs = periodRequestedSeconds(d.groups) * 1000;
  let bus: Logind | undefined;
  let lock: InhibitLock | undefined;
  let shuttingDown = false;
  let stopped = false;
  let processing: Promise<void> = Promise.resolve();
  let reconnectTimer: ReturnType<Clock["setTimeout"]> | undefined;

  async function ensureInhibitDelay(b: Logind): Promise<void> {
    const current = await b.currentInhibitDelayMs();
    if (periodMs <= current) return;
    await b.overrideInhibitDelay(periodMs).catch((e: Error) => {
      throw new Error(`unable to override inhibit delay by shutdown manager: ${e.message}`);
    });
    await b.reloadLogindConf();
    let updated = current;
    const polls = d.reloadPolls ?? 20;
    for (let attempt = 1; attempt <= polls; attempt++) {
      updated = await b.currentInhibitDelayMs();
      if (periodMs <= updated) {
        log.info(`logind InhibitDelayMaxSec raised for graceful node shutdown ${kv({ from: `${current / 1000}s`, to: `${updated / 1000}s` })}`);
        return;
      }
      await new Promise<void>((r) => d.clock.setTimeout(r, d.reloadPollMs ?? 100));
    }
    throw new Error(
      `node shutdown manager was timed out after ${polls} attempts waiting for logind InhibitDelayMaxSec to update to ${periodMs / 1000}s (ShutdownGracePeriod), current value is ${updated / 1000}s`,
    );
  }

  async function acquireInhibitLock(b: Logind): Promise<void> {
    const next = await b.inhibitShutdown(); // the old lock (a previous connection's) goes after: no gap
    lock?.release();
    lock = next;
  }

  function releaseInhibitLock(): void {
    lock?.release();
    lock = undefined;
  }

  function onEvent(b: Logind, isShuttingDown: boolean): void {
    log.info(`Shutdown manager detected new shutdown event ${kv({ event: isShuttingDown ? "shutdown" : "cancelled" })}`);
    d.recorder?.event(
      nodeRef(d.nodeName),
      "Normal",
      reasons.NodeShutdown,
      isShuttingDown ? "Shutdown manager detected shutdown event" : "Shutdown manager detected shutdown cancellation",
    );
    shuttingDown = isShuttingDown;
    d.onStatusChange?.();
    if (isShuttingDown) processing = processing.then(() => processShutdownEvent());
    else
      processing = processing.then(() =>
        acquireInhibitLock(b).catch((e: Error) =>
          log.error(`Shutdown manager could not take the inhibitor lock again after the shutdown was cancelled ${kv({ error: e.message })}`),
        ),
      );
  }

  /** Kills the groups in order; each waits for its pods or its grace period, whichever comes first. */
  async function processShutdownEvent(): Promise<void> {
    log.info("Shutdown manager processing shutdown event");
    d.record?.start(d.clock.now());
    try {
      for (const group of groupByPriority(d.groups, d.activePods())) {
        if (group.pods.length === 0) continue;
        const killed = group.pods.map(async (pod) => {
          const grace = podShutdownGracePeriodSeconds(group, pod);
          log.info(`Shutdown manager killing pod with gracePeriod ${kv({ pod: podKey(pod), gracePeriod: grace, priority: pod.spec.priority ?? 0 })}`);
          try {
            await d.killPod(pod, grace, { reason: NODE_SHUTDOWN_REASON, message: NODE_SHUTDOWN_MESSAGE });
            log.info(`Shutdown manager finished killing pod ${kv({ pod: podKey(pod) })}`);
          } catch (e) {
            log.warn(`Shutdown manager failed killing pod ${kv({ pod: podKey(pod), error: (e as Error).message })}`);
          }
        });
        let timer: ReturnType<Clock["setTimeout"]> | undefined;
        const timedOut = new Promise<"timeout">((r) => (timer = d.clock.setTimeout(() => r("timeout"), group.shutdownGracePeriodSeconds * 1000)));
        const outcome = await Promise.race([Promise.all(killed), timedOut]);
        if (timer) d.clock.clearTimeout(timer);
        if (outcome === "timeout")
          log.info(`Shutdown manager pod killing time out ${kv({ gracePeriod: group.shutdownGracePeriodSeconds, priority: group.priority })}`);
      }
    } finally {
      d.record?.end(d.clock.now());
      // Logged and written before the lock goes: once it is released, the node stops this process.
      log.info("Shutdown manager completed processing shutdown event, node will shutdown shortly");
      flushLog();
      releaseInhibitLock();
    }
  }

  function reconnectLater(): void {
    if (stopped) return;
    reconnectTimer = d.clock.setTimeout(() => {
      reconnectTimer = undefined;
      if (stopped) return;
      log.info("Restarting watch for node shutdown events");
      connect().catch((e: Error) => {
        log.error(`Unable to watch the node for shutdown events ${kv({ error: e.message })}`);
        reconnectLater();
      });
    }, d.reconnectMs ?? 1000);
  }

  async function connect(): Promise<void> {
    const b = d.logind();
    try {
      await ensureInhibitDelay(b);
      await acquireInhibitLock(b);
      await b.monitorShutdown(
        (s) => onEvent(b, s),
        (e) => {
          if (bus !== b || stopped) return;
          log.error(`Ended to watching the node for shutdown events ${kv({ error: e.message })}`);
          bus = undefined;
          b.close();
          reconnectLater();
        },
      );
    } catch (e) {
      releaseInhibitLock();
      b.close();
      throw e;
    }
    if (stopped) return void (releaseInhibitLock(), b.close());
    bus = b;
  }

  return {
    async start() {
      if (d.groups.length === 0) return;
      log.info(
        `Creating node shutdown manager ${kv({ shutdownGracePeriodRequested: `${periodMs / 1000}s`, groups: d.groups.map((g) => `${g.priority}:${g.shutdownGracePeriodSeconds}s`).join(",") })}`,
      );
      await connect();
    },
    stop() {
      stopped = true;
      if (reconnectTimer) d.clock.clearTimeout(reconnectTimer);
      releaseInhibitLock();
      bus?.close();
      bus = undefined;
    },
    admit() {
      if (!shuttingDown) return { admit: true };
      return { admit: false, reason: NODE_SHUTDOWN_NOT_ADMITTED_REASON, message: NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE };
    },
    shutdownStatus: () => (shuttingDown ? NODE_SHUTTING_DOWN_ERROR : undefined),
    idle: () => processing,
  };
}
