// v1beta1 defaulting, mirroring pkg/kubelet/apis/config/v1beta1/defaults.go
// (SetDefaults_KubeletConfiguration) and the evictionHard rule of cmd/kubelet/app/server.go
// loadConfigFile. Go semantics matter here: a non-pointer field holding its zero value ("0s",
// 0, "") counts as unset and gets the default, so `syncFrequency: 0s` (as kubeadm writes it)
// becomes 1m0s; a pointer field (healthzPort, imageGC*) keeps an explicit 0.
import { canonicalDuration, parseDuration } from "./duration.ts";
import { API_VERSION, DURATION_FIELDS, KIND, KUBELET_CONFIG_FIELDS, type KubeletConfiguration, type KubeletConfigurationInput } from "./kubelet-config.ts";
import { canonicalQuantity } from "./quantity.ts";

/**
 * Default hard eviction thresholds on Linux (pkg/kubelet/eviction/defaults_linux.go, v1.30+).
 * They apply only when evictionHard is entirely unset; setting any key drops the others unless
 * mergeDefaultEvictionSettings is true (docs/eviction-contract.md#default-hard-thresholds).
 */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = Object.freeze({
  "memory.available": "100Mi",
  "nodefs.available": "10%",
  "nodefs.inodesFree": "5%",
  "imagefs.available": "15%",
  "imagefs.inodesFree": "5%",
});

const isZeroDuration = (d: string | undefined) => d === undefined || parseDuration(d) === 0;
const dur = (d: string | undefined, fallback: string) => (isZeroDuration(d) ? fallback : canonicalDuration(d!));
const keepDur = (d: string | undefined) => (d === undefined ? undefined : canonicalDuration(d));
const str = (s: string | undefined, fallback: string) => (s === undefined || s === "" ? fallback : s);
const num = (n: number | undefined, fallback: number) => (n === undefined || n === 0 ? fallback : n);
const ptr = <T>(v: T | undefined, fallback: T) => (v === undefined ? fallback : v);

/** Applies v1beta1 defaults to a decoded config file (or `{}`), returning a fresh object. */
export function applyDefaults(input: KubeletConfigurationInput): KubeletConfiguration {
  // The fields as written: durations canonical, everything else copied.
  const out = explicitFields(input);
  // Every defaulted field, by area (upstream SetDefaults_KubeletConfiguration, in one function there).
  Object.assign(
    out,
    podSourceDefaults(input),
    serverDefaults(input),
    apiClientDefaults(input),
    runtimeDefaults(input),
    nodeResourceDefaults(input),
    evictionDefaults(input),
    lifecycleDefaults(input),
  );
  // Upstream field order with apiVersion/kind first, unset optionals dropped.
  return inUpstreamOrder(out);
}

type Defaults = Partial<KubeletConfiguration>;

/** The fields the file sets, every duration canonicalised (Go prints "1m0s", not "60s" or "1m"), the rest cloned. */
function explicitFields(c: KubeletConfigurationInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of DURATION_FIELDS) out[k] = keepDur(c[k] as string | undefined);
  for (const k of KUBELET_CONFIG_FIELDS) if (!(k in out) && c[k] !== undefined) out[k] = structuredClone(c[k]);
  return out;
}

/** Where pods come from and how often they are synced. */
function podSourceDefaults(c: KubeletConfigurationInput): Defaults {
  return {
    staticPodPath: c.staticPodPath ?? "",
    podLogsDir: str(c.podLogsDir, "/var/log/pods"),
    syncFrequency: dur(c.syncFrequency, "1m0s"),
    fileCheckFrequency: dur(c.fileCheckFrequency, "20s"),
    httpCheckFrequency: dur(c.httpCheckFrequency, "20s"),
    staticPodURL: c.staticPodURL ?? "",
    staticPodURLHeader: c.staticPodURLHeader ?? {},
    maxPods: num(c.maxPods, 110),
    // nil or negative means "node allocatable pid limit", spelled -1.
    podPidsLimit: c.podPidsLimit === undefined || c.podPidsLimit < 0 ? -1 : c.podPidsLimit,
    resolvConf: ptr(c.resolvConf, "/etc/resolv.conf"),
    configMapAndSecretChangeDetectionStrategy: str(c.configMapAndSecretChangeDetectionStrategy, "Watch"),
  };
}

/** The kubelet's HTTP server: ports, authentication and authorization, the debugging handlers. */
function serverDefaults(c: KubeletConfigurationInput): Defaults {
  return {
    enableServer: ptr(c.enableServer, true),
    address: str(c.address, "0.0.0.0"),
    port: num(c.port, 10250),
    readOnlyPort: c.readOnlyPort ?? 0,
    authentication: {
      x509: { ...(c.authentication?.x509 ?? {}) },
      webhook: {
        enabled: ptr(c.authentication?.webhook?.enabled, true),
        cacheTTL: dur(c.authentication?.webhook?.cacheTTL, "2m0s"),
      },
      anonymous: { enabled: ptr(c.authentication?.anonymous?.enabled, false) },
    },
    authorization: {
      mode: str(c.authorization?.mode, "Webhook"),
      webhook: {
        cacheAuthorizedTTL: dur(c.authorization?.webhook?.cacheAuthorizedTTL, "5m0s"),
        cacheUnauthorizedTTL: dur(c.authorization?.webhook?.cacheUnauthorizedTTL, "30s"),
      },
    },
    enableDebuggingHandlers: ptr(c.enableDebuggingHandlers, true),
    healthzPort: ptr(c.healthzPort, 10248),
    healthzBindAddress: str(c.healthzBindAddress, "127.0.0.1"),
    streamingConnectionIdleTimeout: dur(c.streamingConnectionIdleTimeout, "4h0m0s"),
    enableSystemLogHandler: ptr(c.enableSystemLogHandler, true),
    enableSystemLogQuery: ptr(c.enableSystemLogQuery, false),
    enableProfilingHandler: ptr(c.enableProfilingHandler, true),
    enableDebugFlagsHandler: ptr(c.enableDebugFlagsHandler, true),
  };
}

/** Talking to the API server and registries: rates, the node's status and lease. */
function apiClientDefaults(c: KubeletConfigurationInput): Defaults {
  const nodeStatusReportFrequency = !isZeroDuration(c.nodeStatusReportFrequency)
    ? canonicalDuration(c.nodeStatusReportFrequency!)
    : // Backward compatibility: an explicit update frequency also becomes the report frequency.
      !isZeroDuration(c.nodeStatusUpdateFrequency)
      ? canonicalDuration(c.nodeStatusUpdateFrequency!)
      : "5m0s";
  return {
    registryPullQPS: ptr(c.registryPullQPS, 5),
    registryBurst: num(c.registryBurst, 10),
    eventRecordQPS: ptr(c.eventRecordQPS, 50),
    eventBurst: num(c.eventBurst, 100),
    nodeStatusReportFrequency,
    nodeStatusUpdateFrequency: dur(c.nodeStatusUpdateFrequency, "10s"),
    nodeLeaseDurationSeconds: num(c.nodeLeaseDurationSeconds, 40),
    nodeStatusMaxImages: ptr(c.nodeStatusMaxImages, 50),
    contentType: str(c.contentType, "application/vnd.kubernetes.protobuf"),
    kubeAPIQPS: ptr(c.kubeAPIQPS, 50),
    kubeAPIBurst: num(c.kubeAPIBurst, 100),
    registerNode: ptr(c.registerNode, true),
  };
}

/** The container runtime: its endpoints, images and their GC, container logs. */
function runtimeDefaults(c: KubeletConfigurationInput): Defaults {
  return {
    imageMinimumGCAge: dur(c.imageMinimumGCAge, "2m0s"),
    imageMaximumGCAge: dur(c.imageMaximumGCAge, "0s"),
    imageGCHighThresholdPercent: ptr(c.imageGCHighThresholdPercent, 85),
    imageGCLowThresholdPercent: ptr(c.imageGCLowThresholdPercent, 80),
    volumeStatsAggPeriod: dur(c.volumeStatsAggPeriod, "1m0s"),
    runtimeRequestTimeout: dur(c.runtimeRequestTimeout, "2m0s"),
    // Serial pulls unless the user asked for ≥ 2 parallel pulls.
    serializeImagePulls: ptr(c.serializeImagePulls, c.maxParallelImagePulls === undefined || c.maxParallelImagePulls < 2),
    containerLogMaxSize: str(c.containerLogMaxSize, "10Mi"),
    containerLogMaxFiles: ptr(c.containerLogMaxFiles, 5),
    containerLogMaxWorkers: ptr(c.containerLogMaxWorkers, 1),
    containerLogMonitorInterval: c.containerLogMonitorInterval === undefined ? "10s" : canonicalDuration(c.containerLogMonitorInterval),
    containerRuntimeEndpoint: str(c.containerRuntimeEndpoint, "unix:///run/containerd/containerd.sock"),
    imageServiceEndpoint: c.imageServiceEndpoint ?? "",
  };
}

/** The node's resources: cgroups, the resource managers, reservations, swap, networking bits, features. */
function nodeResourceDefaults(c: KubeletConfigurationInput): Defaults {
  return {
    oomScoreAdj: ptr(c.oomScoreAdj, -999),
    cgroupRoot: c.cgroupRoot ?? "",
    cgroupsPerQOS: ptr(c.cgroupsPerQOS, true),
    cgroupDriver: str(c.cgroupDriver, "cgroupfs"),
    cpuManagerPolicy: str(c.cpuManagerPolicy, "none"),
    cpuManagerReconcilePeriod: dur(c.cpuManagerReconcilePeriod, "10s"),
    memoryManagerPolicy: str(c.memoryManagerPolicy, "None"),
    topologyManagerPolicy: str(c.topologyManagerPolicy, "none"),
    topologyManagerScope: str(c.topologyManagerScope, "container"),
    hairpinMode: str(c.hairpinMode, "promiscuous-bridge"),
    cpuCFSQuota: ptr(c.cpuCFSQuota, true),
    cpuCFSQuotaPeriod: c.cpuCFSQuotaPeriod === undefined ? "100ms" : canonicalDuration(c.cpuCFSQuotaPeriod),
    maxOpenFiles: num(c.maxOpenFiles, 1000000),
    enableControllerAttachDetach: ptr(c.enableControllerAttachDetach, true),
    makeIPTablesUtilChains: ptr(c.makeIPTablesUtilChains, true),
    iptablesMasqueradeBit: ptr(c.iptablesMasqueradeBit, 14),
    iptablesDropBit: ptr(c.iptablesDropBit, 15),
    featureGates: { ...(c.featureGates ?? {}) },
    failSwapOn: ptr(c.failSwapOn, true),
    memorySwap: { ...(c.memorySwap ?? {}) },
    systemReserved: { ...(c.systemReserved ?? {}) },
    kubeReserved: { ...(c.kubeReserved ?? {}) },
    enforceNodeAllocatable: c.enforceNodeAllocatable === undefined ? ["pods"] : [...c.enforceNodeAllocatable],
    volumePluginDir: str(c.volumePluginDir, "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/"),
    seccompDefault: ptr(c.seccompDefault, false),
    memoryThrottlingFactor: ptr(c.memoryThrottlingFactor, 0.9),
    failCgroupV1: ptr(c.failCgroupV1, false),
    schedulingNice: c.schedulingNice ?? 0,
    autonomy: c.autonomy ?? false,
    autonomyCacheSecrets: c.autonomyCacheSecrets ?? true,
    autonomyCacheMaxBytes: c.autonomyCacheMaxBytes ?? 64 * 1024 * 1024,
    imageImportPath: c.imageImportPath ?? "",
  };
}

/** Eviction: the default hard thresholds apply only when evictionHard is unset (loadConfigFile's rule). */
function evictionDefaults(c: KubeletConfigurationInput): Defaults {
  return {
    evictionHard: c.evictionHard === undefined ? { ...DEFAULT_EVICTION_HARD } : { ...c.evictionHard },
    evictionSoft: { ...(c.evictionSoft ?? {}) },
    evictionSoftGracePeriod: { ...(c.evictionSoftGracePeriod ?? {}) },
    evictionPressureTransitionPeriod: dur(c.evictionPressureTransitionPeriod, "5m0s"),
    evictionMaxPodGracePeriod: c.evictionMaxPodGracePeriod ?? 0,
    evictionMinimumReclaim: { ...(c.evictionMinimumReclaim ?? {}) },
    mergeDefaultEvictionSettings: ptr(c.mergeDefaultEvictionSettings, false),
    kernelMemcgNotification: c.kernelMemcgNotification ?? false,
    localStorageCapacityIsolation: ptr(c.localStorageCapacityIsolation, true),
    evictStaticPods: c.evictStaticPods ?? false,
  };
}

/** The process's life: logging, shutdown, restart back-off. */
function lifecycleDefaults(c: KubeletConfigurationInput): Defaults {
  return {
    logging: defaultLogging(c.logging),
    shutdownGracePeriod: dur(c.shutdownGracePeriod, "0s"),
    shutdownGracePeriodCriticalPods: dur(c.shutdownGracePeriodCriticalPods, "0s"),
    crashLoopBackOff:
      c.crashLoopBackOff?.maxContainerRestartPeriod === undefined
        ? {}
        : { maxContainerRestartPeriod: canonicalDuration(c.crashLoopBackOff.maxContainerRestartPeriod) },
  };
}

/** apiVersion and kind first, then the fields in upstream order (KUBELET_CONFIG_FIELDS), the unset ones dropped. */
function inUpstreamOrder(out: Record<string, unknown>): KubeletConfiguration {
  const ordered: Record<string, unknown> = { apiVersion: API_VERSION, kind: KIND };
  for (const k of KUBELET_CONFIG_FIELDS) {
    if (k === "apiVersion" || k === "kind") continue;
    if (out[k] !== undefined) ordered[k] = out[k];
  }
  return ordered as KubeletConfiguration;
}

/** logsapi.SetRecommendedLoggingConfiguration: text format, 5s flush, zero info buffers. */
function defaultLogging(l: KubeletConfigurationInput["logging"]): KubeletConfiguration["logging"] {
  const flush = l?.flushFrequency;
  const flushZero = flush === undefined || (typeof flush === "number" ? flush === 0 : parseDuration(flush) === 0);
  const buf = (v: string | number | undefined) => (v === undefined ? "0" : canonicalQuantity(String(v)));
  const out: KubeletConfiguration["logging"] = {
    format: str(l?.format, "text"),
    flushFrequency: flushZero ? "5s" : typeof flush === "string" ? canonicalDuration(flush) : flush!,
    verbosity: l?.verbosity ?? 0,
    ...(l?.vmodule === undefined ? {} : { vmodule: l.vmodule.map((v) => ({ ...v })) }),
    options: {
      text: { ...l?.options?.text, infoBufferSize: buf(l?.options?.text?.infoBufferSize) },
      json: { ...l?.options?.json, infoBufferSize: buf(l?.options?.json?.infoBufferSize) },
    },
  };
  return out;
}

/** The configuration a kubelet started with no config file and no flags would use. */
export function defaultKubeletConfiguration(): KubeletConfiguration {
  return applyDefaults({});
}
