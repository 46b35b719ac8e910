// Which KubeletConfiguration fields bunlet acts on. Every other field is accepted and type-checked,
// and load.ts warns about it by name; a config flag is acted on exactly when its field is
// (config-flags.ts), so one list decides for the file, the flags and `--help`.
import type { KubeletConfigurationField } from "./kubelet-config.ts";

/**
 * Fields bunlet acts on today. Any other field set in a file or by a flag is accepted and
 * type-checked, and produces one warning naming it, so nobody believes it took effect.
 */
export const ACTED_ON_FIELDS: ReadonlySet<string> = new Set<KubeletConfigurationField>([
  "volumeStatsAggPeriod",
  "apiVersion",
  "kind",
  "enableServer",
  "staticPodPath",
  "staticPodURL",
  "staticPodURLHeader",
  "syncFrequency",
  "fileCheckFrequency",
  "httpCheckFrequency",
  "address",
  "port",
  "readOnlyPort",
  "healthzPort",
  "healthzBindAddress",
  "imageGCHighThresholdPercent",
  "imageGCLowThresholdPercent",
  "imageMinimumGCAge",
  "serializeImagePulls",
  "maxParallelImagePulls", // pulls one at a time, or a few at once (src/pod/images/puller.ts)
  "cgroupRoot",
  "cgroupsPerQOS",
  "cgroupDriver",
  "systemReserved",
  "kubeReserved",
  "reservedSystemCPUs", // overrides the reserved cpu; the static CPU manager's reserved CPUs
  "cpuManagerPolicy", // none, static (src/pod/cm/cpumanager)
  "cpuManagerPolicyOptions", // refused: bunlet's static policy has no options
  "cpuManagerReconcilePeriod",
  "enforceNodeAllocatable",
  "maxPods",
  "podPidsLimit",
  "containerRuntimeEndpoint",
  "imageServiceEndpoint",
  "evictionHard",
  "evictionSoft",
  "evictionSoftGracePeriod",
  "evictionPressureTransitionPeriod",
  "evictionMaxPodGracePeriod",
  "evictionMinimumReclaim",
  "mergeDefaultEvictionSettings",
  "kernelMemcgNotification",
  "failSwapOn",
  "memorySwap", // swapBehavior: LimitedSwap (src/pod/kuberuntime/swap.ts)
  "containerLogMaxSize",
  "containerLogMaxFiles",
  "featureGates",
  "localStorageCapacityIsolation",
  "evictStaticPods",
  "schedulingNice",
  "autonomy", // node autonomy (src/pod/autonomy)
  "autonomyCacheSecrets",
  "autonomyCacheMaxBytes",
  "imageImportPath", // offline images (src/pod/images/import-dir.ts)
  "podLogsDir",
  "oomScoreAdj",
  "runtimeRequestTimeout",
  "containerLogMonitorInterval",
  "shutdownGracePeriod",
  "shutdownGracePeriodCriticalPods",
  "shutdownGracePeriodByPodPriority", // graceful node shutdown (src/node/shutdown)
  "nodeStatusUpdateFrequency",
  "nodeStatusReportFrequency",
  "nodeLeaseDurationSeconds",
  "registerNode",
  "registerWithTaints",
  "kubeAPIQPS",
  "kubeAPIBurst",
  "nodeStatusMaxImages",
  "providerID",
  "rotateCertificates",
  "serverTLSBootstrap", // cluster
  "enableDebuggingHandlers",
  "tlsCertFile",
  "tlsPrivateKeyFile",
  "tlsMinVersion",
  "tlsCipherSuites",
  "authentication",
  "authorization", // api
  "cpuCFSQuota", // pod cgroups: cpu.cfs_quota_us only when true (test/config/acted-on.test.ts checks this list against the code)
  "seccompDefault",
  "allowedUnsafeSysctls",
  "clusterDNS",
  "clusterDomain",
  "resolvConf", // security
  "singleProcessOOMKill", // cgroup v2: memory.oom.group in LinuxContainerResources.unified
  "userNamespaces", // idsPerPod: the size of a hostUsers: false pod's id range (src/pod/userns)
]);

/** Sub-fields acted on inside an otherwise not-acted-on object field (logging.verbosity ↔ -v). */
export const ACTED_ON_SUBFIELDS: Partial<Record<KubeletConfigurationField, readonly string[]>> = {
  logging: ["verbosity"],
};

/** Whether setting a dotted configuration path ("authentication.anonymous.enabled") takes effect in bunlet. */
export function isFieldActedOn(configField: string): boolean {
  const [top = "", sub] = configField.split(".");
  if (ACTED_ON_FIELDS.has(top)) return true;
  const subs = ACTED_ON_SUBFIELDS[top as KubeletConfigurationField];
  return sub !== undefined && (subs?.includes(sub) ?? false);
}
