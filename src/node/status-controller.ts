// Registration and node status (upstream Kubelet.syncNodeStatus, registerWithAPIServer,
// updateNodeStatus/tryUpdateNodeStatus, fastStatusUpdateOnce):
//   start → register (create; AlreadyExists → get + reconcile labels/annotation), retried 100 ms → 7 s
//   every nodeStatusUpdateFrequency: the Node (first try from the node's own watch, else the API's cache,
//   resourceVersion=0; retries from the API) → setters
//   → PATCH nodes/<name>/status (strategic merge) only if the status changed or
//   nodeStatusReportFrequency passed since the last report; 5 tries per sync.
//   Until the node first reports Ready it syncs every 100 ms, so start → Ready is not 10 s.
//   The Node gone (404) → registered again at once (the API server lost it or someone deleted it).
//   After each update the Node's volumesInUse goes to markVolumesFromNode; syncSoon() asks for an update
//   now rather than at the end of the period (the volumes in use changed).
import { z } from "zod";
import type { Clock, TimerHandle } from "../clock.ts";
import { isAlreadyExists, isNotFound, nodeSchema, type KubeClient, type Node } from "../kube/index.ts";
import { kv, log } from "../log.ts";
import { backoff } from "../kube/backoff.ts";
import { nodeConditionEvents, nodeStatusEventMessage, rebootedMessage } from "./condition-events.ts";
import { nodeRef, type EventRecorder } from "../events/types.ts";
import type { NodeCondition } from "../kube/types.ts";
import { initialNode, reconcileExisting, type NodeRegistration } from "./node-object.ts";
import { buildNodeStatus, nodeStatusHasChanged, type NodeStatusInput } from "./node-status.ts";

export interface NodeStatusControllerDeps {
  client: KubeClient;
  clock: Clock;
  registration: NodeRegistration;
  registerNode: boolean;
  /** Everything the setters need, gathered fresh for each sync. */
  gather(): Promise<NodeStatusInput>;
  updateFrequencyMs: number;
  reportFrequencyMs: number;
  /** Fast sync interval until the first Ready report (upstream 100 ms). */
  fastUpdateMs?: number;
  /** Node condition events ("Node n1 status is now: NodeReady"). */
  events?: EventRecorder;
  /** Told of the first registration attempt, the registration and the first Ready (kubelet_node_startup_*). */
  startup?: NodeStartupObserver;
  /**
   * The Node as a watch of its own has it (upstream's nodeLister): each sync's first try reads it instead
   * of the API; undefined until the watch has listed it, then the first try asks the API's cache.
   */
  nodeLister?: () => Node | undefined;
  /**
   * upstream markVolumesFromNode: the volumesInUse of the Node once an update succeeded (the PATCH's
   * answer, or the Node as read when nothing needed writing) — the volumes reported in use.
   */
  markVolumesFromNode?: (volumesInUse: readonly string[]) => void;
}

/** Upstream's NodeStartupLatencyTracker, as the status loop reports to it. */
export interface NodeStartupObserver {
  attemptRegisterNode(): void;
  registeredNode(): void;
  nodeReady(): void;
}

export interface NodeStatusController {
  start(): void;
  stop(): void;
  /** One sync now (tests, and the agent after the runtime came up). */
  sync(): Promise<void>;
  /** The loop's next sync at once (after the one running, if any), not at the end of the period. */
  syncSoon(): void;
  /** The Node as the watch of its own has it now (upstream's nodeLister), else as last returned by the API server. */
  node(): Node | undefined;
  registered(): boolean;
  /** The error of the last sync that failed all its tries; undefined once a sync succeeds. */
  lastError(): string | undefined;
}

const NODE_STATUS_UPDATE_RETRY = 5;

const volumesInUseSchema = z.array(z.string()).nullish().catch(undefined);
/** The Node's status.volumesInUse (unique volume names); none when absent or not a list of names. */
const volumesInUseOf = (node: Node): string[] => volumesInUseSchema.parse(node.status?.volumesInUse) ?? [];

export function createNodeStatusController(d: NodeStatusControllerDeps): NodeStatusController {
  const name = d.registration.nodeName;
  const path = `/api/v1/nodes/${encodeURIComponent(name)}`;
  let registered = false;
  let lastReportMs = -Infinity;
  let lastNode: Node | undefined;
  let reportedReady = false;
  // fastStatusUpdateOnce: sync every 100 ms until the first Ready report, unless the API fails.
  let fastPhase = true;
  let lastError: string | undefined;
  let started = false;
  let stopped = false;
  let timer: TimerHandle | undefined;
  const regBackoff = backoff(100, 7000);
  let lastUnschedulable = false;
  const conditionEvents = (before: readonly NodeCondition[] | undefined, after: readonly NodeCondition[]) => {
    for (const reason of nodeConditionEvents(before, after)) d.events?.event(nodeRef(name), "Normal", reason, nodeStatusEventMessage(name, reason));
  };

  async function tryRegister(): Promise<boolean> {
    const input = await d.gather();
    const node = initialNode(d.registration, buildNodeStatus(input));
    log.info(`Attempting to register node ${kv({ node: name })}`);
    try {
      lastNode = await d.client.request({ method: "POST", path: "/api/v1/nodes", body: node, schema: nodeSchema });
      log.info(`Successfully registered node ${kv({ node: name })}`);
      conditionEvents(undefined, node.status?.conditions ?? []);
      return true;
    } catch (e) {
      if (!isAlreadyExists(e)) {
        log.error(`Unable to register node with API server ${kv({ node: name, error: (e as Error).message })}`);
        return false;
      }
    }
    const existing = await d.client.request({ path, schema: nodeSchema });
    log.info(`Node was previously registered ${kv({ node: name })}`);
    const patch = reconcileExisting(d.registration, existing);
    lastNode = patch
      ? await d.client.request({ method: "PATCH", path: `${path}/status`, body: patch, contentType: "application/merge-patch+json", schema: nodeSchema })
      : existing;
    return true;
  }

  async function register(): Promise<void> {
    while (!stopped && !registered) {
      try {
        d.startup?.attemptRegisterNode();
        registered = await tryRegister();
        if (registered) d.startup?.registeredNode();
      } catch (e) {
        log.error(`Unable to register node with API server ${kv({ node: name, error: (e as Error).message })}`);
      }
      if (registered) return regBackoff.reset();
      const wait = regBackoff.next();
      await new Promise<void>((r) => d.clock.setTimeout(r, wait));
    }
  }

  async function tryUpdate(attempt: number): Promise<void> {
    const listed = attempt === 0 ? d.nodeLister?.() : undefined;
    const node = listed ?? (await d.client.request({ path, query: attempt === 0 ? { resourceVersion: "0" } : undefined, schema: nodeSchema }));
    lastNode = node; // labels, taints, deletion as the API server has them now (admission, mirror pods)
    const input = await d.gather();
    const status = buildNodeStatus(input, node.status ?? undefined);
    const rebooted = rebootedMessage(name, (node.status?.nodeInfo as { bootID?: string } | undefined)?.bootID, status.nodeInfo.bootID);
    if (rebooted) d.events?.event(nodeRef(name), "Warning", "Rebooted", rebooted);
    // recordNodeSchedulableEvent: kubectl cordon / uncordon, as the kubelet sees spec.unschedulable.
    const unschedulable = !!node.spec?.unschedulable;
    if (unschedulable !== lastUnschedulable) {
      const reason = unschedulable ? "NodeNotSchedulable" : "NodeSchedulable";
      d.events?.event(nodeRef(name), "Normal", reason, nodeStatusEventMessage(name, reason));
      lastUnschedulable = unschedulable;
    }
    if (input.nowMs < lastReportMs + d.reportFrequencyMs && !nodeStatusHasChanged(node.status, status)) {
      d.markVolumesFromNode?.(volumesInUseOf(node));
      return;
    }
    const body = { status: { ...status, "$setElementOrder/conditions": status.conditions.map((c) => ({ type: c.type })) } };
    lastNode = await d.client.request({
      method: "PATCH",
      path: `${path}/status`,
      body,
      contentType: "application/strategic-merge-patch+json",
      schema: nodeSchema,
    });
    lastReportMs = input.nowMs;
    d.markVolumesFromNode?.(volumesInUseOf(lastNode));
    conditionEvents(node.status?.conditions ?? [], status.conditions);
    const ready = status.conditions.find((c) => c.type === "Ready")?.status === "True";
    if (ready !== reportedReady)
      log.info(`Node status reported ${kv({ node: name, ready, reason: status.conditions.find((c) => c.type === "Ready")?.reason })}`);
    reportedReady = ready;
    if (ready) {
      fastPhase = false;
      d.startup?.nodeReady();
    }
  }

  async function updateNodeStatus(): Promise<void> {
    let last: unknown;
    for (let i = 0; i < NODE_STATUS_UPDATE_RETRY && !stopped; i++) {
      try {
        await tryUpdate(i);
        lastError = undefined;
        return;
      } catch (e) {
        last = e;
        if (isNotFound(e) && d.registerNode) {
          log.warn(`Node not found on the API server, registering it again ${kv({ node: name })}`);
          registered = false;
          return;
        }
      }
    }
    if (last) {
      fastPhase = false;
      lastError = (last as Error).message;
      log.error(`Unable to update node status ${kv({ node: name, error: (last as Error).message })}`);
    }
  }

  async function sync(): Promise<void> {
    if (d.registerNode && !registered) await register();
    if (stopped || (d.registerNode && !registered)) return;
    await updateNodeStatus();
    if (d.registerNode && !registered && !stopped) {
      await register();
      await updateNodeStatus();
    }
  }

  // syncSoon: a sync is running (the next one follows it at once), or asked for while one ran.
  let syncing = false;
  let soon = false;
  function loopSync(): void {
    syncing = true;
    void sync()
      .catch((e) => log.error(`node status sync failed ${kv({ error: (e as Error).message })}`))
      .finally(() => {
        syncing = false;
        schedule();
      });
  }

  function schedule(): void {
    if (stopped) return;
    const ms = soon ? 0 : fastPhase ? (d.fastUpdateMs ?? 100) : d.updateFrequencyMs;
    soon = false;
    timer = d.clock.setTimeout(loopSync, ms);
  }

  return {
    start() {
      if (started || stopped) return;
      started = true;
      loopSync();
    },
    syncSoon() {
      if (!started || stopped || soon) return;
      soon = true;
      if (syncing) return;
      if (timer) d.clock.clearTimeout(timer);
      schedule();
    },
    stop() {
      stopped = true;
      if (timer) d.clock.clearTimeout(timer);
    },
    sync: () => sync(),
    node: () => d.nodeLister?.() ?? lastNode,
    registered: () => registered,
    lastError: () => lastError,
  };
}
