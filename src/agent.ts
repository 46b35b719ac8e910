// The composition root (upstream: cmd/kubelet/app/server.go + NewMainKubelet + Kubelet.Run).
// createNodeAgent builds the real node from the configuration, one named step after another over a
// shared context record (node-agent-context.ts): CRI runtime → pod cgroups → pod lifecycle (static pods) → node + pod stats →
// eviction manager (+ kernel notifiers, trace, metrics) → admission → shutdown → image GC → the
// components in their start order → API-server mode → the agent that runs them (agent-run.ts).
import { actuatedResources, createAllocationManager } from "./pod/allocation/index.ts";
import type { AgentComponent } from "./agent-component.ts";
import { createAgent, type Agent } from "./agent-run.ts";
import { createNodeAgentContext, type NodeAgentContext, type NodeAgentInput, type NodeAgentOpts } from "./node-agent-context.ts";
import { realClock } from "./clock.ts";
import { durationMs } from "./config/duration.ts";
import type { CriClient } from "./cri/client.ts";
import { nodeRef, podRef, reasons } from "./events/index.ts";
import { kv, log } from "./log.ts";
import { readMachineInfo } from "./node/machine-info.ts";
import { applyMaxOpenFiles } from "./node/open-files.ts";
import { admissionNodeFrom, predicateAdmitHandler } from "./pod/admit-predicate.ts";
import { createImageGCManager, createImagePuller, type ImageGCManager, type ImagePuller, imagePullLimit, sandboxImages } from "./pod/images/index.ts";
import { configuredCgroupDriver, verifyRuntimeCgroupDriver } from "./pod/cgroups-driver.ts";
import { detectContainerCgroupHost } from "./pod/kuberuntime/cgroup-host.ts";
import { containerGcPolicyFromFlags, createKubeRuntime } from "./pod/kuberuntime/index.ts";
import { checkRuntimeOwner, holdOwnerLock, RuntimeOwnerError } from "./pod/kuberuntime/owner.ts";
import { createOrphanedPodDirs } from "./pod/orphaned-pod-dirs.ts";
import { createOrphanVolumeTearDown } from "./pod/volumemanager/index.ts";
import { unmountUnusedLocalDevices } from "./pod/volumes/local-device.ts";
import { isStaticPod } from "./pod/pod-like.ts";
import { criticalPodAdmissionHandler } from "./pod/preemption-handler.ts";
import type { Runtime } from "./pod/runtime.ts";
import { appArmorAdmitHandler, sysctlAdmitHandler } from "./pod/security/index.ts";
import { createDeviceManager, type DeviceManager } from "./pod/devicemanager/index.ts";
import { makeUserNsManager, runtimeHandlerSupport, type UserNsService } from "./pod/userns/index.ts";
import { apiReviews } from "./server/auth/index.ts";
import { createCriStreamingHost } from "./server/streaming/index.ts";
import { createCadvisorSource } from "./stats/cadvisor.ts";
import { createEvictionWiring, type EvictionWiring } from "./wire/eviction.ts";
import { idleCollectionComponent } from "./wire/idle-collection.ts";
import { createImageImportWiring, type ImageImportWiring } from "./wire/image-import.ts";
import { createNodeApiWiring, type NodeApiWiring } from "./wire/node-api.ts";
import {
  csiVolumeManager,
  imageGCComponent,
  pluginManagerComponent,
  podResourcesComponent,
  rootDirComponent,
  volumeStatCalculator,
} from "./agent-components.ts";
import type { CSIVolumeManager } from "./pod/volumes/csi/index.ts";
import type { VolumeStatCalculator } from "./stats/volume-stat-calculator.ts";
import { createNodeShutdownWiring, type NodeShutdownWiring } from "./wire/node-shutdown.ts";
import { createPodsWiring, type PodsWiring } from "./wire/pods.ts";
import { criClientFromConfig, waitForRuntime } from "./wire/runtime.ts";
import { raiseSchedulingPriority } from "./wire/sched-priority.ts";
import { protectSelf } from "./wire/self-protect.ts";

export interface NodeAgent extends Agent {
  readonly pods: PodsWiring;
  readonly eviction: EvictionWiring;
  readonly imageGC: ImageGCManager;
  /** The image import directory (imageImportPath): tarballs imported, lists pulled, their images pinned. */
  readonly imageImport: ImageImportWiring;
  readonly cri: CriClient;
  /** Resolves true once the runtime answered and the pod lifecycle started (false if stopped first). */
  readonly runtimeReady: Promise<boolean>;
  /** API-server mode (with --kubeconfig). */
  readonly nodeApi?: NodeApiWiring;
}

/**
 * The node agent from a loaded configuration. Nothing here touches the runtime or the cgroup tree
 * until start(); the runtime is awaited in the background, so the HTTP servers, /configz and the
 * eviction manager come up even while containerd is down, and pods start when it answers.
 */
export function createNodeAgent(loaded: NodeAgentInput, opts: NodeAgentOpts = {}): NodeAgent {
  const ctx = createNodeAgentContext(loaded, opts);
  const imagePuller = createImagePuller(imagePullLimit(ctx.config.serializeImagePulls, ctx.config.maxParallelImagePulls));
  const { runtime, pods, devices, userns, csi } = createPods(ctx, imagePuller);
  const imageImport = createImageImportWiring({
    path: ctx.config.imageImportPath, // offline images: tarballs and lists of the import directory
    rootDir: ctx.flags.rootDir,
    endpoint: ctx.config.imageServiceEndpoint || ctx.rawCri.endpoint,
    cri: ctx.cri,
    imagePuller,
    lifecycle: () => pods.lifecycle,
    clock: realClock,
  });
  const volumeStats = volumeStatCalculator(ctx, runtime, csi);
  const eviction = createEviction(ctx, pods, imageImport.pinnedImages, volumeStats);
  addAdmitHandlers(ctx, pods, devices);
  const nodeShutdown = createNodeShutdown(ctx, pods);
  const imageGC = createImageGC(ctx, eviction, imageImport.pinnedImages);
  const lifecycle = podLifecycleComponent(ctx, pods);
  // The device manager reads its checkpoint before the first pod is admitted.
  const deviceManager: AgentComponent = { name: "device manager", start: () => devices.start(), stop: () => devices.stop() };
  // The pods' user namespace ranges are read back before the first pod syncs (upstream MakeUserNsManager).
  const usernsManager: AgentComponent = { name: "user namespace manager", start: () => userns.start(), stop() {} };
  const components = [
    ...processComponents(ctx, pods),
    rootDirComponent(ctx.flags.rootDir),
    deviceManager,
    usernsManager,
    lifecycle.component,
    evictionComponent(ctx, eviction, lifecycle.runtimeReady),
  ];
  const nodeApi = createNodeApi(ctx, pods, eviction, nodeShutdown, { devices, csi });
  ctx.late.nodeApi = nodeApi;
  if (nodeApi) components.push(nodeApi);
  components.push(pluginManagerComponent(ctx, pods.nodeName, nodeApi));
  components.push(nodeShutdown);
  const apiObjects = ctx.apiObjects;
  if (apiObjects) components.push({ name: "api objects", start() {}, stop: () => apiObjects.stop() });
  components.push(imageGCComponent(imageGC, lifecycle.runtimeReady), imageImport.component(lifecycle.runtimeReady), podResourcesComponent(ctx, pods, devices));
  // Releases the code of paths no longer run, e.g. after a burst of pod starts (wire/idle-collection.ts).
  components.push(idleCollectionComponent({ clock: realClock }));
  const agent = createAgentForNode(ctx, { runtime, pods, eviction, nodeApi }, components);
  ctx.late.failAgent = (e) => {
    log.error(e.message);
    agent.fail(e);
  };
  return { ...agent, pods, eviction, imageGC, imageImport, cri: ctx.cri, runtimeReady: lifecycle.runtimeReady, nodeApi };
}

/** The runtime manager over the CRI, the device manager, and the pod lifecycle over them. */
function createPods(
  ctx: NodeAgentContext,
  imagePuller: ImagePuller,
): { runtime: Runtime; pods: PodsWiring; devices: DeviceManager; userns: UserNsService; csi: CSIVolumeManager } {
  const { config, flags } = ctx;
  const userns = makeUserNsManager({
    rootDir: flags.rootDir,
    featureEnabled: config.featureGates?.UserNamespacesSupport !== false, // GA, locked on (config validation)
    idsPerPod: config.userNamespaces?.idsPerPod,
    maxPods: config.maxPods,
    handlerSupportsUserNamespaces: runtimeHandlerSupport(ctx.cri),
  });
  const allocation = createAllocationManager({ rootDir: flags.rootDir, events: ctx.events.recorder });
  // Device plugins (src/pod/devicemanager): a change of their devices updates the node status at once.
  const devices: DeviceManager = createDeviceManager({
    rootDir: flags.rootDir,
    clock: realClock,
    activePods: () => pods.lifecycle.activePods(),
    sourcesReady: () => pods.lifecycle.sourcesReady(),
    onCapacityChange: () =>
      void ctx.late.nodeApi
        ?.mode()
        ?.status.sync()
        .catch(() => undefined),
  });
  const csi = csiVolumeManager(
    ctx,
    () => pods.nodeName,
    (uids) => pods.lifecycle.syncPodsNow((p) => uids.has(p.metadata.uid)),
  );
  const runtime = createKubeRuntime({
    cri: ctx.cri,
    directSignal: ctx.directSignal,
    podLogsDir: config.podLogsDir,
    imagePuller, // images: one pull at a time, or up to maxParallelImagePulls
    rootDir: flags.rootDir,
    nodeAllocatableMemoryBytes: () => ctx.allocatableMemoryBytes,
    storageOperation: ctx.kubeletMetrics.storageOperation,
    hostIP: flags.nodeIP?.split(",")[0]?.trim() || undefined, // lifecycle: httpGet hooks of hostNetwork pods
    containerGcPolicy: containerGcPolicyFromFlags(flags), // lifecycle: periodic container GC
    seccompDefault: config.seccompDefault === true, // security
    dns: { clusterDNS: config.clusterDNS ?? [], clusterDomain: config.clusterDomain ?? "", resolvConf: config.resolvConf ?? "/etc/resolv.conf" }, // security
    apiObjects: ctx.apiObjects, // apivol: secrets, configMaps, tokens of API pods
    csi, // CSI volumes: staged and published by their drivers
    onPodWarning: (p, reason, message) => ctx.events.recorder.event(podRef(p), "Warning", reason, message),
    events: ctx.events.recorder,
    cgroupHost: detectContainerCgroupHost({ singleProcessOOMKill: config.singleProcessOOMKill, swapBehavior: config.memorySwap?.swapBehavior }), // v2: unified; swap
    actuated: actuatedResources(allocation), // in-place resize
    cpuAffinity: ctx.cpuManager.cpuAffinity, // cpuManagerPolicy static: exclusive CPUs
    deviceRunOptions: (pod, container) => devices.runContainerOptions(pod, container),
    userNamespacedPodStarted: (failed) => ctx.kubeletMetrics.userNamespacedPodStarted(failed),
    userNamespaceMappings: (pod, handler) => userns.getOrCreateUserNamespaceMappings({ metadata: { uid: pod.metadata.uid ?? "" }, spec: pod.spec }, handler),
  });
  const pods = createPodsWiring({
    config,
    flags,
    runtime,
    metrics: ctx.kubeletMetrics,
    extraSources: flags.kubeconfig ? ["api"] : undefined,
    events: ctx.events.recorder,
    allocation,
    userns,
    // upstream cleanupOrphanedPodDirs; the volumes left mounted are reconstructed from the disk and torn
    // down first (CSI ones by their drivers), as upstream's volume manager does after a restart.
    orphanedPodDirs: createOrphanedPodDirs({
      rootDir: flags.rootDir,
      tearDownVolumes: createOrphanVolumeTearDown({
        tearDownCSIVolumes: (uid) => csi.tearDownPod(uid),
        unmountUnusedLocalDevices: () => unmountUnusedLocalDevices(flags.rootDir),
        metrics: ctx.kubeletMetrics.volumeReconstruction,
      }),
    }),
  });
  return { runtime, pods, devices, userns, csi };
}

/** The eviction manager with its stats, kernel notifiers and trace; the trace hears every container stop. */
function createEviction(ctx: NodeAgentContext, pods: PodsWiring, pinnedImages: () => string[], volumeStats: VolumeStatCalculator): EvictionWiring {
  const eviction = createEvictionWiring({
    config: ctx.config,
    sources: ctx.loaded.sources,
    rootDir: ctx.flags.rootDir,
    evictionTrace: ctx.flags.evictionTrace,
    nodeName: pods.nodeName,
    lifecycle: pods.lifecycle,
    cri: ctx.cri,
    podsCgroup: pods.podsCgroup,
    podsMemoryLimitBytes: () => pods.cgroups?.kubepodsMemoryLimit()?.wantedBytes, // allocatable never above what the kernel holds (docs/edge.md#a-kubepods-limit-the-kernel-refuses)
    imageCri: ctx.allCri,
    keepImages: pinnedImages, // image reclaim keeps the images of the image import directory
    podCgroupPath: pods.podCgroupPath,
    metrics: ctx.metrics,
    clock: ctx.clock,
    podsCgroupReady: () => ctx.late.cgroupsReady,
    events: ctx.events.recorder,
    notifierPriority: ctx.opts.protectSelf !== false, // the notifier thread's nice, as oom_score_adj: the agent's own process
    directSignal: ctx.directSignal, // the notifier thread's own hard memory evictions (wire/fast-eviction.ts)
    onPodCgroupRemoved: pods.cgroups && ((fn) => pods.cgroups!.onPodRemoved(fn)), // …whose plan re-plans when a pod cgroup goes
    volumeStats: (pod, uid) => volumeStats.podVolumeStats(pod, uid), // the summary's persistent and CSI volumes
  });
  ctx.late.onStop = (e) => eviction.tracer.onStopContainer(e);
  return eviction;
}

/**
 * The pod admit handlers after the eviction manager's: upstream registers the predicate admit handler
 * (pod count against maxPods, …) after it, so a pod refused by both gets the eviction manager's reason.
 */
function addAdmitHandlers(ctx: NodeAgentContext, pods: PodsWiring, devices: DeviceManager): void {
  // In API-server mode the predicates (resources, node affinity, node name, host ports, taints) are
  // checked against the Node object the API server returned; before it (and standalone) the pod count.
  // A critical pod refused only for resources preempts lower-priority pods (src/pod/preemption-handler.ts).
  const criticalPods = criticalPodAdmissionHandler({
    killPod: (p, req) => pods.lifecycle.killPod(p, undefined, req),
    events: ctx.events.recorder,
    onPreempted: (r) => ctx.kubeletMetrics.preempted(r),
  });
  pods.lifecycle.addAdmitHandler(
    predicateAdmitHandler({
      maxPods: ctx.config.maxPods,
      node: () => admissionNodeFrom(ctx.late.nodeApi?.mode()?.status.node() ?? ctx.late.nodeApi?.cachedNode()),
      onFailure: criticalPods,
    }),
  );
  // security: sysctls (safe set + allowedUnsafeSysctls) and AppArmor, as upstream's admit handlers.
  pods.lifecycle.addAdmitHandler(sysctlAdmitHandler(ctx.config.allowedUnsafeSysctls ?? []));
  pods.lifecycle.addAdmitHandler(appArmorAdmitHandler());
  // The CPU manager's allocation (upstream GetAllocateResourcesPodAdmitHandler): UnexpectedAdmissionError when CPUs lack.
  pods.lifecycle.addAdmitHandler(ctx.cpuManager.admitHandler);
  // Last: devices are reserved only for a pod every other handler admitted (upstream's resource allocator).
  pods.lifecycle.addAdmitHandler(devices.admitHandler);
}

/** Graceful node shutdown (logind inhibitor; src/node/shutdown): an admit handler, and the Ready condition's error. */
function createNodeShutdown(ctx: NodeAgentContext, pods: PodsWiring): NodeShutdownWiring {
  return createNodeShutdownWiring({
    config: ctx.config,
    nodeName: pods.nodeName,
    lifecycle: pods.lifecycle,
    clock: realClock,
    events: ctx.events.recorder,
    rootDir: ctx.flags.rootDir,
    metrics: ctx.metrics,
    onStatusChange: () =>
      void ctx.late.nodeApi
        ?.mode()
        ?.status.sync()
        .catch(() => undefined),
  });
}

/** The image garbage collector over every agent's images, measuring the image filesystem in the summary. */
function createImageGC(ctx: NodeAgentContext, eviction: EvictionWiring, pinnedImages: () => string[]): ImageGCManager {
  const { config } = ctx;
  return createImageGCManager({
    cri: ctx.allCri, // images in use by any agent's containers are in use
    clock: realClock,
    policy: {
      highThresholdPercent: config.imageGCHighThresholdPercent,
      lowThresholdPercent: config.imageGCLowThresholdPercent,
      minAgeMs: durationMs(config.imageMinimumGCAge),
    },
    // Without a dedicated image filesystem in the summary, images live on the node filesystem.
    imageFsStats: async () => {
      const node = (await eviction.summary.summary()).node;
      return node.runtime?.imageFs ?? node.fs;
    },
    // The sandbox image, and the images of the image import directory (pinned, as upstream keeps Image.pinned ones).
    keepImages: async () => [...(await sandboxImages(ctx.cri)), ...pinnedImages()],
  });
}

/** The process settings that come first: open files, the birth cry event, oom_score_adj, the nice value. */
function processComponents(ctx: NodeAgentContext, pods: PodsWiring): AgentComponent[] {
  const { config, opts, events } = ctx;
  const components: AgentComponent[] = [];
  // maxOpenFiles acted on before any listener or runtime connection opens (upstream rlimit.SetNumFiles).
  components.push({ name: "rlimit", start: () => void applyMaxOpenFiles(config.maxOpenFiles ?? 1_000_000), stop() {} });
  // Upstream birthCry: "Starting kubelet." on the node; the queue is emptied last, at stop.
  components.push({
    name: "events",
    start: () => events.recorder.event(nodeRef(pods.nodeName), "Normal", reasons.StartingKubelet, "Starting kubelet."),
    stop: () => events.stop(),
  });
  if (opts.protectSelf !== false) components.push({ name: "oom_score_adj", start: () => void protectSelf(config.oomScoreAdj ?? -999), stop() {} });
  // Before the kernel-notifier thread is started (it inherits the main thread's nice value).
  if (opts.protectSelf !== false && config.schedulingNice)
    components.push({ name: "scheduling priority", start: () => void raiseSchedulingPriority(config.schedulingNice ?? 0), stop() {} });
  return components;
}

/** The pod lifecycle's component: started once the runtime answers; runtimeReady says whether it did. */
function podLifecycleComponent(ctx: NodeAgentContext, pods: PodsWiring): { component: AgentComponent; runtimeReady: Promise<boolean> } {
  const { config } = ctx;
  const abort = new AbortController();
  let resolveReady!: (ok: boolean) => void;
  const runtimeReady = new Promise<boolean>((r) => (resolveReady = r));
  const component: AgentComponent = {
    name: "pod lifecycle",
    start() {
      log.info(
        `Pods ${kv({ runtimeEndpoint: config.containerRuntimeEndpoint, staticPodPath: config.staticPodPath || undefined, staticPodURL: config.staticPodURL || undefined, cgroupRoot: config.cgroupRoot || "/", podsCgroup: pods.podsCgroup, node: pods.nodeName })}`,
      );
      void startPodsOnceRuntimeReady(ctx, pods, abort.signal)
        .catch((e) => {
          log.error(`pod lifecycle failed to start ${kv({ error: (e as Error).message })}`);
          return false;
        })
        .then(resolveReady);
    },
    async stop() {
      abort.abort();
      ctx.cpuManager.stop();
      await pods.lifecycle.stop();
      pods.cgroups?.close();
      ctx.late.ownerLock?.release();
      ctx.directSignal.close();
      ctx.cri.close();
    },
  };
  return { component, runtimeReady };
}

/**
 * Waits for the runtime, checks that this agent owns it and that its cgroup driver is ours, sets up
 * the QoS cgroups and starts the pod lifecycle: true once pods can run, false when stopped first.
 */
async function startPodsOnceRuntimeReady(ctx: NodeAgentContext, pods: PodsWiring, signal: AbortSignal): Promise<boolean> {
  const { config, opts, events } = ctx;
  // A probe without the client's own UNAVAILABLE retries: an absent runtime is reported at once.
  const probe = opts.cri ?? criClientFromConfig(config, { retryBudgetMs: 0 });
  const ok = await waitForRuntime(probe, { signal, retryMs: opts.runtimeRetryMs });
  // One runtime, one agent (kuberuntime/owner.ts): refuse when another live bunlet's pods run on it.
  ctx.late.ownerLock ??= holdOwnerLock(ctx.flags.rootDir);
  const owned = ok
    ? await checkRuntimeOwner(probe, ctx.owner).then(
        () => true,
        (e: Error) => {
          if (e instanceof RuntimeOwnerError) return (ctx.late.failAgent(e), false);
          log.warn(`cannot check which agent owns the runtime's pods; going on ${kv({ error: e.message })}`);
          return true;
        },
      )
    : false;
  // The runtime's cgroup driver must be ours (src/pod/cgroups-driver.ts): a mismatch stops the agent.
  const driverMismatch = ok && owned ? await verifyRuntimeCgroupDriver(probe, configuredCgroupDriver(config.cgroupDriver)) : undefined;
  if (probe !== opts.cri) probe.close();
  if (!ok || !owned) return false;
  if (driverMismatch) return (ctx.late.failAgent(driverMismatch), false);
  try {
    await pods.cgroups?.setup();
    ctx.late.cgroupsReady = true;
    if (pods.cgroups && (config.enforceNodeAllocatable ?? ["pods"]).includes("pods"))
      events.recorder.event(nodeRef(pods.nodeName), "Normal", reasons.SuccessfulNodeAllocatableEnforcement, "Updated Node Allocatable limit across pods");
  } catch (e) {
    log.error(`QoS cgroups setup failed; pods start without them being limited ${kv({ error: (e as Error).message })}`);
  }
  if (signal.aborted) return false;
  // The CPU manager before any pod is admitted (upstream containerManager.Start); it failing stops the agent.
  const cpuManagerError = await ctx.cpuManager
    .start({ cri: ctx.cri, activePods: () => pods.lifecycle.activePods(), sourcesReady: () => pods.lifecycle.sourcesReady() })
    .then(
      () => undefined,
      (e: Error) => new Error(`start cpu manager error: ${e.message}`),
    );
  if (cpuManagerError) return (ctx.late.failAgent(cpuManagerError), false);
  if (signal.aborted) return false;
  await pods.lifecycle.start();
  if (signal.aborted) {
    await pods.lifecycle.stop();
    return false;
  }
  return true;
}

/**
 * The eviction manager's component. It starts once pods can run: before that there is nothing it
 * could evict or reclaim (both go through the runtime), and kubepods — where the allocatable notifier
 * is armed on the first cycle — does not exist yet.
 */
function evictionComponent(ctx: NodeAgentContext, eviction: EvictionWiring, runtimeReady: Promise<boolean>): AgentComponent {
  let evictionStarted = false;
  let stopped = false;
  return {
    name: "eviction manager",
    start() {
      log.info(
        `eviction manager starts once the container runtime is ready ${kv({ kernelMemcgNotification: ctx.config.kernelMemcgNotification, evictionTrace: ctx.flags.evictionTrace })}`,
      );
      void runtimeReady.then(async (ok) => {
        if (!ok || stopped) return;
        try {
          await eviction.component.start();
          evictionStarted = true;
        } catch (e) {
          log.error(`eviction manager failed to start ${kv({ error: (e as Error).message })}`);
        }
      });
    },
    async stop() {
      stopped = true;
      if (evictionStarted) await eviction.component.stop();
    },
  };
}

/** API-server mode (--kubeconfig): TLS bootstrap, registration, node status, lease (src/wire/node-api.ts). */
function createNodeApi(
  ctx: NodeAgentContext,
  pods: PodsWiring,
  eviction: EvictionWiring,
  nodeShutdown: NodeShutdownWiring,
  { devices, csi }: { devices: DeviceManager; csi: CSIVolumeManager },
): NodeApiWiring | undefined {
  const { flags } = ctx;
  if (!flags.kubeconfig) return undefined;
  return createNodeApiWiring({
    config: ctx.config,
    flags: { ...flags, kubeconfig: flags.kubeconfig },
    nodeName: pods.nodeName,
    cri: ctx.cri,
    eviction,
    clock: realClock,
    onPodUpdate: (u) => pods.lifecycle.handleUpdate(u),
    podStatus: (uid) => pods.lifecycle.getPodStatus(uid),
    onPodStatusChange: (fn) => pods.lifecycle.onStatusChange(fn),
    podCleanedUp: (p) => pods.lifecycle.isPodCleanedUp(p),
    events: ctx.events,
    staticPods: () => pods.lifecycle.pods().filter(isStaticPod),
    staticPodTerminating: (n) => pods.lifecycle.isPodTerminatingByFullName(n),
    metrics: ctx.metrics,
    kubeletStartMs: ctx.kubeletStartMs,
    readyErrors: () => [nodeShutdown.manager.shutdownStatus()].filter((e) => e !== undefined),
    onClient: () => ctx.apiObjects?.services.start(), // envvars: the service informer
    autonomy: ctx.autonomy,
    devicePlugins: () => devices.capacity(),
    volumesInUse: () => csi.volumesInUse(),
    markVolumesReportedInUse: (names) => csi.markVolumesReportedInUse(names),
  });
}

/** The agent that runs the node's components and serves its pods, stats, metrics and streaming. */
function createAgentForNode(
  ctx: NodeAgentContext,
  parts: { runtime: Runtime; pods: PodsWiring; eviction: EvictionWiring; nodeApi?: NodeApiWiring },
  components: AgentComponent[],
): Agent {
  const { runtime, pods, eviction, nodeApi } = parts;
  return createAgent(ctx.loaded, {
    metrics: ctx.metrics,
    probeMetrics: ctx.kubeletMetrics.probes,
    components,
    configz: ctx.opts.configz,
    getPods: () => pods.lifecycle.listPodsForApi(),
    getSummary: () => eviction.summary.summary(),
    getCadvisor: createCadvisorSource({
      activePods: () => pods.lifecycle.activePods(),
      podCgroupPath: pods.podCgroupPath,
      // Not the instrumented client: cAdvisor's reads are not the kubelet's runtime operations.
      cri: ctx.rawCri,
      machine: async () => {
        const m = await readMachineInfo(ctx.flags.rootDir);
        return { memoryBytes: m.memoryBytes, cpuCores: m.cpus, bootID: m.bootID, machineID: m.machineID, systemUUID: m.systemUUID };
      },
    }),
    nodeName: pods.nodeName,
    getRunningPods: () => runtime.getPods(false),
    healthChecks: pods.lifecycle.healthChecks(), // syncloop, pleg, runtime (docs/edge.md#runtime-outages)
    streaming: createCriStreamingHost({ getPods: () => pods.lifecycle.listPodsForApi(), getRuntimePods: () => runtime.getPods(false), cri: ctx.cri }),
    debugEndpoints: { "/debug/eviction": () => eviction.explain() ?? { message: "no eviction cycle has run yet" } },
    servingCertificates: nodeApi?.servingCertificates(),
    // Webhook authn/authz through the node's own client (upstream BuildAuth(nodeName, kubeClient, …)).
    authClient: nodeApi ? apiReviews(() => nodeApi.client()) : undefined,
  });
}
