// A rehearsal of the eviction decision: synchronize() run on synthetic memory pressure with a no-op
// kill, a silent logger and a state of its own, so the code a real eviction runs is compiled before
// the first kernel event needs it. Why: JavaScriptCore compiles a function the first time it is
// called, and the eviction branch of a cycle (thresholds met, conditions, ranking, the message,
// the kill) runs for the first time on the node's first pressure — the reaction benchmark's first
// eviction took 14.7 ms from the kernel event to the decision, the following ones 1.6–3.7 ms.
// Nothing here touches the node: no pod, no stats source, no clock but a fixed one.
import type { Clock } from "../clock.ts";
import type { PodLike } from "../pod/pod-like.ts";
import { SYSTEM_CONTAINER_PODS, type Summary } from "../stats/summary.ts";
import { newEvictionState, synchronize } from "./synchronize.ts";
import type { EvictionConfig, EvictionDeps, Logger } from "./types.ts";

const GI = 1024 ** 3;
const T0 = Date.UTC(2000, 0, 1);

const silent: Logger = { info() {}, warn() {}, error() {}, debug() {} };

const fixedClock: Clock = {
  now: () => T0,
  setTimeout: () => ({ id: undefined }),
  clearTimeout() {},
};

function rehearsalPod(name: string, requestMemory?: string): PodLike {
  return {
    metadata: { name, namespace: "bunlet-rehearsal", uid: `rehearsal-${name}` },
    spec: { containers: [{ name: "main", resources: requestMemory ? { requests: { memory: requestMemory } } : {} }], terminationGracePeriodSeconds: 30 },
  };
}

const PODS = [rehearsalPod("besteffort"), rehearsalPod("burstable", "64Mi")];

/** Memory exhausted on the node and in "pods": every memory threshold is met. */
function pressureSummary(): Summary {
  const time = new Date(T0).toISOString();
  const full = { time, usageBytes: GI, workingSetBytes: GI, availableBytes: 0 };
  return {
    node: { nodeName: "rehearsal", memory: full, systemContainers: [{ name: SYSTEM_CONTAINER_PODS, memory: full }] },
    pods: PODS.map((p, i) => ({
      podRef: { name: p.metadata.name, namespace: p.metadata.namespace!, uid: p.metadata.uid! },
      memory: { time, usageBytes: (i + 1) * 256 * 1024 ** 2, workingSetBytes: (i + 1) * 256 * 1024 ** 2 },
      containers: [{ name: "main", memory: { time, workingSetBytes: (i + 1) * 256 * 1024 ** 2 } }],
    })),
  };
}

/**
 * Runs `times` memory-only cycles over synthetic pressure; returns how many ended in a (no-op)
 * eviction — 0 when the configuration has no memory threshold, whose cycles then never rank anyone.
 */
export async function rehearseEviction(config: EvictionConfig, times = 3): Promise<number> {
  const summary = pressureSummary();
  const deps: EvictionDeps = {
    config,
    clock: fixedClock,
    nodeName: "rehearsal",
    summary: async () => summary,
    activePods: () => PODS,
    killPod: async () => {},
    podCleanedUp: () => true,
    logger: silent,
  };
  let evicted = 0;
  for (let i = 0; i < times; i++) {
    const report = await synchronize(deps, newEvictionState(config.thresholds), { memoryOnly: true });
    if (report.evicted.length > 0) evicted++;
  }
  return evicted;
}
