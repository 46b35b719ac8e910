// The node lease heartbeat (upstream pkg/kubelet/nodelease + component-helpers' lease controller):
// Lease kube-node-lease/<node> with holderIdentity = node name, leaseDurationSeconds =
// nodeLeaseDurationSeconds, renewTime (MicroTime) renewed every 25 % of the duration, owned by the
// Node (ownerReference added once the Node's uid is known). Missing → created; a failed renewal
// is retried (5 tries, a conflict re-reads the lease); failing to get/create backs off 200 ms → 7 s.
import type { Clock, TimerHandle } from "../clock.ts";
import { isNotFound, leaseSchema, microTime, type KubeClient, type Lease } from "../kube/index.ts";
import { kv, log } from "../log.ts";
import { backoff } from "../kube/backoff.ts";

export const NODE_LEASE_NAMESPACE = "kube-node-lease";
/** Upstream: renewIntervalFraction = 0.25 of the lease duration. */
export const RENEW_INTERVAL_FRACTION = 0.25;
const MAX_UPDATE_RETRIES = 5;

export interface LeaseControllerDeps {
  client: KubeClient;
  clock: Clock;
  nodeName: string;
  leaseDurationSeconds: number;
  /** The registered Node's uid, once known (for the owner reference). */
  nodeUid(): string | undefined;
}

export interface LeaseController {
  start(): void;
  stop(): void;
  sync(): Promise<boolean>;
  lease(): Lease | undefined;
  readonly renewIntervalMs: number;
}

export function createLeaseController(d: LeaseControllerDeps): LeaseController {
  const path = `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`;
  const itemPath = `${path}/${encodeURIComponent(d.nodeName)}`;
  const renewIntervalMs = d.leaseDurationSeconds * 1000 * RENEW_INTERVAL_FRACTION;
  const failBackoff = backoff(200, 7000);
  let latest: Lease | undefined;
  let started = false;
  let stopped = false;
  let timer: TimerHandle | undefined;
  let failing = false;

  function desired(base: Lease | undefined): Lease {
    const uid = d.nodeUid();
    const owner = uid ? [{ apiVersion: "v1", kind: "Node", name: d.nodeName, uid }] : undefined;
    const meta = base?.metadata ?? { name: d.nodeName, namespace: NODE_LEASE_NAMESPACE };
    const hasOwner = (meta.ownerReferences ?? []).some((o) => o.kind === "Node" && o.uid === uid);
    return {
      ...(base ?? { apiVersion: "coordination.k8s.io/v1", kind: "Lease" }),
      metadata: { ...meta, ...(owner && !hasOwner ? { ownerReferences: owner } : {}) },
      spec: { ...(base?.spec ?? {}), holderIdentity: d.nodeName, leaseDurationSeconds: d.leaseDurationSeconds, renewTime: microTime(d.clock.now()) },
    };
  }

  async function ensure(): Promise<Lease> {
    try {
      return await d.client.request({ path: itemPath, schema: leaseSchema });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    const created = await d.client.request({ method: "POST", path, body: desired(undefined), schema: leaseSchema });
    log.info(`Created node lease ${kv({ lease: `${NODE_LEASE_NAMESPACE}/${d.nodeName}` })}`);
    return created;
  }

  async function sync(): Promise<boolean> {
    let lastErr: unknown;
    for (let i = 0; i < MAX_UPDATE_RETRIES && !stopped; i++) {
      try {
        latest ??= await ensure();
        latest = await d.client.request({ method: "PUT", path: itemPath, body: desired(latest), schema: leaseSchema });
        if (failing) log.info(`Node lease renewed again ${kv({ lease: `${NODE_LEASE_NAMESPACE}/${d.nodeName}` })}`);
        failing = false;
        failBackoff.reset();
        return true;
      } catch (e) {
        lastErr = e;
        latest = undefined; // re-read: a conflict or a lost lease
      }
    }
    log.error(`Failed to update lease ${kv({ lease: `${NODE_LEASE_NAMESPACE}/${d.nodeName}`, error: (lastErr as Error)?.message })}`);
    failing = true;
    return false;
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = d.clock.setTimeout(() => {
      void sync().then((ok) => schedule(ok ? renewIntervalMs : failBackoff.next()));
    }, delayMs);
  }

  return {
    renewIntervalMs,
    start() {
      if (started || stopped) return;
      started = true;
      schedule(0);
    },
    stop() {
      stopped = true;
      if (timer) d.clock.clearTimeout(timer);
    },
    sync: () => sync(),
    lease: () => latest,
  };
}
