// KubeletConfiguration (kubelet.config.k8s.io/v1beta1): the zod schema of the config file, with
// every upstream field (staging/src/k8s.io/kubelet/config/v1beta1/types.go, v1.31–v1.35), in
// upstream order (the order /configz prints). Objects are strict: an unknown key is reported as
// upstream's strict decoder does, and load.ts then falls back to lenient decoding with a
// warning, as the kubelet does. Defaults live in defaults.ts.
import { z } from "zod";
import { goBool, goDuration, goFloat64, goInt32, goInt64, goQuantity, goString, goStringList, goStringMap, goUint32 } from "./go-types.ts";

export const API_GROUP = "kubelet.config.k8s.io";
export const API_VERSION = "kubelet.config.k8s.io/v1beta1";
export const KIND = "KubeletConfiguration";

const strict = <T extends z.ZodRawShape>(shape: T, what: string) => z.strictObject(shape, { error: `must be an object (${what})` });

const authenticationSchema = strict(
  {
    x509: strict({ clientCAFile: goString().optional() }, "KubeletX509Authentication").optional(),
    webhook: strict({ enabled: goBool().optional(), cacheTTL: goDuration().optional() }, "KubeletWebhookAuthentication").optional(),
    anonymous: strict({ enabled: goBool().optional() }, "KubeletAnonymousAuthentication").optional(),
  },
  "KubeletAuthentication",
);

const authorizationSchema = strict(
  {
    mode: goString().optional(),
    webhook: strict({ cacheAuthorizedTTL: goDuration().optional(), cacheUnauthorizedTTL: goDuration().optional() }, "KubeletWebhookAuthorization").optional(),
  },
  "KubeletAuthorization",
);

// component-base LoggingConfiguration. flushFrequency is a TimeOrMetaDuration: a duration string
// or a number of nanoseconds (kubeadm writes `flushFrequency: 0`).
const loggingFormatOptions = (what: string) => strict({ splitStream: goBool().optional(), infoBufferSize: goQuantity().optional() }, what).optional();
const loggingSchema = strict(
  {
    format: goString().optional(),
    flushFrequency: z.union([goDuration(), goInt64()], { error: 'must be a duration such as "5s" or a number of nanoseconds' }).optional(),
    verbosity: goUint32().optional(),
    vmodule: z
      .array(strict({ filePattern: goString(), verbosity: goUint32() }, "VModuleItem"), {
        error: "must be a list of {filePattern, verbosity}",
      })
      .optional(),
    options: strict({ json: loggingFormatOptions("JSONOptions"), text: loggingFormatOptions("TextOptions") }, "FormatOptions").optional(),
  },
  "LoggingConfiguration",
);

const tracingSchema = strict({ endpoint: goString().optional(), samplingRatePerMillion: goInt32().optional() }, "TracingConfiguration");

const taintSchema = strict({ key: goString(), value: goString().optional(), effect: goString(), timeAdded: goString().optional() }, "Taint");

export const kubeletConfigurationSchema = strict(
  {
    apiVersion: goString().optional(),
    kind: goString().optional(),
    enableServer: goBool().optional(),
    staticPodPath: goString().optional(),
    podLogsDir: goString().optional(),
    syncFrequency: goDuration().optional(),
    fileCheckFrequency: goDuration().optional(),
    httpCheckFrequency: goDuration().optional(),
    staticPodURL: goString().optional(),
    staticPodURLHeader: z.record(z.string(), goStringList(), { error: "must be a map of header name to list of values" }).optional(),
    address: goString().optional(),
    port: goInt32().optional(),
    readOnlyPort: goInt32().optional(),
    tlsCertFile: goString().optional(),
    tlsPrivateKeyFile: goString().optional(),
    tlsCipherSuites: goStringList().optional(),
    tlsCurvePreferences: z.array(goInt32(), { error: "must be a list of integers" }).optional(),
    tlsMinVersion: goString().optional(),
    rotateCertificates: goBool().optional(),
    serverTLSBootstrap: goBool().optional(),
    authentication: authenticationSchema.optional(),
    authorization: authorizationSchema.optional(),
    registryPullQPS: goInt32().optional(),
    registryBurst: goInt32().optional(),
    imagePullCredentialsVerificationPolicy: goString().optional(),
    preloadedImagesVerificationAllowlist: goStringList().optional(),
    eventRecordQPS: goInt32().optional(),
    eventBurst: goInt32().optional(),
    enableDebuggingHandlers: goBool().optional(),
    enableContentionProfiling: goBool().optional(),
    healthzPort: goInt32().optional(),
    healthzBindAddress: goString().optional(),
    oomScoreAdj: goInt32().optional(),
    clusterDomain: goString().optional(),
    clusterDNS: goStringList().optional(),
    streamingConnectionIdleTimeout: goDuration().optional(),
    nodeStatusUpdateFrequency: goDuration().optional(),
    nodeStatusReportFrequency: goDuration().optional(),
    nodeLeaseDurationSeconds: goInt32().optional(),
    imageMinimumGCAge: goDuration().optional(),
    imageMaximumGCAge: goDuration().optional(),
    imageGCHighThresholdPercent: goInt32().optional(),
    imageGCLowThresholdPercent: goInt32().optional(),
    volumeStatsAggPeriod: goDuration().optional(),
    kubeletCgroups: goString().optional(),
    systemCgroups: goString().optional(),
    cgroupRoot: goString().optional(),
    cgroupsPerQOS: goBool().optional(),
    cgroupDriver: goString().optional(),
    cpuManagerPolicy: goString().optional(),
    singleProcessOOMKill: goBool().optional(),
    cpuManagerPolicyOptions: goStringMap().optional(),
    cpuManagerReconcilePeriod: goDuration().optional(),
    draManagerReconcilePeriod: goDuration().optional(),
    memoryManagerPolicy: goString().optional(),
    topologyManagerPolicy: goString().optional(),
    topologyManagerScope: goString().optional(),
    topologyManagerPolicyOptions: goStringMap().optional(),
    qosReserved: goStringMap().optional(),
    runtimeRequestTimeout: goDuration().optional(),
    hairpinMode: goString().optional(),
    maxPods: goInt32().optional(),
    podCIDR: goString().optional(),
    podPidsLimit: goInt64().optional(),
    resolvConf: goString().optional(),
    runOnce: goBool().optional(),
    cpuCFSQuota: goBool().optional(),
    cpuCFSQuotaPeriod: goDuration().optional(),
    nodeStatusMaxImages: goInt32().optional(),
    maxOpenFiles: goInt64().optional(),
    contentType: goString().optional(),
    kubeAPIQPS: goInt32().optional(),
    kubeAPIBurst: goInt32().optional(),
    serializeImagePulls: goBool().optional(),
    maxParallelImagePulls: goInt32().optional(),
    evictionHard: goStringMap().optional(),
    evictionSoft: goStringMap().optional(),
    evictionSoftGracePeriod: goStringMap().optional(),
    evictionPressureTransitionPeriod: goDuration().optional(),
    evictionMaxPodGracePeriod: goInt32().optional(),
    evictionMinimumReclaim: goStringMap().optional(),
    mergeDefaultEvictionSettings: goBool().optional(),
    podsPerCore: goInt32().optional(),
    enableControllerAttachDetach: goBool().optional(),
    protectKernelDefaults: goBool().optional(),
    makeIPTablesUtilChains: goBool().optional(),
    iptablesMasqueradeBit: goInt32().optional(),
    iptablesDropBit: goInt32().optional(),
    featureGates: z.record(z.string(), goBool(), { error: "must be a map of feature name to true/false" }).optional(),
    failSwapOn: goBool().optional(),
    memorySwap: strict({ swapBehavior: goString().optional() }, "MemorySwapConfiguration").optional(),
    containerLogMaxSize: goString().optional(),
    containerLogMaxFiles: goInt32().optional(),
    containerLogMaxWorkers: goInt32().optional(),
    containerLogMonitorInterval: goDuration().optional(),
    configMapAndSecretChangeDetectionStrategy: goString().optional(),
    systemReserved: goStringMap().optional(),
    kubeReserved: goStringMap().optional(),
    reservedSystemCPUs: goString().optional(),
    showHiddenMetricsForVersion: goString().optional(),
    systemReservedCgroup: goString().optional(),
    kubeReservedCgroup: goString().optional(),
    enforceNodeAllocatable: goStringList().optional(),
    allowedUnsafeSysctls: goStringList().optional(),
    volumePluginDir: goString().optional(),
    providerID: goString().optional(),
    kernelMemcgNotification: goBool().optional(),
    logging: loggingSchema.optional(),
    enableSystemLogHandler: goBool().optional(),
    enableSystemLogQuery: goBool().optional(),
    shutdownGracePeriod: goDuration().optional(),
    shutdownGracePeriodCriticalPods: goDuration().optional(),
    shutdownGracePeriodByPodPriority: z
      .array(strict({ priority: goInt32(), shutdownGracePeriodSeconds: goInt64() }, "ShutdownGracePeriodByPodPriority"), {
        error: "must be a list of {priority, shutdownGracePeriodSeconds}",
      })
      .optional(),
    crashLoopBackOff: strict({ maxContainerRestartPeriod: goDuration().optional() }, "CrashLoopBackOffConfig").optional(),
    reservedMemory: z
      .array(strict({ numaNode: goInt32(), limits: z.record(z.string(), goQuantity(), { error: "must be a resource list" }) }, "MemoryReservation"), {
        error: "must be a list of {numaNode, limits}",
      })
      .optional(),
    enableProfilingHandler: goBool().optional(),
    enableDebugFlagsHandler: goBool().optional(),
    seccompDefault: goBool().optional(),
    memoryThrottlingFactor: goFloat64().optional(),
    memoryReservationPolicy: goString().optional(),
    registerWithTaints: z.array(taintSchema, { error: "must be a list of taints {key, value, effect}" }).optional(),
    registerNode: goBool().optional(),
    tracing: tracingSchema.optional(),
    localStorageCapacityIsolation: goBool().optional(),
    containerRuntimeEndpoint: goString().optional(),
    imageServiceEndpoint: goString().optional(),
    failCgroupV1: goBool().optional(),
    userNamespaces: strict({ idsPerPod: goInt64().optional() }, "UserNamespaces").optional(),
    podHousekeepingPeriod: goDuration().optional(),
    // bunlet extension: let the eviction manager evict static pods (upstream treats every static
    // pod as critical and never evicts it).
    evictStaticPods: goBool().optional(),
    // bunlet extension: nice value (-20…19) of the agent's main thread and of the threads it starts
    // afterwards (the kernel-notifier thread among them), as earlyoom's -p; 0 = leave it as it is.
    schedulingNice: goInt32().optional(),
    // bunlet extension: node autonomy — the API pods and what they reference kept on disk, run from
    // there after a restart while the API server is unreachable (src/pod/autonomy).
    autonomy: goBool().optional(),
    autonomyCacheSecrets: goBool().optional(),
    autonomyCacheMaxBytes: goInt64().optional(),
    // bunlet extension: image tarballs and lists of image references dropped in this directory are
    // imported into (or pulled by) the runtime and kept from image GC, as k3s's agent images
    // directory; "" = <root-dir>/images (src/pod/images/import-dir.ts).
    imageImportPath: goString().optional(),
  },
  "KubeletConfiguration",
);

/** The config file as written: every field optional. */
export type KubeletConfigurationInput = z.infer<typeof kubeletConfigurationSchema>;
export type KubeletConfigurationField = keyof KubeletConfigurationInput;

/** Top-level field names in upstream order (the order /configz and `config print` use). */
export const KUBELET_CONFIG_FIELDS = Object.keys(kubeletConfigurationSchema.shape) as KubeletConfigurationField[];

/** Fields that defaults.ts always fills in. */
export type DefaultedField =
  | "enableServer"
  | "syncFrequency"
  | "fileCheckFrequency"
  | "httpCheckFrequency"
  | "address"
  | "port"
  | "readOnlyPort"
  | "registryPullQPS"
  | "registryBurst"
  | "eventRecordQPS"
  | "eventBurst"
  | "enableDebuggingHandlers"
  | "healthzPort"
  | "healthzBindAddress"
  | "oomScoreAdj"
  | "streamingConnectionIdleTimeout"
  | "nodeStatusUpdateFrequency"
  | "nodeStatusReportFrequency"
  | "nodeLeaseDurationSeconds"
  | "imageMinimumGCAge"
  | "imageMaximumGCAge"
  | "imageGCHighThresholdPercent"
  | "imageGCLowThresholdPercent"
  | "volumeStatsAggPeriod"
  | "cgroupRoot"
  | "cgroupsPerQOS"
  | "cgroupDriver"
  | "cpuManagerPolicy"
  | "cpuManagerReconcilePeriod"
  | "memoryManagerPolicy"
  | "topologyManagerPolicy"
  | "topologyManagerScope"
  | "runtimeRequestTimeout"
  | "hairpinMode"
  | "maxPods"
  | "podPidsLimit"
  | "resolvConf"
  | "cpuCFSQuota"
  | "cpuCFSQuotaPeriod"
  | "nodeStatusMaxImages"
  | "maxOpenFiles"
  | "contentType"
  | "kubeAPIQPS"
  | "kubeAPIBurst"
  | "serializeImagePulls"
  | "evictionHard"
  | "evictionSoft"
  | "evictionSoftGracePeriod"
  | "evictionPressureTransitionPeriod"
  | "evictionMaxPodGracePeriod"
  | "evictionMinimumReclaim"
  | "mergeDefaultEvictionSettings"
  | "enableControllerAttachDetach"
  | "makeIPTablesUtilChains"
  | "iptablesMasqueradeBit"
  | "iptablesDropBit"
  | "featureGates"
  | "failSwapOn"
  | "memorySwap"
  | "containerLogMaxSize"
  | "containerLogMaxFiles"
  | "containerLogMaxWorkers"
  | "containerLogMonitorInterval"
  | "configMapAndSecretChangeDetectionStrategy"
  | "systemReserved"
  | "kubeReserved"
  | "enforceNodeAllocatable"
  | "volumePluginDir"
  | "kernelMemcgNotification"
  | "enableSystemLogHandler"
  | "enableSystemLogQuery"
  | "shutdownGracePeriod"
  | "shutdownGracePeriodCriticalPods"
  | "crashLoopBackOff"
  | "enableProfilingHandler"
  | "enableDebugFlagsHandler"
  | "seccompDefault"
  | "memoryThrottlingFactor"
  | "registerNode"
  | "localStorageCapacityIsolation"
  | "containerRuntimeEndpoint"
  | "imageServiceEndpoint"
  | "failCgroupV1"
  | "podLogsDir"
  | "staticPodPath"
  | "staticPodURL"
  | "staticPodURLHeader"
  | "evictStaticPods"
  | "schedulingNice"
  | "autonomy"
  | "autonomyCacheSecrets"
  | "autonomyCacheMaxBytes"
  | "imageImportPath";

type Input = KubeletConfigurationInput;
type Defaulted = { [K in DefaultedField]-?: Exclude<Input[K], undefined> };

/** A duration kept as its canonical Go string ("1m0s", "10s"). Use durationMs() to read it. */
export type GoDuration = string;

export interface KubeletAuthentication {
  x509: { clientCAFile?: string };
  webhook: { enabled: boolean; cacheTTL: GoDuration };
  anonymous: { enabled: boolean };
}
export interface KubeletAuthorization {
  mode: string;
  webhook: { cacheAuthorizedTTL: GoDuration; cacheUnauthorizedTTL: GoDuration };
}
export interface LoggingConfiguration {
  format: string;
  flushFrequency: GoDuration | number;
  verbosity: number;
  vmodule?: { filePattern: string; verbosity: number }[];
  options: {
    text: { splitStream?: boolean; infoBufferSize: string | number };
    json: { splitStream?: boolean; infoBufferSize: string | number };
  };
}

/**
 * The effective configuration: v1beta1 field names, defaults applied, durations as canonical Go
 * strings, quantities as written, maps as records. Exactly what /configz serialises.
 */
export type KubeletConfiguration = Omit<Input, DefaultedField | "apiVersion" | "kind" | "authentication" | "authorization" | "logging"> &
  Defaulted & {
    apiVersion: typeof API_VERSION;
    kind: typeof KIND;
    authentication: KubeletAuthentication;
    authorization: KubeletAuthorization;
    logging: LoggingConfiguration;
  };

/**
 * How a field serialises in Go (json tags in types.go): "ptr" fields are pointers (printed when
 * set, even if zero), "struct" fields are non-pointer structs (always printed), "always" has no
 * omitempty; everything else is omitted when it holds its zero value.
 */
export const FIELD_GO_KIND: Partial<Record<KubeletConfigurationField, "ptr" | "struct" | "always">> = {
  enableServer: "ptr",
  registryPullQPS: "ptr",
  eventRecordQPS: "ptr",
  enableDebuggingHandlers: "ptr",
  healthzPort: "ptr",
  oomScoreAdj: "ptr",
  imageGCHighThresholdPercent: "ptr",
  imageGCLowThresholdPercent: "ptr",
  cgroupsPerQOS: "ptr",
  singleProcessOOMKill: "ptr",
  podPidsLimit: "ptr",
  resolvConf: "ptr",
  cpuCFSQuota: "ptr",
  cpuCFSQuotaPeriod: "ptr",
  nodeStatusMaxImages: "ptr",
  kubeAPIQPS: "ptr",
  serializeImagePulls: "ptr",
  maxParallelImagePulls: "ptr",
  mergeDefaultEvictionSettings: "ptr",
  enableControllerAttachDetach: "ptr",
  makeIPTablesUtilChains: "ptr",
  iptablesMasqueradeBit: "ptr",
  iptablesDropBit: "ptr",
  failSwapOn: "ptr",
  containerLogMaxFiles: "ptr",
  containerLogMaxWorkers: "ptr",
  containerLogMonitorInterval: "ptr",
  enableSystemLogHandler: "ptr",
  enableSystemLogQuery: "ptr",
  enableProfilingHandler: "ptr",
  enableDebugFlagsHandler: "ptr",
  seccompDefault: "ptr",
  memoryThrottlingFactor: "ptr",
  registerNode: "ptr",
  tracing: "ptr",
  localStorageCapacityIsolation: "ptr",
  failCgroupV1: "ptr",
  userNamespaces: "ptr",
  podHousekeepingPeriod: "ptr",
  syncFrequency: "struct",
  fileCheckFrequency: "struct",
  httpCheckFrequency: "struct",
  authentication: "always",
  authorization: "always",
  streamingConnectionIdleTimeout: "struct",
  nodeStatusUpdateFrequency: "struct",
  nodeStatusReportFrequency: "struct",
  imageMinimumGCAge: "struct",
  imageMaximumGCAge: "struct",
  volumeStatsAggPeriod: "struct",
  cpuManagerReconcilePeriod: "struct",
  draManagerReconcilePeriod: "struct",
  runtimeRequestTimeout: "struct",
  evictionPressureTransitionPeriod: "struct",
  memorySwap: "struct",
  logging: "struct",
  shutdownGracePeriod: "struct",
  shutdownGracePeriodCriticalPods: "struct",
  crashLoopBackOff: "struct",
  containerRuntimeEndpoint: "always",
};

/** Fields whose values are metav1.Duration (canonicalised to Go's String() form on load). */
export const DURATION_FIELDS: readonly KubeletConfigurationField[] = [
  "syncFrequency",
  "fileCheckFrequency",
  "httpCheckFrequency",
  "streamingConnectionIdleTimeout",
  "nodeStatusUpdateFrequency",
  "nodeStatusReportFrequency",
  "imageMinimumGCAge",
  "imageMaximumGCAge",
  "volumeStatsAggPeriod",
  "cpuManagerReconcilePeriod",
  "draManagerReconcilePeriod",
  "runtimeRequestTimeout",
  "cpuCFSQuotaPeriod",
  "evictionPressureTransitionPeriod",
  "containerLogMonitorInterval",
  "shutdownGracePeriod",
  "shutdownGracePeriodCriticalPods",
  "podHousekeepingPeriod",
];
