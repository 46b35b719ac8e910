// API-server mode of the agent (upstream: run() building kubeClient/heartbeatClient after the TLS
// bootstrap, then Kubelet.Run starting syncNodeStatus and the node lease controller):
//   --kubeconfig (+ --bootstrap-kubeconfig) → client identity → main client (kubeAPIQPS/Burst)
//   + heartbeat client (no rate limit, timeout = min(nodeStatusUpdateFrequency, lease duration))
//   → node registration/status + lease, fed by the CRI runtime, the eviction manager and the machine.
// A valid kubeconfig is loaded in start() (a bad one fails the start, as upstream exits); a TLS
// bootstrap that waits for approval runs in the background, so static pods run meanwhile.
import type { Clock } from "../clock.ts";
import type { KubeletConfiguration } from "../config/kubelet-config.ts";
import { durationMs } from "../config/duration.ts";
import type { CriClient } from "../cri/client.ts";
import type { EvictionWiring } from "./eviction.ts";
import { createKubeClient, loadKubeconfig, reconnectObserver, tokenBucket, type KubeClient, type Node, type RestConfig } from "../kube/index.ts";
import {
  createCertRotation,
  createServerCertManager,
  bootstrapClientCert,
  isClientConfigStillValid,
  type CertRotation,
  type ServerCertManager,
} from "../kube/bootstrap/index.ts";
import { usesServerTLSBootstrap } from "../server/serving.ts";
import { kv, log } from "../log.ts";
import {
  createNodeApiMode,
  goArch,
  nodeAddresses,
  parseNodeIPs,
  readMachineInfo,
  runtimeReadiness,
  type DevicePluginResources,
  type MachineInfo,
  type NodeApiMode,
} from "../node/index.ts";
import { kubeletVersion } from "../node/version.ts";
import { nodeNameFrom } from "../pod/setup.ts";
import { createApiSource, type ApiPodSource } from "../pod/sources/api.ts";
import type { PodUpdate } from "../pod/sources/update.ts";
import { createApiStatusSyncer, type ApiStatusSyncer } from "../pod/api-status.ts";
import type { Pod, PodStatus } from "../pod/types.ts";
import { isMirrorPod } from "../pod/pod-like.ts";
import { createMirrorPodManager, type MirrorPodManager } from "../pod/mirror/index.ts";
import { createOfflineStart, nodeForCache, type AutonomyStore, type OfflineStart } from "../pod/autonomy/index.ts";
import { apiEventSink, type EventBroadcaster } from "../events/index.ts";
import type { Registry } from "../server/metrics.ts";
import { clientCertificateMetrics, nodeStartupMetrics, readBootTimeMs, restClientMetrics, serverCertificateMetrics } from "../metrics/index.ts";

export interface NodeApiWiringInput {
  config: KubeletConfiguration;
  flags: {
    kubeconfig: string;
    bootstrapKubeconfig?: string;
    certDir: string;
    rootDir: string;
    nodeIP?: string;
    hostnameOverride?: string;
    nodeLabels: Record<string, string>;
  };
  nodeName: string;
  cri: CriClient;
  eviction: Pick<EvictionWiring, "manager" | "evictionConfig">;
  clock: Clock;
  /** Where the API pod source delivers (the lifecycle's handleUpdate, source "api"). */
  onPodUpdate?: (u: PodUpdate) => void;
  /** The status the lifecycle computed for a pod (sent to pods/status). */
  podStatus?: (uid: string) => PodStatus | undefined;
  /** Subscribes to pod status changes (the lifecycle's onStatusChange): each is PATCHed at once. */
  onPodStatusChange?: (fn: (uid: string) => void) => () => void;
  podCleanedUp?: (pod: Pod) => boolean;
  /** Events: written to the API once the client exists (node condition events recorded here). */
  events?: EventBroadcaster;
  /** Static pods (file/http) the pod manager holds, mirrored in the API. */
  staticPods?: () => Pod[];
  /** A static pod of this full name is still stopping (its mirror pod stays meanwhile). */
  staticPodTerminating?: (fullName: string) => boolean;
  /** The agent's /metrics registry: rest_client_*, kubelet_node_startup_*, certificate manager series. */
  metrics?: Registry;
  /** When the kubelet started (epoch ms), for kubelet_node_startup_pre_*. */
  kubeletStartMs?: number;
  /** Further reasons the node is not Ready, after the runtime's (graceful node shutdown's "node is shutting down"). */
  readyErrors?: () => string[];
  /** Called once the main client exists (the service informer starts on it). */
  onClient?: () => void;
  /** Node autonomy's cache: the API pods stored as they change, run from it when the API server is unreachable at start. */
  autonomy?: AutonomyStore;
  /** The device plugins' resources for the node status (src/pod/devicemanager). */
  devicePlugins?: () => DevicePluginResources;
  /** The attachable volumes pods use, for the node status (the CSI volume manager). */
  volumesInUse?: () => string[];
  /** The volumes a node status update that succeeded lists in use (the CSI volume manager's MarkVolumesAsReportedInUse). */
  markVolumesReportedInUse?: (names: readonly string[]) => void;
}

export interface NodeApiWiring {
  name: string;
  start(): Promise<void>;
  stop(): void;
  /** The node side once running (after a bootstrap, later than start()). */
  mode(): NodeApiMode | undefined;
  /** The rate-limited client for the pod sources and status manager to come. */
  client(): KubeClient | undefined;
  /** serverTLSBootstrap: the serving certificate's manager (its pair is loaded by start()). */
  servingCertificates(): ServerCertManager | undefined;
  /** Node autonomy: the Node last stored, for admission while the API server is unreachable. */
  cachedNode(): Node | undefined;
}

export function createNodeApiWiring(input: NodeApiWiringInput): NodeApiWiring {
  const { config, flags, clock } = input;
  const abort = new AbortController();
  let mode: NodeApiMode | undefined;
  let main: KubeClient | undefined;
  let rotation: CertRotation | undefined;
  let podSource: ApiPodSource | undefined;
  let statusSyncer: ApiStatusSyncer | undefined;
  let stopStatusHook: (() => void) | undefined;
  let mirrors: MirrorPodManager | undefined;
  let offline: OfflineStart | undefined;
  // Upstream registers these with the API client (client-go's restclient metrics, the startup tracker)
  // and the serving-certificate manager; the client certificate's series come with rotation, below.
  const observer = input.metrics ? restClientMetrics(input.metrics) : undefined;
  const startup = input.metrics
    ? nodeStartupMetrics(input.metrics, { nowMs: () => clock.now(), kubeletStartMs: input.kubeletStartMs ?? clock.now(), bootTimeMs: readBootTimeMs() })
    : undefined;
  // serverTLSBootstrap: the serving certificate is requested from the API (kubelet-serving signer).
  let nodeAddressList: ReturnType<typeof nodeAddresses> = [];
  const serverMetricsRef: { m?: ReturnType<typeof serverCertificateMetrics> } = {};
  const serverCerts: ServerCertManager | undefined = usesServerTLSBootstrap(config)
    ? createServerCertManager({
        certDir: flags.certDir,
        nodeName: input.nodeName,
        clock,
        addresses: () => nodeAddressList,
        allowDnsOnly: config.featureGates?.AllowDNSOnlyNodeCSR === true,
        onRenewError: () => serverMetricsRef.m?.renewError(),
        onRotated: (age) => serverMetricsRef.m?.rotated(age),
      })
    : undefined;
  if (input.metrics)
    serverMetricsRef.m = serverCertificateMetrics(input.metrics, { notAfterMs: () => serverCerts?.current()?.notAfterMs, nowMs: () => clock.now() });

  // The machine's facts are static; read while the client identity is loaded or bootstrapped, they
  // are ready when the registration needs them (start → Node Ready, scripts/bench/join-ready.ts).
  let machine: Promise<MachineInfo> | undefined;
  const readMachine = (): Promise<MachineInfo> => {
    const p = (machine ??= readMachineInfo(flags.rootDir));
    p.catch(() => {
      if (machine === p) machine = undefined; // read again next time
    });
    return p;
  };

  /** With the client identity: the clients, the node's registration, status and lease, the pod sync, certificate rotation. */
  function run(rest: RestConfig): void {
    // The rate-limited main client, and the heartbeat's (no rate limit, a timeout within the lease).
    const updateMs = durationMs(config.nodeStatusUpdateFrequency);
    // Whichever request gets through first after an outage (the heartbeat's, a reflector's), the pod
    // list/watch then retries at once rather than at the end of its back-off (up to 30 s).
    const retryPods = () => podSource?.retryNow();
    const client = (main = createKubeClient(rest, {
      clock,
      rateLimiter: tokenBucket(config.kubeAPIQPS, config.kubeAPIBurst, clock),
      userAgent: `bunlet/${kubeletVersion()}`,
      observer: reconnectObserver(observer, retryPods),
    }));
    const heartbeat = createKubeClient(rest, {
      clock,
      timeoutMs: Math.min(updateMs, config.nodeLeaseDurationSeconds * 1000),
      userAgent: `bunlet/${kubeletVersion()}`,
      observer: reconnectObserver(observer, retryPods),
    });
    // The node's registration, status and lease, over the heartbeat client.
    const node = (mode = createMode(heartbeat, updateMs, client));
    if (abort.signal.aborted) return;
    input.events?.startRecordingToSink(apiEventSink(client));
    input.onClient?.();
    serverCerts?.start(client);
    node.start();
    // The API's pods in, their statuses out, the static pods mirrored.
    if (input.onPodUpdate) startPodSync(client, node, input.onPodUpdate);
    // rotateCertificates: renew the client certificate (kept under --cert-dir) before it expires.
    if (config.rotateCertificates && rest.certFile) startClientCertRotation(heartbeat, [client, heartbeat]);
  }

  /** The node side (upstream syncNodeStatus and the node lease controller), fed by the CRI runtime, the eviction manager and the machine. */
  function createMode(heartbeat: KubeClient, updateMs: number, watchClient: KubeClient): NodeApiMode {
    const hostname = nodeNameFrom(flags.hostnameOverride);
    // A --node-ip that does not parse fails the start; one validateNodeIP refuses fails each status update (logged there).
    parseNodeIPs(flags.nodeIP);
    // The serving certificate follows the addresses last set (upstream: the last observed ones).
    const addresses = () => (nodeAddressList = nodeAddresses(hostname, flags.nodeIP));
    try {
      addresses();
    } catch {}
    return createNodeApiMode(
      {
        registration: {
          nodeName: input.nodeName,
          hostname,
          os: "linux",
          arch: goArch(),
          nodeLabels: flags.nodeLabels,
          registerWithTaints: config.registerWithTaints ?? [],
          providerID: config.providerID || undefined,
        },
        registerNode: config.registerNode,
        kubeletVersion: kubeletVersion(),
        kubeletPort: config.port,
        maxPods: config.maxPods,
        maxImages: config.nodeStatusMaxImages,
        systemReserved: config.systemReserved,
        kubeReserved: config.kubeReserved,
        updateFrequencyMs: updateMs,
        reportFrequencyMs: durationMs(config.nodeStatusReportFrequency),
        leaseDurationSeconds: config.nodeLeaseDurationSeconds,
        startup,
      },
      {
        machine: readMachine,
        addresses,
        runtime: async () => {
          const r = await runtimeReadiness(input.cri);
          const more = input.readyErrors?.() ?? [];
          return more.length ? { ...r, errors: [...r.errors, ...more] } : r;
        },
        images: async () => (await input.cri.listImages()).map((i) => ({ names: [...i.repoDigests, ...i.repoTags], sizeBytes: Number(i.size) })),
        pressure: () => input.eviction.manager.nodeConditions(),
        hardEvictionThresholds: input.eviction.evictionConfig.thresholds.filter((t) => t.gracePeriodMs === 0),
        devicePlugins: input.devicePlugins,
        volumesInUse: input.volumesInUse,
        markVolumesReportedInUse: input.markVolumesReportedInUse,
      },
      heartbeat,
      clock,
      input.events?.recorder,
      watchClient,
    );
  }

  /** The API pod source (mirror pods kept apart), the static pods' mirror pods, and each pod status PATCHed as it changes. */
  function startPodSync(client: KubeClient, node: NodeApiMode, onUpdate: (u: PodUpdate) => void): void {
    let apiPods: Pod[] = [];
    let mirrorPods: Pod[] = [];
    if (input.staticPods) {
      mirrors = createMirrorPodManager({
        client,
        clock,
        staticPods: input.staticPods,
        mirrorPods: () => mirrorPods,
        node: () => node.status.node(),
        staticPodTerminating: input.staticPodTerminating,
      });
      mirrors.start();
    }
    // Node autonomy: the cached pods run when the first list fails; each list's pods are stored.
    const store = input.autonomy;
    if (store) {
      offline = createOfflineStart({
        store,
        clock,
        deliver: (pods) => {
          apiPods = pods;
          onUpdate({ op: "ADD", pods, source: "api" });
        },
      });
      offline.start();
    }
    const storePods = (objects: unknown[]) => {
      store?.putPods(objects);
      const n = node.status.node();
      if (n) store?.putNode(nodeForCache(n));
    };
    // Mirror pods are the API's view of our static pods, never pods to run (upstream pod manager).
    podSource = createApiSource({
      client,
      nodeName: input.nodeName,
      clock,
      onObjects: store ? storePods : undefined,
      onListFailed: (e) => offline?.unreachable(e.message),
      onUpdate: (u) => {
        offline?.listed(u.pods);
        mirrorPods = u.pods.filter(isMirrorPod);
        apiPods = u.pods.filter((p) => !isMirrorPod(p));
        onUpdate({ ...u, pods: apiPods });
        void mirrors?.syncOnce();
        // A mirror may have just appeared: its static pod's status goes to it without waiting for the reconcile.
        if (mirrorPods.length > 0) for (const p of input.staticPods?.() ?? []) statusSyncer?.podStatusChanged(p.metadata.uid);
      },
    });
    podSource.start();
    if (input.podStatus) {
      const syncer = (statusSyncer = createApiStatusSyncer({
        client,
        clock,
        pods: () => apiPods,
        status: input.podStatus,
        cleanedUp: input.podCleanedUp,
        staticPods: input.staticPods,
        mirrorOf: (p) => mirrors?.mirrorOf(p),
      }));
      syncer.start();
      const off = input.onPodStatusChange?.((uid) => syncer.podStatusChanged(uid));
      if (off) stopStatusHook = off;
    }
  }

  /** The client certificate renewed through the heartbeat client before it expires, every client switched to the new one. */
  function startClientCertRotation(heartbeat: KubeClient, clients: KubeClient[]): void {
    const certMetrics = input.metrics
      ? clientCertificateMetrics(input.metrics, { notAfterMs: () => rotation?.notAfter(), nowMs: () => clock.now() })
      : undefined;
    rotation = createCertRotation({
      client: heartbeat,
      certDir: flags.certDir,
      nodeName: input.nodeName,
      clock,
      onRotated: (c, k) => {
        for (const x of clients) x.setClientCertificate(c, k);
      },
      onRenewError: () => certMetrics?.renewError(),
    });
    rotation.start().catch((e) => log.error(`client certificate rotation not started ${kv({ certDir: flags.certDir, error: (e as Error).message })}`));
  }

  return {
    name: "api server mode",
    async start() {
      void readMachine();
      await input.autonomy?.load().catch((e) => log.error(`autonomy cache not read ${kv({ dir: input.autonomy?.dir, error: (e as Error).message })}`));
      await serverCerts?.load();
      if ((await isClientConfigStillValid(flags.kubeconfig, clock.now())) || !flags.bootstrapKubeconfig) {
        run(await loadKubeconfig(flags.kubeconfig));
        return;
      }
      const opts = {
        kubeconfigPath: flags.kubeconfig,
        bootstrapKubeconfigPath: flags.bootstrapKubeconfig,
        certDir: flags.certDir,
        nodeName: input.nodeName,
        clock,
        signal: abort.signal,
        observer,
      };
      void bootstrapClientCert(opts)
        .then(async () => run(await loadKubeconfig(flags.kubeconfig)))
        .catch((e) => {
          if (!abort.signal.aborted)
            log.error(
              `TLS bootstrap failed; the node stays unregistered, static pods keep running ${kv({ bootstrapKubeconfig: flags.bootstrapKubeconfig, error: (e as Error).message })}`,
            );
        });
    },
    stop() {
      abort.abort();
      mode?.stop();
      rotation?.stop();
      serverCerts?.stop();
      podSource?.stop();
      stopStatusHook?.();
      statusSyncer?.stop();
      mirrors?.stop();
      offline?.stop();
      void input.autonomy?.flush();
    },
    mode: () => mode,
    client: () => main,
    servingCertificates: () => serverCerts,
    cachedNode: () => input.autonomy?.node() as Node | undefined,
  };
}
