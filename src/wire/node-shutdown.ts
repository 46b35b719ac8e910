// Graceful node shutdown wired into the agent (upstream: NewMainKubelet builds the shutdown manager,
// adds it as a pod admit handler, feeds ShutdownStatus into the Ready condition; Kubelet.Run starts
// it and only logs a failure — the kubelet runs on without it).
import type { Clock } from "../clock.ts";
import type { KubeletConfiguration } from "../config/kubelet-config.ts";
import type { EventRecorder } from "../events/types.ts";
import { kv, log } from "../log.ts";
import { createLogindDBus, createShutdownManager, shutdownGroupsFromConfig, type Logind, type ShutdownManager } from "../node/shutdown/index.ts";
import type { PodLifecycle } from "../pod/lifecycle-types.ts";
import type { Registry } from "../server/metrics.ts";
import { createShutdownRecorder } from "../node/shutdown/state.ts";

export interface NodeShutdownWiring {
  name: string;
  manager: ShutdownManager;
  start(): void;
  stop(): void;
}

export function createNodeShutdownWiring(input: {
  config: Pick<KubeletConfiguration, "shutdownGracePeriod" | "shutdownGracePeriodCriticalPods" | "shutdownGracePeriodByPodPriority">;
  nodeName: string;
  lifecycle: Pick<PodLifecycle, "activePods" | "killPod" | "addAdmitHandler">;
  clock: Clock;
  events?: EventRecorder;
  /** Sync the node status now (API-server mode). */
  onStatusChange?: () => void;
  logind?: () => Logind;
  /** Where graceful_node_shutdown_state lives (--root-dir), and the /metrics registry for its gauges. */
  rootDir?: string;
  metrics?: Registry;
}): NodeShutdownWiring {
  const groups = shutdownGroupsFromConfig(input.config);
  const manager = createShutdownManager({
    groups,
    logind: input.logind ?? (() => createLogindDBus()),
    activePods: () => input.lifecycle.activePods(),
    killPod: (pod, grace, req) => input.lifecycle.killPod(pod, grace, req),
    clock: input.clock,
    nodeName: input.nodeName,
    recorder: input.events,
    onStatusChange: input.onStatusChange,
    record: input.rootDir !== undefined && groups.length > 0 ? createShutdownRecorder(input.rootDir, input.metrics) : undefined,
  });
  input.lifecycle.addAdmitHandler((pod) => manager.admit(pod));
  return {
    name: "node shutdown manager",
    manager,
    start() {
      manager.start().catch((e: Error) => log.error(`Failed to start node shutdown manager ${kv({ error: e.message })}`));
    },
    stop: () => manager.stop(),
  };
}
