// Why the node is not Ready, as upstream's runtimeState and Ready setter word it: the runtime
// never answered / is down / says RuntimeReady=false, and the network's NetworkReady=false.
// Upstream pkg/kubelet/runtime.go: the sync loop (lifecycle.ts) gates on it and node/ reports it.
import type { CriClient } from "../cri/client.ts";
import { formatDuration } from "../config/duration.ts";
import type { RuntimeCondition, RuntimeHandler } from "../cri/types.ts";

export interface RuntimeReadiness {
  /** "containerd://1.6.20~ds1", once Version answered. */
  version?: string;
  errors: string[];
  /** The runtime handlers the Status listed (none from runtimes older than CRI v1.30); undefined when it did not answer. */
  handlers?: RuntimeHandler[];
}

/** The %v of a CRI RuntimeCondition as the kubelet prints it. */
const describe = (c: RuntimeCondition | undefined) => (c ? `${c.type}=${c.status} reason:${c.reason} message:${c.message}` : "<nil>");

export function readinessErrors(conditions: RuntimeCondition[] | undefined): string[] {
  const errs: string[] = [];
  const runtime = conditions?.find((c) => c.type === "RuntimeReady");
  if (!runtime?.status) errs.push(`container runtime not ready: ${describe(runtime)}`);
  const network = conditions?.find((c) => c.type === "NetworkReady");
  if (!network?.status) errs.push(`container runtime network not ready: ${describe(network)}`);
  return errs;
}

/** Asks the runtime now; a failing call is "container runtime is down". */
export async function runtimeReadiness(cri: CriClient): Promise<RuntimeReadiness> {
  try {
    const [v, s] = await Promise.all([cri.version(), cri.status(false)]);
    return { version: `${v.runtimeName}://${v.runtimeVersion}`, errors: readinessErrors(s.status?.conditions), handlers: s.runtimeHandlers ?? [] };
  } catch {
    return { errors: ["container runtime is down"] };
  }
}

/** Upstream runtimeState's error while the runtime has never answered. */
export const RUNTIME_NOT_CHECKED = "container runtime status check may not have completed yet";

/** Upstream maxWaitForContainerRuntime: the runtime is "down" once it has not answered for this long. */
export const MAX_WAIT_FOR_CONTAINER_RUNTIME_MS = 30_000;
/** Upstream pleg relistThreshold: PLEG is unhealthy when no relist completed for this long. */
export const RELIST_THRESHOLD_MS = 180_000;

const goDuration = (ms: number) => formatDuration(Math.round(ms) * 1e6);

/**
 * Upstream runtimeState.runtimeErrors, from what the caller last saw: `lastSeenMs` is the end of the
 * last successful runtime call (a PLEG relist), undefined if it never answered; `sinceMs` is when
 * waiting began (agent start). undefined while within the grace.
 */
export function runtimeDownError(o: { nowMs: number; lastSeenMs?: number; sinceMs: number; thresholdMs?: number }): string | undefined {
  const threshold = o.thresholdMs ?? MAX_WAIT_FOR_CONTAINER_RUNTIME_MS;
  const ref = o.lastSeenMs ?? o.sinceMs;
  const age = o.nowMs - ref;
  if (age <= threshold) return undefined;
  return o.lastSeenMs === undefined
    ? `${RUNTIME_NOT_CHECKED}: no answer in ${goDuration(age)}; threshold is ${goDuration(threshold)}`
    : `container runtime is down: last seen active ${goDuration(age)} ago; threshold is ${goDuration(threshold)}`;
}

/** Upstream GenericPLEG.Healthy's error. */
export function plegUnhealthyError(o: { nowMs: number; lastRelistMs?: number; thresholdMs?: number }): string | undefined {
  const threshold = o.thresholdMs ?? RELIST_THRESHOLD_MS;
  if (o.lastRelistMs === undefined) return undefined; // upstream: not yet relisted is healthy
  const age = o.nowMs - o.lastRelistMs;
  return age > threshold ? `PLEG is not healthy: pleg was last seen active ${goDuration(age)} ago; threshold is ${goDuration(threshold)}` : undefined;
}

/** Upstream SyncLoopHealthCheck: the loop must enter at least every max(2 × syncFrequency, 5 min). */
export function syncLoopError(o: { nowMs: number; lastEntryMs?: number; syncFrequencyMs: number }): string | undefined {
  const limit = Math.max(2 * o.syncFrequencyMs, 5 * 60_000);
  if (o.lastEntryMs === undefined) return undefined;
  return o.nowMs - o.lastEntryMs > limit ? `sync Loop took longer than ${goDuration(limit)} to finish` : undefined;
}
