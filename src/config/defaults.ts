// v1beta1 defaulting, mirroring pkg/kubelet/apis/config/v1beta1/defaults.go
// (SetDefaults_KubeletConfiguration) and the evictionHard rule of cmd/kubelet/app/server.go
// loadConfigFile. Go semantics matter here: a non-pointer field holding its zero value ("0s",
// 0, "") counts as unset and gets the default, so `syncFrequency: 0s` (as kubeadm writes it)
// becomes 1m0s; a pointer field (healthzPort, imageGC*) keeps an explicit 0.
import { canonicalDuration, parseDuration } from "./duration.ts";
import {
  API_VERSION,
  DURATION_FIELDS,
  KIND,
  KUBELET_CONFIG_FIELDS,
  type KubeletConfiguration,
  type KubeletConfigurationInput,
} from "./kubelet-config.ts";
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
  const c = input;
  const out: Record<string, unknown> = {};
  // Canonicalise every duration the user wrote (Go prints "1m0s", not "60s" or "1m").
  for (const k of DURATION_FIELDS) out[k] = keepDur(c[k] as string | undefined);
  for (const k of KUBELET_CONFIG_FIELDS) if (!(k in out) && c[k] !== undefined) out[k] = structuredClone(c[k]);

  const nodeStatusReportFrequency = !isZeroDuration(c.nodeStatusReportFrequency)
    ? canonicalDuration(c.nodeStatusReportFrequency!)
    : // Backward compatibility: an explicit update frequency also becomes the report frequency.
      !isZeroDuration(c.nodeStatusUpdateFrequency)
      ? canonicalDuration(c.nodeStatusUpdateFrequency!)
      : "5m0s";

  const defaults: Partial<KubeletConfiguration> = {
    enableServer: ptr(c.enableServer, true),
    staticPodPath: c.staticPodPath ?? "",
    podLogsDir: str(c.podLogsDir, "/var/log/pods"),
    syncFrequency: dur(c.syncFrequency, "1m0s"),
    fileCheckFrequency: dur(c.fileCheckFrequency, "20s"),
    httpCheckFrequency: dur(c.httpCheckFrequency, "20s"),
    staticPodURL: c.staticPodURL ?? "",
    staticPodURLHeader: c.staticPodURLHeader ?? {},
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
    registryPullQPS: ptr(c.registryPullQPS, 5),
    registryBurst: num(c.registryBurst, 10),
    eventRecordQPS: ptr(c.eventRecordQPS, 50),
    eventBurst: num(c.eventBurst, 100),
    enableDebuggingHandlers: ptr(c.enableDebuggingHandlers, true),
    healthzPort: ptr(c.healthzPort, 10248),
    healthzBindAddress: str(c.healthzBindAddress, "127.0.0.1"),
    oomScoreAdj: ptr(c.oomScoreAdj, -999),
    streamingConnectionIdleTimeout: dur(c.streamingConnectionIdleTimeout, "4h0m0s"),
    nodeStatusReportFrequency,
    nodeStatusUpdateFrequency: dur(c.nodeStatusUpdateFrequency, "10s"),
    nodeLeaseDurationSeconds: num(c.nodeLeaseDurationSeconds, 40),
    imageMinimumGCAge: dur(c.imageMinimumGCAge, "2m0s"),
    imageMaximumGCAge: dur(c.imageMaximumGCAge, "0s"),
    imageGCHighThresholdPercent: ptr(c.imageGCHighThresholdPercent, 85),
    imageGCLowThresholdPercent: ptr(c.imageGCLowThresholdPercent, 80),
    volumeStatsAggPeriod: dur(c.volumeStatsAggPeriod, "1m0s"),
    cgroupRoot: c.cgroupRoot ?? "",
    cgroupsPerQOS: ptr(c.cgroupsPerQOS, true),
    cgroupDriver: str(c.cgroupDriver, "cgroupfs"),
    cpuManagerPolicy: str(c.cpuManagerPolicy, "none"),
    cpuManagerReconcilePeriod: dur(c.cpuManagerReconcilePeriod, "10s"),
    memoryManagerPolicy: str(c.memoryManagerPolicy, "None"),
    topologyManagerPolicy: str(c.topologyManagerPolicy, "none"),
    topologyManagerScope: str(c.topologyManagerScope, "container"),
    runtimeRequestTimeout: dur(c.runtimeRequestTimeout, "2m0s"),
    hairpinMode: str(c.hairpinMode, "promiscuous-bridge"),
    maxPods: num(c.maxPods, 110),
    // nil or negative means "node allocatable pid limit", spelled -1.
    podPidsLimit: c.podPidsLimit === undefined || c.podPidsLimit < 0 ? -1 : c.podPidsLimit,
    resolvConf: ptr(c.resolvConf, "/etc/resolv.conf"),
    cpuCFSQuota: ptr(c.cpuCFSQuota, true),
    cpuCFSQuotaPeriod: c.cpuCFSQuotaPeriod === undefined ? "100ms" : canonicalDuration(c.cpuCFSQuotaPeriod),
    nodeStatusMaxImages: ptr(c.nodeStatusMaxImages, 50),
    maxOpenFiles: num(c.maxOpenFiles, 1000000),
    contentType: str(c.contentType, "application/vnd.kubernetes.protobuf"),
    kubeAPIQPS: ptr(c.kubeAPIQPS, 50),
    kubeAPIBurst: num(c.kubeAPIBurst, 100),
    // Serial pulls unless the user asked for ≥ 2 parallel pulls.
    serializeImagePulls: ptr(c.serializeImagePulls, c.maxParallelImagePulls === undefined || c.maxParallelImagePulls < 2),
    evictionHard: c.evictionHard === undefined ? { ...DEFAULT_EVICTION_HARD } : { ...c.evictionHard },
    evictionSoft: { ...(c.evictionSoft ?? {}) },
    evictionSoftGracePeriod: { ...(c.evictionSoftGracePeriod ?? {}) },
    evictionPressureTransitionPeriod: dur(c.evictionPressureTransitionPeriod, "5m0s"),
    evictionMaxPodGracePeriod: c.evictionMaxPodGracePeriod ?? 0,
    evictionMinimumReclaim: { ...(c.evictionMinimumReclaim ?? {}) },
    mergeDefaultEvictionSettings: ptr(c.mergeDefaultEvictionSettings, false),
    enableControllerAttachDetach: ptr(c.enableControllerAttachDetach, true),
    makeIPTablesUtilChains: ptr(c.makeIPTablesUtilChains, true),
    iptablesMasqueradeBit: ptr(c.iptablesMasqueradeBit, 14),
    iptablesDropBit: ptr(c.iptablesDropBit, 15),
    featureGates: { ...(c.featureGates ?? {}) },
    failSwapOn: ptr(c.failSwapOn, true),
    memorySwap: { ...(c.memorySwap ?? {}) },
    containerLogMaxSize: str(c.containerLogMaxSize, "10Mi"),
    containerLogMaxFiles: ptr(c.containerLogMaxFiles, 5),
    containerLogMaxWorkers: ptr(c.containerLogMaxWorkers, 1),
    containerLogMonitorInterval: c.containerLogMonitorInterval === undefined ? "10s" : canonicalDuration(c.containerLogMonitorInterval),
    configMapAndSecretChangeDetectionStrategy: str(c.configMapAndSecretChangeDetectionStrategy, "Watch"),
    systemReserved: { ...(c.systemReserved ?? {}) },
    kubeReserved: { ...(c.kubeReserved ?? {}) },
    enforceNodeAllocatable: c.enforceNodeAllocatable === undefined ? ["pods"] : [...c.enforceNodeAllocatable],
    volumePluginDir: str(c.volumePluginDir, "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/"),
    kernelMemcgNotification: c.kernelMemcgNotification ?? false,
    logging: defaultLogging(c.logging),
    enableSystemLogHandler: ptr(c.enableSystemLogHandler, true),
    enableSystemLogQuery: ptr(c.enableSystemLogQuery, false),
    shutdownGracePeriod: dur(c.shutdownGracePeriod, "0s"),
    shutdownGracePeriodCriticalPods: dur(c.shutdownGracePeriodCriticalPods, "0s"),
    crashLoopBackOff:
      c.crashLoopBackOff?.maxContainerRestartPeriod === undefined
        ? {}
        : { maxContainerRestartPeriod: canonicalDuration(c.crashLoopBackOff.maxContainerRestartPeriod) },
    enableProfilingHandler: ptr(c.enableProfilingHandler, true),
    enableDebugFlagsHandler: ptr(c.enableDebugFlagsHandler, true),
    seccompDefault: ptr(c.seccompDefault, false),
    memoryThrottlingFactor: ptr(c.memoryThrottlingFactor, 0.9),
    registerNode: ptr(c.registerNode, true),
    localStorageCapacityIsolation: ptr(c.localStorageCapacityIsolation, true),
    containerRuntimeEndpoint: str(c.containerRuntimeEndpoint, "unix:///run/containerd/containerd.sock"),
    imageServiceEndpoint: c.imageServiceEndpoint ?? "",
    failCgroupV1: ptr(c.failCgroupV1, false),
    evictStaticPods: c.evictStaticPods ?? false,
    schedulingNice: c.schedulingNice ?? 0,
  };
  Object.assign(out, defaults);

  // Rebuild in upstream field order with apiVersion/kind first, dropping unset optionals.
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
