// Components of the node agent that only start, stop and hand over what the composition root
// (agent.ts) built: the root directory, the plugin manager, image GC and the podresources API; and the
// CSI volume manager the runtime mounts CSI volumes with, bound to the plugin manager's drivers.
import { mkdirSync } from "node:fs";
import type { AgentComponent } from "./agent-component.ts";
import { realClock } from "./clock.ts";
import { kv, log } from "./log.ts";
import type { NodeAgentContext } from "./node-agent-context.ts";
import type { DeviceManager } from "./pod/devicemanager/index.ts";
import type { ImageGCManager } from "./pod/images/index.ts";
import { isNotFound } from "./kube/index.ts";
import { withCSIObjectsCache } from "./pod/autonomy/index.ts";
import { createCSINodeClient, createCSIVolumeManager, type CSIVolumeManager } from "./pod/volumes/csi/index.ts";
import { createPodResourcesServer, podResourcesSocketPath } from "./podresources/server.ts";
import type { NodeApiWiring } from "./wire/node-api.ts";
import { createPluginManagerWiring } from "./wire/plugin-manager.ts";
import type { PodsWiring } from "./wire/pods.ts";
import { durationMs } from "./config/duration.ts";
import { volumeStatsMetrics } from "./metrics/volume-stats.ts";
import type { Runtime } from "./pod/runtime.ts";
import { createVolumeStatCalculator, type VolumeStatCalculator } from "./stats/volume-stat-calculator.ts";
import { DATA_DIR_MODE } from "./pod/pod-dir.ts";
import { makeRShared } from "./pod/volumes/hostutil.ts";

/**
 * Upstream setupDataDirs' first steps: the root directory made 0750 and put on a shared mount before
 * any volume is mounted below it. An error stops the agent, as it stops the kubelet.
 */
export function rootDirComponent(rootDir: string): AgentComponent {
  const start = () => {
    try {
      mkdirSync(rootDir, { recursive: true, mode: DATA_DIR_MODE });
      makeRShared(rootDir);
    } catch (e) {
      throw new Error(`error configuring root directory: ${(e as Error).message}`);
    }
  };
  return { name: "root directory", start, stop() {} };
}

/** The plugin manager (plugins_registry) with the CSI drivers' handler; drivers are published through the node's client. */
export function pluginManagerComponent(ctx: NodeAgentContext, nodeName: string, nodeApi: NodeApiWiring | undefined): AgentComponent {
  const wiring = createPluginManagerWiring({
    rootDir: ctx.flags.rootDir,
    nodeName,
    clock: realClock,
    client: nodeApi && (() => nodeApi.client()),
    nodeRegistered: () => nodeApi?.mode()?.status.registered() === true,
    metrics: ctx.metrics,
    autonomy: ctx.autonomy !== undefined,
  });
  ctx.late.csiDriverEndpoint = (driver) => wiring.csi.drivers().get(driver)?.endpoint;
  return wiring.component;
}

/**
 * The CSI volume manager: drivers from the plugin manager, CSIDriver, VolumeAttachment and Secret objects
 * read with the node's client (through the autonomy cache when there is one), claims' statuses patched after
 * a node expansion; `syncPodsNow` syncs at once
 * the pods whose volumes a node status has just reported in use.
 */
export function csiVolumeManager(ctx: NodeAgentContext, nodeName: () => string, syncPodsNow: (podUids: ReadonlySet<string>) => void): CSIVolumeManager {
  const getObject = async (path: string) => {
    const client = ctx.late.nodeApi?.client();
    if (!client) throw new Error(`cannot read ${path}: no kubeClient defined`);
    return client.request({ path }).catch((e) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
  };
  const patchObject = async (path: string, body: object) => {
    const client = ctx.late.nodeApi?.client();
    if (!client) throw new Error(`cannot patch ${path}: no kubeClient defined`);
    return client.request({ method: "PATCH", path, body, contentType: "application/merge-patch+json" });
  };
  return createCSIVolumeManager({
    rootDir: ctx.flags.rootDir,
    nodeName,
    driverEndpoint: (driver) => ctx.late.csiDriverEndpoint?.(driver),
    // Node autonomy: the CSIDriver, VolumeAttachment and volume Secret reads stored, and served when the API server gives no answer.
    getObject: ctx.flags.kubeconfig ? (ctx.autonomy ? withCSIObjectsCache(getObject, ctx.autonomy) : getObject) : undefined,
    client: createCSINodeClient(),
    // The attach/detach controller attaches: a volume is staged once the node status reported it in use, which changes prompt.
    controllerAttachDetach: !!ctx.flags.kubeconfig,
    onVolumesInUseChange: () => ctx.late.nodeApi?.mode()?.status.syncSoon(),
    onVolumesReportedInUse: syncPodsNow,
    patchObject: ctx.flags.kubeconfig ? patchObject : undefined,
  });
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

/** The persistent and CSI volumes' stats for the summary, and kubelet_volume_stats_* from them. */
export function volumeStatCalculator(ctx: NodeAgentContext, runtime: Runtime, csi: CSIVolumeManager): VolumeStatCalculator {
  const calculator = createVolumeStatCalculator({
    rootDir: ctx.flags.rootDir,
    clock: realClock,
    periodMs: durationMs(ctx.config.volumeStatsAggPeriod ?? "1m"),
    claims: (uid) => runtime.podClaims?.(uid),
    csiVolumeStats: (uid, specVolID) => csi.volumeStats(uid, specVolID),
    csiBlockVolumeStats: (uid, specVolID) => csi.blockVolumeStats(uid, specVolID),
    onError: (message) => log.warn(message),
  });
  volumeStatsMetrics(ctx.metrics, () => calculator.claimStats());
  return calculator;
}
