// Starting without the API server (node autonomy): when the first list of the node's pods fails, or
// has not answered within `afterMs`, the pods of the autonomy cache are handed to the pod config as
// source "api" (an ADD, so orphan cleanup still waits for a real list); once the API server lists the
// pods, its SET replaces them — the decision per pod (reconcile.ts) is logged, the config mux carries
// it out: unchanged pods are adopted, changed ones updated, deleted ones stopped within their grace.
import { join } from "node:path";
import type { Clock, TimerHandle } from "../../clock.ts";
import { kv, log } from "../../log.ts";
import { isMirrorPod, podKey } from "../pod-like.ts";
import { decodeApiPod } from "../sources/api.ts";
import type { Pod } from "../types.ts";
import { cacheFileName } from "./cache-entry.ts";
import { reconcileWithApi } from "./reconcile.ts";
import type { AutonomyStore } from "./store.ts";

export interface OfflineStartOptions {
  store: AutonomyStore;
  clock: Clock;
  /** Runs the cached pods (the pod config's ADD for source "api"). */
  deliver: (pods: Pod[]) => void;
  /** How long the first list may take before the cached pods run (default 10 s). */
  afterMs?: number;
}

export interface OfflineStart {
  start(): void;
  /** The first list failed: the API server is unreachable. */
  unreachable(reason: string): void;
  /** The API server listed the node's pods. */
  listed(pods: readonly Pod[]): void;
  /** The pods run from the cache (until the API server listed them). */
  running(): readonly Pod[];
  stop(): void;
}

/** The Node as kept: what admission reads, without the status that changes at every heartbeat. */
export function nodeForCache(n: { metadata: { name: string; uid?: string; labels?: unknown }; spec?: { taints?: unknown } | null; status?: unknown }): unknown {
  const status = (n.status ?? {}) as { allocatable?: unknown; capacity?: unknown };
  return {
    metadata: { name: n.metadata.name, uid: n.metadata.uid, labels: n.metadata.labels },
    spec: { taints: n.spec?.taints },
    status: { allocatable: status.allocatable, capacity: status.capacity },
  };
}

/** The cached pods as the API source decodes them; a file whose pod no longer decodes is logged (file and reason) and skipped. */
function cachedPods(store: AutonomyStore): Pod[] {
  const out: Pod[] = [];
  for (const raw of store.pods()) {
    const { pod, errors } = decodeApiPod(raw);
    const m = (raw as { metadata: { namespace: string; name: string; uid: string } }).metadata;
    if (!pod)
      log.error(
        `autonomy cache: a stored pod does not decode; skipping it ${kv({ file: join(store.dir, cacheFileName("Pod", { uid: m.uid })), pod: `${m.namespace}/${m.name}`, error: errors.map((e) => e.message).join("; ") })}`,
      );
    else if (!isMirrorPod(pod)) out.push(pod);
  }
  return out;
}

export function createOfflineStart(opts: OfflineStartOptions): OfflineStart {
  let timer: TimerHandle | undefined;
  let done = false;
  let running: Pod[] = [];
  const cancel = () => {
    if (timer) opts.clock.clearTimeout(timer);
    timer = undefined;
  };
  return {
    start() {
      timer = opts.clock.setTimeout(() => this.unreachable(`no answer within ${(opts.afterMs ?? 10_000) / 1000}s`), opts.afterMs ?? 10_000);
    },
    unreachable(reason) {
      if (done) return;
      done = true;
      cancel();
      running = cachedPods(opts.store);
      log.warn(`API server unreachable; running the pods of the autonomy cache until it answers ${kv({ pods: running.length, dir: opts.store.dir, reason })}`);
      for (const p of running) log.info(`running pod from the autonomy cache ${kv({ pod: podKey(p), uid: p.metadata.uid })}`);
      if (running.length) opts.deliver(running);
    },
    listed(pods) {
      done = true;
      cancel();
      if (!running.length) return;
      for (const r of reconcileWithApi(running, pods))
        log.info(
          `API server answered; reconciling a pod run from the autonomy cache ${kv({ pod: podKey(r.pod), uid: r.uid, decision: r.decision, reason: r.reason })}`,
        );
      running = [];
    },
    running: () => running,
    stop() {
      done = true;
      cancel();
    },
  };
}
