// The agent's graceful-shutdown wiring: the manager is a pod admit handler and kills through the
// pod lifecycle with upstream's reason and message.
import { expect, test } from "bun:test";
import { createManualClock } from "../../src/manual-clock.ts";
import type { Logind } from "../../src/node/shutdown/index.ts";
import type { PodAdmitHandler, KillPodRequest } from "../../src/pod/lifecycle-types.ts";
import type { Pod } from "../../src/pod/types.ts";
import { createNodeShutdownWiring } from "../../src/wire/node-shutdown.ts";

test("admission refuses pods and pods are killed as Terminated while the node shuts down", async () => {
  const handlers: PodAdmitHandler[] = [];
  const kills: [string, number, KillPodRequest][] = [];
  const pods = [{ metadata: { name: "a", namespace: "default", uid: "a" }, spec: { containers: [], priority: 0 } }] as unknown as Pod[];
  let emit!: (s: boolean) => void;
  const logind: Logind = {
    currentInhibitDelayMs: async () => 60_000,
    overrideInhibitDelay: async () => {},
    reloadLogindConf: async () => {},
    inhibitShutdown: async () => ({ release() {} }),
    monitorShutdown: async (onEvent) => void (emit = onEvent),
    close() {},
  };
  const w = createNodeShutdownWiring({
    config: { shutdownGracePeriod: "20s", shutdownGracePeriodCriticalPods: "5s" },
    nodeName: "n1",
    lifecycle: { activePods: () => pods, killPod: async (p, g, r) => void kills.push([p.metadata.name, g!, r]), addAdmitHandler: (h) => void handlers.push(h) },
    clock: createManualClock(0),
    logind: () => logind,
  });
  expect(handlers.length).toBe(1);
  await w.manager.start();
  expect(handlers[0]!(pods[0]!, []).admit).toBe(true);
  emit(true);
  await w.manager.idle();
  expect(handlers[0]!(pods[0]!, [])).toEqual({ admit: false, reason: "NodeShutdown", message: "Pod was rejected as the node is shutting down." });
  expect(kills).toEqual([["a", 15, { reason: "Terminated", message: "Pod was terminated in response to imminent node shutdown." }]]);
  w.stop();
});
