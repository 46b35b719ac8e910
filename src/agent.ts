// The composition root (upstream: cmd/kubelet/app/server.go run() + NewMainKubelet + Kubelet.Run).
// It builds the object graph from the loaded configuration and owns the start/stop order:
//   lock file → (contention watch) → standalone/API mode → components → HTTP servers
// and the reverse on stop. createAgent takes its parts through AgentDeps (tests build small agents);
// createNodeAgent builds the real node from the configuration: CRI runtime → pod cgroups → pod
// lifecycle (static pods) → node + pod stats → eviction manager (+ kernel notifiers, trace, metrics).
import type { AgentComponent } from "./agent-component.ts";
import { preciseClock, realClock } from "./clock.ts";
import type { KubeletConfiguration } from "./config/kubelet-config.ts";
import { ConfigError } from "./config/errors.ts";
import { acquireLockFile, watchLockContention, type ContentionWatch, type LockFile } from "./lockfile.ts";
import { kv, log } from "./log.ts";
import type { HealthCheck, ServerProviders } from "./server/endpoints.ts";
import { startServers, type DynamicServingCertificate, type RunningServers } from "./server/listen.ts";
import { resolveServing } from "./server/serving.ts";
import { createCriStreamingHost } from "./server/streaming/index.ts";
import { apiReviews, type AuthClient } from "./server/auth/index.ts";
import { hostname } from "node:os";
import { createRegistry, type Registry } from "./server/metrics.ts";
import { processCollector } from "./server/process-metrics.ts";
import type { Summary } from "./stats/summary.ts";
import type { LoadedConfig } from "./config/load.ts";
import type { CriClient } from "./cri/client.ts";
import { createKubeletMetrics } from "./metrics/index.ts";
import { criticalPodAdmissionHandler } from "./pod/preemption-handler.ts";
import { createDirectSignaller, createKubeRuntime } from "./pod/kuberuntime/index.ts";
import { appArmorAdmitHandler, sysctlAdmitHandler } from "./pod/security/index.ts";
import { admissionNodeFrom, predicateAdmitHandler } from "./pod/admit-predicate.ts";
import { nodeAllocatableAbsolute } from "./pod/cgroups-config.ts";
import { configuredCgroupDriver, verifyRuntimeCgroupDriver } from "./pod/cgroups-driver.ts";
import { nodeCapacity, nodeNameFrom } from "./pod/setup.ts";
import { isStaticPod } from "./pod/pod-like.ts";
import { createEventBroadcaster, nodeRef, podRef, reasons } from "./events/index.ts";
import { detectContainerCgroupHost } from "./pod/kuberuntime/cgroup-host.ts";
import { durationMs } from "./config/duration.ts";
import { createEvictionWiring, sandboxImages, type EvictionWiring } from "./wire/eviction.ts";
import { createImageGCManager, type ImageGCManager } from "./wire/image-gc.ts";
import { createPodsWiring, type PodsWiring } from "./wire/pods.ts";
import { criClientFromConfig, observeStopContainer, waitForRuntime } from "./wire/runtime.ts";
import { protectSelf } from "./wire/self-protect.ts";
import { raiseSchedulingPriority } from "./wire/sched-priority.ts";
import { applyMaxOpenFiles } from "./node/open-files.ts";
import { checkRuntimeOwner, holdOwnerLock, ownedCri, RuntimeOwnerError, runtimeOwner } from "./pod/kuberuntime/owner.ts";
import { createNodeApiWiring, type NodeApiWiring } from "./wire/node-api.ts";
import { createNodeShutdownWiring } from "./wire/node-shutdown.ts";
import { createPodApiObjects, type ChangeDetectionStrategy } from "./pod/apiobjects/index.ts";
import { createCadvisorSource } from "./stats/cadvisor.ts";
import { readMachineInfo } from "./node/machine-info.ts";
import { createPodResourcesServer, podResourcesSocketPath } from "./podresources/server.ts";
import pkg from "../package.json" with { type: "json" };

/** The part of CONFIG's LoadedConfig the agent reads (LoadedConfig is assignable to it). */
export interface AgentInput {
  config: KubeletConfiguration;
  flags: { kubeconfig?: string; lockFile?: string; exitOnLockContention?: boolean; certDir?: string; unsafeLoopbackDebugHandlers?: boolean };
}

export type { AgentComponent };

export interface AgentDeps {
  /** Pods bound to this node (v1 Pod objects) for /pods; default: none. */
  getPods?: () => readonly object[] | Promise<readonly object[]>;
  /** Summary API provider; without it /stats/summary is 404. */
  getSummary?: () => Summary | Promise<Summary>;
  /** The /configz body (CONFIG's configz(config)); without it /configz is 404. */
  configz?: (config: KubeletConfiguration) => unknown;
  /** Shared metrics registry; one is created (with process_* metrics) if absent. */
  metrics?: Registry;
  /** The prober's registry, served on /metrics/probes; absent ⇒ 404. */
  probeMetrics?: Registry;
  /** /metrics/cadvisor's figures; absent ⇒ 404. */
  getCadvisor?: ServerProviders["getCadvisor"];
  healthChecks?: HealthCheck[];
  /** JSON debugging endpoints on the main port, e.g. { "/debug/eviction": () => manager.explain() }. */
  debugEndpoints?: Record<string, () => unknown>;
  /** Started in order after the lock is held, stopped in reverse before the servers close. */
  components?: AgentComponent[];
  /** Running pods from the runtime, for /runningpods/. */
  getRunningPods?: ServerProviders["getRunningPods"];
  /** exec/attach/portForward/run through the CRI streaming API. */
  streaming?: ServerProviders["streaming"];
  /** Node name for authorization attributes and the self-signed serving cert (default: hostname). */
  nodeName?: string;
  /** TokenReview / SubjectAccessReview calls for webhook authn/authz (cluster mode's API client). */
  authClient?: AuthClient;
  /** Poll interval while another process holds the lock file. */
  lockPollMs?: number;
  /** serverTLSBootstrap's serving certificate (API-server mode). */
  servingCertificates?: DynamicServingCertificate;
}

export type ExitReason = { kind: "lock-contention"; event: string } | { kind: "stopped" } | { kind: "fatal"; error: string };

export interface Agent {
  /** Acquires the lock (waiting if held), starts components and servers. Rejects on a fatal error. */
  start(): Promise<void>;
  /** Stops everything started, releases the lock. Idempotent; safe before start() finished. */
  stop(): Promise<void>;
  /** Resolves when the agent decides to exit by itself (lock contention) or after stop(). */
  readonly done: Promise<ExitReason>;
  readonly metrics: Registry;
  /** Listening servers once started. */
  servers(): RunningServers | undefined;
  /** A component found the node unusable after start (e.g. another agent owns the runtime): done resolves "fatal". */
  fail(error: Error): void;
}

/** A registry with the process_* metrics and bunlet_build_info, as every agent serves them. */
export function createAgentRegistry(): Registry {
  const metrics = createRegistry();
  metrics.collect(processCollector());
  // Like kubernetes_build_info: a constant 1 whose labels say what is running.
  metrics
    .gauge({
      name: "bunlet_build_info",
      help: "A metric with a constant '1' value labeled by the bunlet and Bun versions.",
      labelNames: ["version", "bun_version"],
    })
    .set(1, { version: `v${pkg.version}`, bun_version: Bun.version });
  return metrics;
}

export function createAgent(input: AgentInput, deps: AgentDeps = {}): Agent {
  const { config, flags } = input;
  const metrics = deps.metrics ?? createAgentRegistry();
  const components = deps.components ?? [];

  const providers: ServerProviders = {
    getPods: deps.getPods ?? (() => []),
    getSummary: deps.getSummary,
    configz: deps.configz ? () => deps.configz!(config) : undefined,
    metrics,
    probeMetrics: deps.probeMetrics,
    getCadvisor: deps.getCadvisor,
    healthChecks: deps.healthChecks,
    debugEndpoints: deps.debugEndpoints,
    podLogsDir: config.podLogsDir,
    getRunningPods: deps.getRunningPods,
    streaming: deps.streaming,
  };

  const abort = new AbortController();
  let lock: LockFile | undefined;
  let watch: ContentionWatch | undefined;
  let servers: RunningServers | undefined;
  const started: AgentComponent[] = [];
  let resolveDone!: (r: ExitReason) => void;
  const done = new Promise<ExitReason>((r) => (resolveDone = r));
  let stopping: Promise<void> | undefined;

  async function start(): Promise<void> {
    // Same order and texts as upstream run(): checked before anything is touched.
    if (flags.exitOnLockContention && !flags.lockFile) {
      throw new ConfigError("cannot exit on lock file contention: no lock file specified", {
        source: "--exit-on-lock-contention",
        field: "exitOnLockContention",
        value: true,
      });
    }
    if (flags.lockFile) {
      log.info(`Acquiring file lock ${kv({ path: flags.lockFile })}`);
      lock = await acquireLockFile(flags.lockFile, { pollMs: deps.lockPollMs, signal: abort.signal });
      log.info(`Acquired file lock ${kv({ path: flags.lockFile })}`);
      if (flags.exitOnLockContention) {
        log.info(`Watching for inotify events ${kv({ path: flags.lockFile })}`);
        watch = watchLockContention(flags.lockFile, (ev) => {
          log.info(`Inotify event on the lock file: another instance wants it, exiting ${kv({ path: flags.lockFile, event: ev.kind })}`);
          resolveDone({ kind: "lock-contention", event: ev.kind });
        });
      }
    }
    if (abort.signal.aborted) return;

    if (!flags.kubeconfig) {
      log.info("Standalone mode, no API client");
      log.info("No API server defined - no node status update will be sent");
    }

    for (const c of components) {
      if (abort.signal.aborted) return;
      await c.start();
      started.push(c);
    }
    if (abort.signal.aborted) return;

    const secure = await resolveServing(config, {
      nodeName: deps.nodeName ?? hostname().toLowerCase(),
      certDir: flags.certDir ?? "/var/lib/kubelet/pki",
      authClient: deps.authClient,
      servingCertificates: deps.servingCertificates,
      apiServerMode: !!flags.kubeconfig,
    });
    servers = await startServers(
      {
        address: config.address,
        port: config.port,
        readOnlyPort: config.readOnlyPort,
        healthzBindAddress: config.healthzBindAddress,
        healthzPort: config.healthzPort,
        enableServer: config.enableServer,
        enableDebuggingHandlers: config.enableDebuggingHandlers,
        secure,
        unsafeLoopbackDebugHandlers: flags.unsafeLoopbackDebugHandlers,
      },
      providers,
    );
  }

  function stop(): Promise<void> {
    stopping ??= (async () => {
      abort.abort(new Error("agent stopping"));
      const step = async (what: string, fn: () => unknown) => {
        try {
          await fn();
        } catch (err) {
          log.error(`shutdown step failed ${kv({ step: what, error: String(err) })}`);
        }
      };
      await step("servers", () => servers?.stop());
      for (const c of started.reverse()) await step(c.name, () => c.stop());
      await step("lock watch", () => watch?.close());
      await step("lock", () => lock?.release());
      if (lock) log.info(`Released file lock ${kv({ path: lock.path })}`);
      resolveDone({ kind: "stopped" });
    })();
    return stopping;
  }

  return { start, stop, done, metrics, servers: () => servers, fail: (e) => resolveDone({ kind: "fatal", error: e.message }) };
}

export interface NodeAgentOpts {
  /** Write oomScoreAdj to /proc/self/oom_score_adj at start (default true; in-process tests turn it off). */
  protectSelf?: boolean;
  /** CRI client instead of one built from containerRuntimeEndpoint (tests). */
  cri?: CriClient;
  /** Delay between attempts to reach the runtime (default 2 s). */
  runtimeRetryMs?: number;
  configz?: (config: KubeletConfiguration) => unknown;
}

export interface NodeAgent extends Agent {
  readonly pods: PodsWiring;
  readonly eviction: EvictionWiring;
  readonly imageGC: ImageGCManager;
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
/** Upstream GCPolicy from the deprecated --minimum-container-ttl-duration / --maximum-dead-containers(-per-container) flags. */
function containerGcPolicyFromFlags(f: { minimumContainerTTLDuration?: string; maximumDeadContainersPerContainer?: number; maximumDeadContainers?: number }) {
  return {
    minAgeMs: f.minimumContainerTTLDuration ? durationMs(f.minimumContainerTTLDuration) : 0,
    maxPerPodContainer: f.maximumDeadContainersPerContainer ?? 1,
    maxContainers: f.maximumDeadContainers ?? -1,
  };
}

/** configMapAndSecretChangeDetectionStrategy: Watch (default), Cache or Get. */
function changeDetectionStrategy(v: string | undefined): ChangeDetectionStrategy {
  if (v === "Cache" || v === "Get" || v === "Watch") return v;
  if (v) log.warn(`unknown configMapAndSecretChangeDetectionStrategy; using Watch ${kv({ value: v })}`);
  return "Watch";
}

export function createNodeAgent(loaded: Pick<LoadedConfig, "config" | "flags"> & Partial<Pick<LoadedConfig, "sources">>, opts: NodeAgentOpts = {}): NodeAgent {
  const { config, flags } = loaded;
  const kubeletStartMs = Date.now(); // kubelet_node_startup_pre_* (upstream: the tracker's creation)
  const metrics = createAgentRegistry();
  const clock = preciseClock();
  let cgroupsReady = false;
  let onStop: Parameters<typeof observeStopContainer>[1] = () => {};
  const kubeletMetrics = createKubeletMetrics(metrics);
  // Events (src/events): logged, and written to the API server in API-server mode.
  const events = createEventBroadcaster({
    clock: realClock,
    component: "kubelet",
    host: nodeNameFrom(flags.hostnameOverride),
    queueForSink: !!flags.kubeconfig,
  });
  const rawCri = opts.cri ?? criClientFromConfig(config);
  const owner = runtimeOwner(flags.rootDir);
  const allCri = observeStopContainer(kubeletMetrics.instrumentCri(rawCri), (e) => onStop(e), clock.now);
  const cri = ownedCri(allCri, owner);
  let failAgent: (e: Error) => void = () => {};
  let ownerLock: { release(): void } | undefined;
  // Memory-backed emptyDirs are tmpfs sized at most to node allocatable memory (KEP-1967), not all RAM.
  const allocatableMemoryBytes = Number(
    nodeAllocatableAbsolute({ memory: String(nodeCapacity().memoryBytes) }, config.systemReserved, config.kubeReserved).memory! / 1_000_000_000n,
  );
  // The first signal of a ≤ 1 s stop (hard eviction) goes straight to the container's init; the
  // trace's "stop signal sent" is then that moment, not the StopContainer that follows.
  const directSignal = createDirectSignaller({
    cri: rawCri,
    now: clock.now,
    onSignal: (e) => onStop({ containerId: e.containerId, podUid: e.podUid, phase: "sent", atMs: e.atMs }),
  });
  // API-server mode: what API pods reference (secrets, configMaps, service account tokens), through
  // the client the node API wiring builds once the node has credentials.
  const apiObjects = flags.kubeconfig
    ? createPodApiObjects({
        client: () => nodeApi?.client(),
        clock: realClock,
        strategy: changeDetectionStrategy(config.configMapAndSecretChangeDetectionStrategy),
        clusterTrustBundleProjection: config.featureGates?.ClusterTrustBundleProjection === true,
      })
    : undefined;
  const runtime = createKubeRuntime({
    cri,
    directSignal,
    podLogsDir: config.podLogsDir,
    rootDir: flags.rootDir,
    nodeAllocatableMemoryBytes: () => allocatableMemoryBytes,
    storageOperation: kubeletMetrics.storageOperation,
    hostIP: flags.nodeIP?.split(",")[0]?.trim() || undefined, // lifecycle: httpGet hooks of hostNetwork pods
    containerGcPolicy: containerGcPolicyFromFlags(flags), // lifecycle: periodic container GC
    seccompDefault: config.seccompDefault === true, // security
    dns: { clusterDNS: config.clusterDNS ?? [], clusterDomain: config.clusterDomain ?? "", resolvConf: config.resolvConf ?? "/etc/resolv.conf" }, // security
    apiObjects, // apivol: secrets, configMaps, tokens of API pods
    onPodWarning: (p, reason, message) => events.recorder.event(podRef(p), "Warning", reason, message),
    events: events.recorder,
    cgroupHost: detectContainerCgroupHost({ singleProcessOOMKill: config.singleProcessOOMKill }), // v2: LinuxContainerResources.unified
  });
  const pods = createPodsWiring({
    config,
    flags,
    runtime,
    metrics: kubeletMetrics,
    extraSources: flags.kubeconfig ? ["api"] : undefined,
    events: events.recorder,
  });
  const eviction = createEvictionWiring({
    config,
    sources: loaded.sources,
    rootDir: flags.rootDir,
    evictionTrace: flags.evictionTrace,
    nodeName: pods.nodeName,
    lifecycle: pods.lifecycle,
    cri,
    podsCgroup: pods.podsCgroup,
    podsMemoryLimitBytes: () => pods.cgroups?.kubepodsMemoryLimit()?.wantedBytes, // allocatable never above what the kernel holds (docs/edge.md#a-kubepods-limit-the-kernel-refuses)
    imageCri: allCri,
    podCgroupPath: pods.podCgroupPath,
    metrics,
    clock,
    podsCgroupReady: () => cgroupsReady,
    events: events.recorder,
    notifierPriority: opts.protectSelf !== false, // the notifier thread's nice, as oom_score_adj: the agent's own process
    directSignal, // the notifier thread's own hard memory evictions (wire/fast-eviction.ts)
    onPodCgroupRemoved: pods.cgroups && ((fn) => pods.cgroups!.onPodRemoved(fn)), // …whose plan re-plans when a pod cgroup goes
  });
  onStop = (e) => eviction.tracer.onStopContainer(e);
  // Upstream registers the predicate admit handler (pod count against maxPods, …) after the eviction
  // manager's, so a pod refused by both gets the eviction manager's reason.
  // In API-server mode the predicates (resources, node affinity, node name, host ports, taints) are
  // checked against the Node object the API server returned; before it (and standalone) the pod count.
  // A critical pod refused only for resources preempts lower-priority pods (src/pod/preemption-handler.ts).
  const criticalPods = criticalPodAdmissionHandler({
    killPod: (p, req) => pods.lifecycle.killPod(p, undefined, req),
    events: events.recorder,
    onPreempted: (r) => kubeletMetrics.preempted(r),
  });
  pods.lifecycle.addAdmitHandler(
    predicateAdmitHandler({ maxPods: config.maxPods, node: () => admissionNodeFrom(nodeApi?.mode()?.status.node()), onFailure: criticalPods }),
  );
  // security: sysctls (safe set + allowedUnsafeSysctls) and AppArmor, as upstream's admit handlers.
  pods.lifecycle.addAdmitHandler(sysctlAdmitHandler(config.allowedUnsafeSysctls ?? []));
  pods.lifecycle.addAdmitHandler(appArmorAdmitHandler());
  // Graceful node shutdown (logind inhibitor; src/node/shutdown): an admit handler, and the Ready condition's error.
  const nodeShutdown = createNodeShutdownWiring({
    config,
    nodeName: pods.nodeName,
    lifecycle: pods.lifecycle,
    clock: realClock,
    events: events.recorder,
    rootDir: flags.rootDir,
    metrics,
    onStatusChange: () =>
      void nodeApi
        ?.mode()
        ?.status.sync()
        .catch(() => undefined),
  });
  const imageGC = createImageGCManager({
    cri: allCri, // images in use by any agent's containers are in use
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
    keepImages: () => sandboxImages(cri),
  });

  const abort = new AbortController();
  let resolveReady!: (ok: boolean) => void;
  const runtimeReady = new Promise<boolean>((r) => (resolveReady = r));

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
  components.push({
    name: "pod lifecycle",
    start() {
      log.info(
        `Pods ${kv({ runtimeEndpoint: config.containerRuntimeEndpoint, staticPodPath: config.staticPodPath || undefined, staticPodURL: config.staticPodURL || undefined, cgroupRoot: config.cgroupRoot || "/", podsCgroup: pods.podsCgroup, node: pods.nodeName })}`,
      );
      void (async () => {
        // A probe without the client's own UNAVAILABLE retries: an absent runtime is reported at once.
        const probe = opts.cri ?? criClientFromConfig(config, { retryBudgetMs: 0 });
        const ok = await waitForRuntime(probe, { signal: abort.signal, retryMs: opts.runtimeRetryMs });
        // One runtime, one agent (kuberuntime/owner.ts): refuse when another live bunlet's pods run on it.
        ownerLock ??= holdOwnerLock(flags.rootDir);
        const owned = ok
          ? await checkRuntimeOwner(probe, owner).then(
              () => true,
              (e: Error) => {
                if (e instanceof RuntimeOwnerError) return (failAgent(e), false);
                log.warn(`cannot check which agent owns the runtime's pods; going on ${kv({ error: e.message })}`);
                return true;
              },
            )
          : false;
        // The runtime's cgroup driver must be ours (src/pod/cgroups-driver.ts): a mismatch stops the agent.
        const driverMismatch = ok && owned ? await verifyRuntimeCgroupDriver(probe, configuredCgroupDriver(config.cgroupDriver)) : undefined;
        if (probe !== opts.cri) probe.close();
        if (!ok || !owned) return resolveReady(false);
        if (driverMismatch) return (failAgent(driverMismatch), resolveReady(false));
        try {
          await pods.cgroups?.setup();
          cgroupsReady = true;
          if (pods.cgroups && (config.enforceNodeAllocatable ?? ["pods"]).includes("pods"))
            events.recorder.event(nodeRef(pods.nodeName), "Normal", reasons.SuccessfulNodeAllocatableEnforcement, "Updated Node Allocatable limit across pods");
        } catch (e) {
          log.error(`QoS cgroups setup failed; pods start without them being limited ${kv({ error: (e as Error).message })}`);
        }
        if (abort.signal.aborted) return resolveReady(false);
        await pods.lifecycle.start();
        if (abort.signal.aborted) {
          await pods.lifecycle.stop();
          return resolveReady(false);
        }
        resolveReady(true);
      })().catch((e) => {
        log.error(`pod lifecycle failed to start ${kv({ error: (e as Error).message })}`);
        resolveReady(false);
      });
    },
    async stop() {
      abort.abort();
      await pods.lifecycle.stop();
      pods.cgroups?.close();
      ownerLock?.release();
      directSignal.close();
      cri.close();
    },
  });
  // The eviction manager starts once pods can run: before that there is nothing it could evict or
  // reclaim (both go through the runtime), and kubepods — where the allocatable notifier is armed on
  // the first cycle — does not exist yet.
  let evictionStarted = false;
  let stopped = false;
  components.push({
    name: "eviction manager",
    start() {
      log.info(
        `eviction manager starts once the container runtime is ready ${kv({ kernelMemcgNotification: config.kernelMemcgNotification, evictionTrace: flags.evictionTrace })}`,
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
  });

  // API-server mode (--kubeconfig): TLS bootstrap, registration, node status, lease (src/wire/node-api.ts).
  const nodeApi = flags.kubeconfig
    ? createNodeApiWiring({
        config,
        flags: { ...flags, kubeconfig: flags.kubeconfig },
        nodeName: pods.nodeName,
        cri,
        eviction,
        clock: realClock,
        onPodUpdate: (u) => pods.lifecycle.handleUpdate(u),
        podStatus: (uid) => pods.lifecycle.getPodStatus(uid),
        onPodStatusChange: (fn) => pods.lifecycle.onStatusChange(fn),
        podCleanedUp: (p) => pods.lifecycle.isPodCleanedUp(p),
        events,
        staticPods: () => pods.lifecycle.pods().filter(isStaticPod),
        staticPodTerminating: (n) => pods.lifecycle.isPodTerminatingByFullName(n),
        metrics,
        kubeletStartMs,
        readyErrors: () => [nodeShutdown.manager.shutdownStatus()].filter((e) => e !== undefined),
      })
    : undefined;
  if (nodeApi) components.push(nodeApi);
  components.push(nodeShutdown);
  if (apiObjects) components.push({ name: "api objects", start() {}, stop: () => apiObjects.stop() });

  // Image GC, like eviction, needs the runtime: it starts once pods can run.
  components.push({
    name: "image gc",
    start() {
      void runtimeReady
        .then((ok) => {
          if (ok) return imageGC.start(); // a no-op once imageGC.stop() ran
        })
        .catch((e) => log.error(`image gc failed to start ${kv({ error: (e as Error).message })}`));
    },
    stop: () => imageGC.stop(),
  });
  // podresources gRPC API (upstream ListenAndServePodResources): <rootDir>/pod-resources/kubelet.sock.
  const podResources = createPodResourcesServer(podResourcesSocketPath(flags.rootDir), {
    activePods: () => pods.lifecycle.activePods(),
    pods: () => pods.lifecycle.pods(),
    getEnabled: config.featureGates?.KubeletPodResourcesGet !== false, // beta, on by default
  });
  components.push({ name: "podresources", start: () => podResources.start(), stop: () => podResources.stop() });

  const agent = createAgent(loaded, {
    metrics,
    probeMetrics: kubeletMetrics.probes,
    components,
    configz: opts.configz,
    getPods: () => pods.lifecycle.listPodsForApi(),
    getSummary: () => eviction.summary.summary(),
    getCadvisor: createCadvisorSource({
      activePods: () => pods.lifecycle.activePods(),
      podCgroupPath: pods.podCgroupPath,
      // Not the instrumented client: cAdvisor's reads are not the kubelet's runtime operations.
      cri: rawCri,
      machine: async () => {
        const m = await readMachineInfo(flags.rootDir);
        return { memoryBytes: m.memoryBytes, cpuCores: m.cpus, bootID: m.bootID, machineID: m.machineID, systemUUID: m.systemUUID };
      },
    }),
    nodeName: pods.nodeName,
    getRunningPods: () => runtime.getPods(false),
    healthChecks: pods.lifecycle.healthChecks(), // syncloop, pleg, runtime (docs/edge.md#runtime-outages)
    streaming: createCriStreamingHost({ getPods: () => pods.lifecycle.listPodsForApi(), getRuntimePods: () => runtime.getPods(false), cri }),
    debugEndpoints: { "/debug/eviction": () => eviction.explain() ?? { message: "no eviction cycle has run yet" } },
    servingCertificates: nodeApi?.servingCertificates(),
    // Webhook authn/authz through the node's own client (upstream BuildAuth(nodeName, kubeClient, …)).
    authClient: nodeApi ? apiReviews(() => nodeApi.client()) : undefined,
  });
  failAgent = (e) => {
    log.error(e.message);
    agent.fail(e);
  };
  return { ...agent, pods, eviction, imageGC, cri, runtimeReady, nodeApi };
}
