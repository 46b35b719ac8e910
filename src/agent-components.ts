// Components of the node agent that only start, stop and hand over what the composition root
// (agent.ts) built: the plugin manager, image GC and the podresources API.
import type { AgentComponent } from "./agent-component.ts";
import { realClock } from "./clock.ts";
import { kv, log } from "./log.ts";
import type { NodeAgentContext } from "./node-agent-context.ts";
import type { DeviceManager } from "./pod/devicemanager/index.ts";
import type { ImageGCManager } from "./pod/images/index.ts";
import { createPodResourcesServer, podResourcesSocketPath } from "./podresources/server.ts";
import type { NodeApiWiring } from "./wire/node-api.ts";
import { createPluginManagerWiring } from "./wire/plugin-manager.ts";
import type { PodsWiring } from "./wire/pods.ts";

/** The plugin manager (plugins_registry) with the CSI drivers' handler; drivers are published through the node's client. */
export function pluginManagerComponent(ctx: NodeAgentContext, nodeName: string, nodeApi: NodeApiWiring | undefined): AgentComponent {
  return createPluginManagerWiring({
    rootDir: ctx.flags.rootDir,
    nodeName,
    clock: realClock,
    client: nodeApi && (() => nodeApi.client()),
    nodeRegistered: () => nodeApi?.mode()?.status.registered() === true,
    metrics: ctx.metrics,
  }).component;
}

/** Image GC's component: like eviction, it needs the runtime and starts once pods can run. */
export function imageGCComponent(imageGC: ImageGCManager, runtimeReady: Promise<boolean>): AgentComponent {
  return {
    name: "image gc",
    start() {
      void runtimeReady
        .then((ok) => {
          if (ok) return imageGC.start(); // a no-op once imageGC.stop() ran
        })
        .catch((e) => log.error(`image gc failed to start ${kv({ error: (e as Error).message })}`));
    },
    stop: () => imageGC.stop(),
  };
}

/** The podresources gRPC API (upstream ListenAndServePodResources): <rootDir>/pod-resources/kubelet.sock. */
export function podResourcesComponent(ctx: NodeAgentContext, pods: PodsWiring, devices: DeviceManager): AgentComponent {
  const podResources = createPodResourcesServer(podResourcesSocketPath(ctx.flags.rootDir), {
    activePods: () => pods.lifecycle.activePods(),
    pods: () => pods.lifecycle.pods(),
    providers: {
      cpus: { exclusive: ctx.cpuManager.exclusiveCPUs, allocatable: ctx.cpuManager.allocatableCPUs }, // cpu_ids
      devices: { container: (uid, name) => devices.containerDevices(uid, name), allocatable: () => devices.allocatableDevices() },
    },
    getEnabled: ctx.config.featureGates?.KubeletPodResourcesGet !== false, // beta, on by default
  });
  return { name: "podresources", start: () => podResources.start(), stop: () => podResources.stop() };
}
