// Graceful node shutdown wired into the agent (upstream: NewMainKubelet builds the shutdown manager,
// adds it as a pod admit handler, feeds ShutdownStatus into the Ready condition; Kubelet.Run starts
// it and only logs a failure — the kubelet runs on without it).
import type { Clock } from "../clock.ts";
import type { KubeletConfiguration } from "../config/kubelet-config.ts";
import type { EventRecorder } from "../events/types.ts";
import { kv, log } from "../log.ts";
import { createLogindDBus, createShutdownManager, shutdownGroupsFromConfig, type Logind, type ShutdownManager } from "../node/shutdown/index.ts";
import type { PodLifecycle } from "../pod/lifecycle-types.ts";

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
}): NodeShutdownWiring {
  const manager = createShutdownManager({
    groups: shutdownGroupsFromConfig(input.config),
    logind: input.logind ?? (() => createLogindDBus()),
    activePods: () => input.lifecycle.activePods(),
    killPod: (pod, grace, req) => input.lifecycle.killPod(pod, grace, req),
    clock: input.clock,
    nodeName: input.nodeName,
    recorder: input.events,
    onStatusChange: input.onStatusChange,
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
