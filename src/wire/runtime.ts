// The container runtime side of the agent: one CRI client (containerRuntimeEndpoint, with
// imageServiceEndpoint falling back to it), observed so the eviction trace sees the victim's stop
// signal, and a background wait for the runtime: a node agent must come up (HTTP, config endpoints,
// eviction of nothing) even while containerd is down, and start pods once it answers.
import { durationMs } from "../config/duration.ts";
import { createCriClient, overrideClient, type CriClient } from "../cri/client.ts";
import { POD_UID_LABEL } from "../pod/kuberuntime/labels.ts";
import { kv, log } from "../log.ts";

/** A StopContainer RPC for a pod's container: "sent" just before the call, "done" once it returned. */
export interface StopContainerEvent {
  containerId: string;
  podUid?: string;
  phase: "sent" | "done";
  atMs: number;
  error?: string;
}

/**
 * Wraps a CRI client: remembers container → pod UID from every listing (kuberuntime lists a pod's
 * containers right before stopping them) and reports each StopContainer. No extra RPCs.
 */
export function observeStopContainer(cri: CriClient, onStop: (e: StopContainerEvent) => void, nowMs: () => number = Date.now): CriClient {
  const podOf = new Map<string, string>();
  const emit = (e: StopContainerEvent) => {
    try {
      onStop(e);
    } catch (err) {
      log.warn(`stop-container observer failed ${kv({ error: (err as Error).message })}`);
    }
  };
  // Not a spread: the instrumented client inherits close and endpoint (see overrideClient).
  return overrideClient(cri, {
    async listContainers(filter: Parameters<CriClient["listContainers"]>[0]) {
      const list = await cri.listContainers(filter);
      // Bounded: a long-running node sees many containers; the map only needs the live ones.
      if (podOf.size > 4096) podOf.clear();
      for (const c of list) {
        const uid = c.labels?.[POD_UID_LABEL];
        if (uid) podOf.set(c.id, uid);
      }
      return list;
    },
    async stopContainer(id: string, timeoutSeconds: number) {
      const podUid = podOf.get(id);
      emit({ containerId: id, podUid, phase: "sent", atMs: nowMs() });
      try {
        await cri.stopContainer(id, timeoutSeconds);
        emit({ containerId: id, podUid, phase: "done", atMs: nowMs() });
      } catch (e) {
        emit({ containerId: id, podUid, phase: "done", atMs: nowMs(), error: (e as Error).message });
        throw e;
      }
    },
  });
}

export function criClientFromConfig(
  config: { containerRuntimeEndpoint: string; imageServiceEndpoint?: string; runtimeRequestTimeout?: string },
  opts: { retryBudgetMs?: number } = {},
): CriClient {
  let timeoutMs: number | undefined;
  try {
    timeoutMs = config.runtimeRequestTimeout ? durationMs(config.runtimeRequestTimeout) : undefined;
  } catch {
    timeoutMs = undefined;
  }
  return createCriClient({
    endpoint: config.containerRuntimeEndpoint,
    imageEndpoint: config.imageServiceEndpoint || config.containerRuntimeEndpoint,
    timeoutMs,
    retryBudgetMs: opts.retryBudgetMs,
  });
}

export interface RuntimeWaitOpts {
  /** Delay between attempts (default 2 s). */
  retryMs?: number;
  signal: AbortSignal;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const abortableSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

/**
 * Resolves true once the runtime answers Version, false if aborted first. The first failure is one
 * clear warning (endpoint and error), then one reminder a minute; never throws.
 */
export async function waitForRuntime(cri: CriClient, opts: RuntimeWaitOpts): Promise<boolean> {
  const retryMs = opts.retryMs ?? 2000;
  const sleep = opts.sleep ?? abortableSleep;
  const startedMs = Date.now();
  let lastLogMs = 0;
  for (let attempt = 0; ; attempt++) {
    if (opts.signal.aborted) return false;
    try {
      const v = await cri.version();
      if (opts.signal.aborted) return false;
      log.info(
        `Container runtime ready ${kv({ endpoint: cri.endpoint, runtime: v.runtimeName, version: v.runtimeVersion, apiVersion: v.runtimeApiVersion, waitedMs: attempt > 0 ? Date.now() - startedMs : undefined })}`,
      );
      return true;
    } catch (e) {
      if (opts.signal.aborted) return false;
      const now = Date.now();
      if (attempt === 0 || now - lastLogMs >= 60_000) {
        lastLogMs = now;
        log.warn(
          `Container runtime is not reachable; pods start once it answers (retrying every ${retryMs / 1000}s) ${kv({ endpoint: cri.endpoint, error: (e as Error).message, waitingFor: attempt > 0 ? `${Math.round((now - startedMs) / 1000)}s` : undefined })}`,
        );
      }
    }
    await sleep(retryMs, opts.signal);
  }
}
