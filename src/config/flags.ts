// The kubelet's command line: the flag table (names, types, help text and defaults as the
// kubelet prints them) and a pflag-compatible parser over argv. citty only dispatches
// subcommands; every kubelet flag is parsed here so syntax and error texts match the kubelet's
// (`unknown flag: --foo`, `flag needs an argument: --port`, `invalid argument "x" for "--port" flag: …`).
import { isIP } from "node:net";
import { durationProblem } from "./go-types.ts";
import { canonicalDuration } from "./duration.ts";
import { ConfigError } from "./errors.ts";
import { ACTED_ON_FIELDS, ACTED_ON_SUBFIELDS, type KubeletConfigurationField } from "./kubelet-config.ts";
import {
  parseBoolMap,
  parseColonMultimap,
  parseConfigurationMap,
  parseGoBool,
  parseGoFloat,
  parseGoInt,
  parseKeyValueMap,
  parseStringSlice,
  parseTaints,
  SyntaxProblem,
} from "./syntax.ts";

export type FlagKind =
  | "string"
  | "bool"
  | "int32"
  | "int64"
  | "float64"
  | "duration"
  | "ip"
  | "level"
  | "mapStringString"
  | "mapLangle"
  | "mapStringBool"
  | "colonMultimap"
  | "configurationMap"
  | "stringSlice"
  | "taints"
  | "vmodule"
  | "version";

/** Settings that only exist as flags (upstream KubeletFlags), not in KubeletConfiguration. */
export interface NodeFlags {
  kubeconfig?: string;
  bootstrapKubeconfig?: string;
  hostnameOverride?: string;
  nodeIP?: string;
  /** Default /var/lib/kubelet. */
  rootDir: string;
  /** Default /var/lib/kubelet/pki. */
  certDir: string;
  lockFile?: string;
  exitOnLockContention: boolean;
  nodeLabels: Record<string, string>;
  /** klog verbosity (-v); also reflected in config.logging.verbosity. */
  v: number;
  /** Effective registerNode (the config field); mirrored here for convenience. */
  registerNode: boolean;
  /** bunlet: serve exec/attach/portForward/run/containerLogs/logs on the plain loopback port (standalone, no TLS). */
  unsafeLoopbackDebugHandlers: boolean;
  /** bunlet: file that receives one JSON line per eviction decision. */
  evictionTrace?: string;
  cloudProvider?: string;
  cloudConfig?: string;
  configDir?: string;
  experimentalAllocatableIgnoreEviction: boolean;
  experimentalMounterPath?: string;
  imageCredentialProviderConfig?: string;
  imageCredentialProviderBinDir?: string;
  /** Deprecated upstream (sandbox image comes from the CRI); kubeadm still passes it. */
  podInfraContainerImage?: string;
  /** Deprecated container-GC knobs, accepted for old command lines. */
  maximumDeadContainers?: number;
  maximumDeadContainersPerContainer?: number;
  minimumContainerTTLDuration?: string;
  /** --help / -h was given. */
  help: boolean;
  /** --version[=raw|true] was given. */
  version?: string;
}

export interface FlagSpec {
  name: string;
  shorthand?: string;
  /** Type as `kubelet --help` prints it after the name ("int32", "duration", "mapStringString"; "" for bools). */
  type: string;
  kind: FlagKind;
  description: string;
  /** Default exactly as the kubelet prints it inside "(default …)"; absent when it prints none. */
  default?: string;
  /** Dotted v1beta1 KubeletConfiguration path this flag sets ("authentication.anonymous.enabled"). */
  configField?: string;
  /** NodeFlags key this flag sets (flag-only settings). */
  nodeFlag?: keyof NodeFlags;
  /** pflag deprecation message, printed as "Flag --x has been deprecated, <msg>". */
  deprecated?: string;
  /** bunlet acts on this setting; others are accepted, checked and warned about. */
  actedOn: boolean;
}

const TYPE_NAME: Record<FlagKind, string> = {
  string: "string",
  bool: "",
  int32: "int32",
  int64: "int",
  float64: "float",
  duration: "duration",
  ip: "ip",
  level: "Level",
  mapStringString: "mapStringString",
  mapLangle: "mapStringString",
  mapStringBool: "mapStringBool",
  colonMultimap: "colonSeparatedMultimapStringString",
  configurationMap: "mapStringString",
  stringSlice: "strings",
  taints: "[]api.Taint",
  vmodule: "pattern=N,...",
  version: "version[=true]",
};

// All KubeletConfiguration flags are deprecated upstream in favour of the config file.
export const CONFIG_FLAG_DEPRECATION =
  "This parameter should be set via the config file specified by the Kubelet's --config flag. See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information.";

type Opts = { default?: string; actedOn?: boolean; deprecated?: string | false; shorthand?: string };

// A config flag is acted on exactly when its field is: one list (ACTED_ON_FIELDS) decides for both.
const fieldActedOn = (configField: string): boolean => {
  const [top = "", sub] = configField.split(".");
  if (ACTED_ON_FIELDS.has(top)) return true;
  const subs = ACTED_ON_SUBFIELDS[top as KubeletConfigurationField];
  return sub !== undefined && (subs?.includes(sub) ?? false);
};
const cfg = (name: string, kind: FlagKind, configField: string, description: string, o: Omit<Opts, "actedOn"> = {}): FlagSpec => ({
  name,
  kind,
  type: TYPE_NAME[kind],
  description,
  configField,
  default: o.default,
  shorthand: o.shorthand,
  deprecated: o.deprecated === false ? undefined : (o.deprecated ?? CONFIG_FLAG_DEPRECATION),
  actedOn: fieldActedOn(configField),
});
const node = (name: string, kind: FlagKind, nodeFlag: keyof NodeFlags, description: string, o: Opts = {}): FlagSpec => ({
  name,
  kind,
  type: TYPE_NAME[kind],
  description,
  nodeFlag,
  default: o.default,
  shorthand: o.shorthand,
  deprecated: o.deprecated || undefined,
  actedOn: o.actedOn ?? false,
});
const ACT = { actedOn: true } as const;

/** Every flag bunlet accepts, in the order `--help` lists them (alphabetical, as pflag sorts). */
export const KUBELET_FLAGS: readonly FlagSpec[] = [
  cfg(
    "address",
    "ip",
    "address",
    "The IP address for the Kubelet to serve on (set to `0.0.0.0` or `::` for listening on all interfaces and IP address families)",
    { default: "0.0.0.0" },
  ),
  cfg(
    "allowed-unsafe-sysctls",
    "stringSlice",
    "allowedUnsafeSysctls",
    "Comma-separated whitelist of unsafe sysctls or unsafe sysctl patterns (ending in `*`). Use these at your own risk.",
  ),
  cfg(
    "anonymous-auth",
    "bool",
    "authentication.anonymous.enabled",
    "Enables anonymous requests to the Kubelet server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of `system:anonymous`, and a group name of `system:unauthenticated`.",
  ),
  cfg("authentication-token-webhook", "bool", "authentication.webhook.enabled", "Use the `TokenReview` API to determine authentication for bearer tokens.", {
    default: "true",
  }),
  cfg(
    "authentication-token-webhook-cache-ttl",
    "duration",
    "authentication.webhook.cacheTTL",
    "The duration to cache responses from the webhook token authenticator.",
    { default: "2m0s" },
  ),
  cfg(
    "authorization-mode",
    "string",
    "authorization.mode",
    "Authorization mode for Kubelet server. Valid options are `AlwaysAllow` or `Webhook`. `Webhook` mode uses the `SubjectAccessReview` API to determine authorization.",
    { default: '"Webhook"' },
  ),
  cfg(
    "authorization-webhook-cache-authorized-ttl",
    "duration",
    "authorization.webhook.cacheAuthorizedTTL",
    "The duration to cache 'authorized' responses from the webhook authorizer.",
    { default: "5m0s" },
  ),
  cfg(
    "authorization-webhook-cache-unauthorized-ttl",
    "duration",
    "authorization.webhook.cacheUnauthorizedTTL",
    "The duration to cache 'unauthorized' responses from the webhook authorizer.",
    { default: "30s" },
  ),
  node(
    "bootstrap-kubeconfig",
    "string",
    "bootstrapKubeconfig",
    "Path to a kubeconfig file that will be used to get client certificate for kubelet. If the file specified by `--kubeconfig` does not exist, the bootstrap kubeconfig is used to request a client certificate from the API server.",
    ACT,
  ),
  node(
    "cert-dir",
    "string",
    "certDir",
    "The directory where the TLS certs are located. If `--tls-cert-file` and `--tls-private-key-file` are provided, this flag will be ignored.",
    { default: '"/var/lib/kubelet/pki"', actedOn: true },
  ),
  cfg("cgroup-driver", "string", "cgroupDriver", "Driver that the kubelet uses to manipulate cgroups on the host. Possible values: `cgroupfs`, `systemd`.", {
    default: '"cgroupfs"',
  }),
  cfg(
    "cgroup-root",
    "string",
    "cgroupRoot",
    "Optional root cgroup to use for pods. This is handled by the container runtime on a best effort basis. Default: '', which means use the container runtime default.",
  ),
  cfg("cgroups-per-qos", "bool", "cgroupsPerQOS", "Enable creation of QoS cgroup hierarchy, if true, top level QoS and pod cgroups are created.", {
    default: "true",
  }),
  cfg(
    "client-ca-file",
    "string",
    "authentication.x509.clientCAFile",
    "If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.",
  ),
  node("cloud-config", "string", "cloudConfig", "The path to the cloud provider configuration file. Empty string for no configuration file."),
  node(
    "cloud-provider",
    "string",
    "cloudProvider",
    "The provider for cloud services. Set to cloud provider name for using an external cloud provider; bunlet supports only none.",
  ),
  cfg(
    "cluster-dns",
    "stringSlice",
    "clusterDNS",
    'Comma-separated list of DNS server IP address. This value is used for containers DNS server in case of Pods with "dnsPolicy=ClusterFirst".',
  ),
  cfg(
    "cluster-domain",
    "string",
    "clusterDomain",
    "Domain for this cluster. If set, kubelet will configure all containers to search this domain in addition to the host's search domains.",
  ),
  {
    ...node("config", "string", "kubeconfig", ""),
    nodeFlag: undefined,
    description:
      "The Kubelet will load its initial configuration from this file. The path may be absolute or relative; relative paths start at the Kubelet's current working directory. Omit this flag to use the built-in default configuration values. Command-line flags override configuration from this file.",
    actedOn: true,
  },
  node(
    "config-dir",
    "string",
    "configDir",
    "Path to a directory to specify drop-ins, allows the user to optionally specify additional configs to overwrite what is provided by default and in the `--config` flag. Files ending in `.conf` are applied in lexical order as JSON merge patches.",
    ACT,
  ),
  cfg(
    "container-log-max-files",
    "int32",
    "containerLogMaxFiles",
    "Set the maximum number of container log files that can be present for a container. The number must be >= 2.",
    { default: "5" },
  ),
  cfg("container-log-max-size", "string", "containerLogMaxSize", "Set the maximum size (e.g. `10Mi`) of container log file before it is rotated.", {
    default: '"10Mi"',
  }),
  cfg(
    "container-log-max-workers",
    "int32",
    "containerLogMaxWorkers",
    "Specify the maximum number of concurrent workers to spawn for performing the log rotate operations. Set this count to 1 for disabling the concurrent log rotation workflows.",
    { default: "1" },
  ),
  cfg(
    "container-log-monitor-interval",
    "duration",
    "containerLogMonitorInterval",
    "Set the duration at which the container logs are monitored for performing the log rotate operation. Must be >= 3s.",
    { default: "10s" },
  ),
  cfg(
    "container-runtime-endpoint",
    "string",
    "containerRuntimeEndpoint",
    "The endpoint of container runtime service. Unix Domain Sockets are supported on Linux. Examples: `unix:///path/to/runtime.sock`.",
    { default: '"unix:///run/containerd/containerd.sock"' },
  ),
  cfg("contention-profiling", "bool", "enableContentionProfiling", "Enable block profiling, if profiling is enabled."),
  cfg("cpu-cfs-quota", "bool", "cpuCFSQuota", "Enable CPU CFS quota enforcement for containers that specify CPU limits.", { default: "true" }),
  cfg("cpu-cfs-quota-period", "duration", "cpuCFSQuotaPeriod", "Sets CPU CFS quota period value, `cpu.cfs_period_us`, defaults to Linux Kernel default.", {
    default: "100ms",
  }),
  cfg("cpu-manager-policy", "string", "cpuManagerPolicy", "The CPU manager policy to use. Possible values: `none`, `static`.", { default: '"none"' }),
  cfg(
    "cpu-manager-policy-options",
    "mapStringString",
    "cpuManagerPolicyOptions",
    "A set of `key=value` CPU manager policy options to use, to fine tune their behaviour.",
  ),
  cfg("cpu-manager-reconcile-period", "duration", "cpuManagerReconcilePeriod", "CPU manager reconciliation period. Examples: `10s`, or `1m`.", {
    default: "10s",
  }),
  cfg(
    "enable-controller-attach-detach",
    "bool",
    "enableControllerAttachDetach",
    "Enables the Attach/Detach controller to manage attachment/detachment of volumes scheduled to this node, and disables kubelet from executing any attach/detach operations.",
    { default: "true" },
  ),
  cfg(
    "enable-debugging-handlers",
    "bool",
    "enableDebuggingHandlers",
    "Enables server endpoints for log collection and local running of containers and commands.",
    { default: "true" },
  ),
  cfg("enable-server", "bool", "enableServer", "Enable the Kubelet's server.", { default: "true", deprecated: false }),
  cfg(
    "enforce-node-allocatable",
    "stringSlice",
    "enforceNodeAllocatable",
    "A comma separated list of levels of node allocatable enforcement to be enforced by kubelet. Acceptable options are `none`, `pods`, `system-reserved`, and `kube-reserved`. If the latter two options are specified, `--system-reserved-cgroup` and `--kube-reserved-cgroup` must also be set, respectively. If `none` is specified, no additional options should be set.",
    { default: "[pods]" },
  ),
  cfg(
    "event-burst",
    "int32",
    "eventBurst",
    "Maximum size of a bursty event records, temporarily allows event records to burst to this number, while still not exceeding `--event-qps`. The number must be >= 0. If 0 will use default burst (100).",
    { default: "100" },
  ),
  cfg("event-qps", "int32", "eventRecordQPS", "QPS to limit event creations. The number must be >= 0. If 0 will use default QPS (50).", { default: "50" }),
  cfg(
    "evict-static-pods",
    "bool",
    "evictStaticPods",
    "bunlet: let the eviction manager evict static pods. The kubelet treats every static pod as critical and never evicts it; set this (config field `evictStaticPods`) when static pods are the workload under test.",
    { deprecated: false },
  ),
  cfg(
    "eviction-hard",
    "mapLangle",
    "evictionHard",
    "A set of eviction thresholds (e.g. `memory.available<1Gi`) that if met would trigger a pod eviction. Setting it replaces every default threshold.",
    { default: "imagefs.available<15%,imagefs.inodesFree<5%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%" },
  ),
  cfg(
    "eviction-max-pod-grace-period",
    "int32",
    "evictionMaxPodGracePeriod",
    "Maximum allowed grace period (in seconds) to use when terminating pods in response to a soft eviction threshold being met. If negative, defer to pod specified value.",
  ),
  cfg(
    "eviction-minimum-reclaim",
    "mapStringString",
    "evictionMinimumReclaim",
    "A set of minimum reclaims (e.g. `imagefs.available=2Gi`) that describes the minimum amount of resource the kubelet will reclaim when performing a pod eviction if that resource is under pressure.",
  ),
  cfg(
    "eviction-pressure-transition-period",
    "duration",
    "evictionPressureTransitionPeriod",
    "Duration for which the kubelet has to wait before transitioning out of an eviction pressure condition.",
    { default: "5m0s" },
  ),
  cfg(
    "eviction-soft",
    "mapLangle",
    "evictionSoft",
    "A set of eviction thresholds (e.g. `memory.available<1.5Gi`) that if met over a corresponding grace period would trigger a pod eviction.",
  ),
  cfg(
    "eviction-soft-grace-period",
    "mapStringString",
    "evictionSoftGracePeriod",
    "A set of eviction grace periods (e.g. `memory.available=1m30s`) that correspond to how long a soft eviction threshold must hold before triggering a pod eviction.",
  ),
  node(
    "eviction-trace",
    "string",
    "evictionTrace",
    "bunlet: append one JSON line per eviction-manager decision (observations, thresholds, grace state, ranking, victim) to this file.",
    ACT,
  ),
  node("exit-on-lock-contention", "bool", "exitOnLockContention", "Whether kubelet should exit upon lock-file contention.", ACT),
  node(
    "experimental-allocatable-ignore-eviction",
    "bool",
    "experimentalAllocatableIgnoreEviction",
    "When set to `true`, hard eviction thresholds will be ignored while calculating node allocatable.",
  ),
  node("experimental-mounter-path", "string", "experimentalMounterPath", "[Experimental] Path of mounter binary. Leave empty to use the default `mount`."),
  cfg("fail-swap-on", "bool", "failSwapOn", "Makes the Kubelet fail to start if swap is enabled on the node.", { default: "true" }),
  cfg("feature-gates", "mapStringBool", "featureGates", "A set of key=value pairs that describe feature gates for alpha/experimental features."),
  cfg("file-check-frequency", "duration", "fileCheckFrequency", "Duration between checking config files for new data.", { default: "20s" }),
  cfg("hairpin-mode", "string", "hairpinMode", "How should the kubelet setup hairpin NAT. Valid values are `promiscuous-bridge`, `hairpin-veth` and `none`.", {
    default: '"promiscuous-bridge"',
  }),
  cfg(
    "healthz-bind-address",
    "ip",
    "healthzBindAddress",
    "The IP address for the healthz server to serve on (set to `0.0.0.0` or `::` for listening in all interfaces and IP families).",
    { default: "127.0.0.1" },
  ),
  cfg("healthz-port", "int32", "healthzPort", "The port of the localhost healthz endpoint (set to `0` to disable).", { default: "10248" }),
  node("help", "bool", "help", "help for kubelet", { ...ACT, shorthand: "h" }),
  node("hostname-override", "string", "hostnameOverride", "If non-empty, will use this string as identification instead of the actual hostname.", ACT),
  cfg("http-check-frequency", "duration", "httpCheckFrequency", "Duration between checking HTTP for new data.", { default: "20s" }),
  node(
    "image-credential-provider-bin-dir",
    "string",
    "imageCredentialProviderBinDir",
    "The path to the directory where credential provider plugin binaries are located.",
  ),
  node("image-credential-provider-config", "string", "imageCredentialProviderConfig", "The path to the credential provider plugin config file."),
  cfg(
    "image-gc-high-threshold",
    "int32",
    "imageGCHighThresholdPercent",
    "The percent of disk usage after which image garbage collection is always run. Values must be within the range [0, 100], To disable image garbage collection, set to 100.",
    { default: "85" },
  ),
  cfg(
    "image-gc-low-threshold",
    "int32",
    "imageGCLowThresholdPercent",
    "The percent of disk usage before which image garbage collection is never run. Lowest disk usage to garbage collect to. Values must be within the range [0, 100] and should not be larger than that of `--image-gc-high-threshold`.",
    { default: "80" },
  ),
  cfg(
    "image-service-endpoint",
    "string",
    "imageServiceEndpoint",
    "The endpoint of container image service. If not specified, it will be the same with `--container-runtime-endpoint` by default.",
  ),
  cfg("iptables-drop-bit", "int32", "iptablesDropBit", "The bit of the fwmark space to mark packets for dropping. Must be within the range [0, 31].", {
    default: "15",
  }),
  cfg("iptables-masquerade-bit", "int32", "iptablesMasqueradeBit", "The bit of the fwmark space to mark packets for SNAT. Must be within the range [0, 31].", {
    default: "14",
  }),
  cfg(
    "kernel-memcg-notification",
    "bool",
    "kernelMemcgNotification",
    "If enabled, the kubelet will integrate with the kernel memcg notification to determine if memory eviction thresholds are crossed rather than polling.",
  ),
  cfg("kube-api-burst", "int32", "kubeAPIBurst", "Burst to use while talking with kubernetes apiserver. The number must be >= 0.", { default: "100" }),
  cfg("kube-api-content-type", "string", "contentType", "Content type of requests sent to apiserver.", { default: '"application/vnd.kubernetes.protobuf"' }),
  cfg("kube-api-qps", "int32", "kubeAPIQPS", "QPS to use while talking with kubernetes apiserver. The number must be >= 0.", { default: "50" }),
  cfg(
    "kube-reserved",
    "mapStringString",
    "kubeReserved",
    "A set of `<resource name>=<resource quantity>` (e.g. `cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000`) pairs that describe resources reserved for kubernetes system components. Currently `cpu`, `memory`, `pid` and local `ephemeral-storage` for root file system are supported.",
  ),
  cfg(
    "kube-reserved-cgroup",
    "string",
    "kubeReservedCgroup",
    "Absolute name of the top level cgroup that is used to manage kubernetes components for which compute resources were reserved via `--kube-reserved` flag. Ex. `/kube-reserved`.",
  ),
  node(
    "kubeconfig",
    "string",
    "kubeconfig",
    "Path to a kubeconfig file, specifying how to connect to the API server. Providing `--kubeconfig` enables API server mode, omitting `--kubeconfig` enables standalone mode.",
    ACT,
  ),
  cfg("kubelet-cgroups", "string", "kubeletCgroups", "Optional absolute name of cgroups to create and run the Kubelet in."),
  cfg(
    "local-storage-capacity-isolation",
    "bool",
    "localStorageCapacityIsolation",
    "If true, local ephemeral storage isolation is enabled. Otherwise, local storage isolation feature will be disabled.",
    { default: "true" },
  ),
  node("lock-file", "string", "lockFile", "The path to file for kubelet to use as a lock file.", ACT),
  cfg("log-flush-frequency", "duration", "logging.flushFrequency", "Maximum number of seconds between log flushes.", { default: "5s", deprecated: false }),
  cfg("logging-format", "string", "logging.format", 'Sets the log format. Permitted formats: "text".', { default: '"text"', deprecated: false }),
  cfg("make-iptables-util-chains", "bool", "makeIPTablesUtilChains", "If true, kubelet will ensure `iptables` utility rules are present on host.", {
    default: "true",
  }),
  cfg("manifest-url", "string", "staticPodURL", "URL for accessing additional Pod specifications to run."),
  cfg(
    "manifest-url-header",
    "colonMultimap",
    "staticPodURLHeader",
    "Comma-separated list of HTTP headers to use when accessing the URL provided to `--manifest-url`. Multiple headers with the same name will be added in the same order provided. This flag can be repeatedly invoked. For example: `--manifest-url-header 'a:hello,b:again,c:world' --manifest-url-header 'b:beautiful'`",
  ),
  cfg("max-open-files", "int64", "maxOpenFiles", "Number of files that can be opened by Kubelet process.", { default: "1000000" }),
  cfg("max-pods", "int32", "maxPods", "Number of Pods that can run on this Kubelet.", { default: "110" }),
  node(
    "maximum-dead-containers",
    "int32",
    "maximumDeadContainers",
    "Maximum number of old instances of containers to retain globally. Each container takes up some disk space. To disable, set to a negative number.",
    { default: "-1", actedOn: true, deprecated: "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version." },
  ),
  node(
    "maximum-dead-containers-per-container",
    "int32",
    "maximumDeadContainersPerContainer",
    "Maximum number of old instances to retain per container. Each container takes up some disk space.",
    { default: "1", actedOn: true, deprecated: "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version." },
  ),
  cfg("memory-manager-policy", "string", "memoryManagerPolicy", "Memory Manager policy to use. Possible values: `None`, `Static`.", { default: '"None"' }),
  node(
    "minimum-container-ttl-duration",
    "duration",
    "minimumContainerTTLDuration",
    "Minimum age for a finished container before it is garbage collected. Examples: `300ms`, `10s` or `2h45m`.",
    { actedOn: true, deprecated: "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version." },
  ),
  cfg(
    "minimum-image-ttl-duration",
    "duration",
    "imageMinimumGCAge",
    "Minimum age for an unused image before it is garbage collected. Examples: `300ms`, `10s` or `2h45m`.",
    { default: "2m0s" },
  ),
  node(
    "node-ip",
    "string",
    "nodeIP",
    "IP address (or comma-separated dual-stack IP addresses) of the node. If unset, kubelet will use the node's default IPv4 address, if any, or its default IPv6 address if it has no IPv4 addresses.",
    ACT,
  ),
  node(
    "node-labels",
    "configurationMap",
    "nodeLabels",
    "Labels to add when registering the node in the cluster. Labels must be `key=value` pairs separated by `,`.",
    ACT,
  ),
  cfg(
    "node-status-max-images",
    "int32",
    "nodeStatusMaxImages",
    "The maximum number of images to report in `node.status.images`. If `-1` is specified, no cap will be applied.",
    { default: "50" },
  ),
  cfg("node-status-update-frequency", "duration", "nodeStatusUpdateFrequency", "Specifies how often kubelet posts node status to master.", { default: "10s" }),
  cfg("oom-score-adj", "int32", "oomScoreAdj", "The oom-score-adj value for kubelet process. Values must be within the range [-1000, 1000].", {
    default: "-999",
  }),
  cfg("pod-cidr", "string", "podCIDR", "The CIDR to use for pod IP addresses, only used in standalone mode."),
  node(
    "pod-infra-container-image",
    "string",
    "podInfraContainerImage",
    "Specified image will not be pruned by the image garbage collector. CRI implementations have their own configuration to set this image.",
    { default: '"registry.k8s.io/pause:3.10"', deprecated: "will be removed in 1.35. Image garbage collector will get sandbox image information from CRI." },
  ),
  cfg(
    "pod-manifest-path",
    "string",
    "staticPodPath",
    "Path to the directory containing static pod files to run, or the path to a single static pod file. Files starting with dots will be ignored.",
  ),
  cfg(
    "pod-max-pids",
    "int64",
    "podPidsLimit",
    "Set the maximum number of processes per pod. If `-1`, the kubelet defaults to the node allocatable PID capacity.",
    { default: "-1" },
  ),
  cfg("pods-per-core", "int32", "podsPerCore", "Number of Pods per core that can run on this kubelet. A value of 0 disables this limit."),
  cfg("port", "int32", "port", "The port for the kubelet to serve on.", { default: "10250" }),
  cfg(
    "protect-kernel-defaults",
    "bool",
    "protectKernelDefaults",
    "Default kubelet behaviour for kernel tuning. If set, kubelet errors if any of kernel tunables is different than kubelet defaults.",
  ),
  cfg("provider-id", "string", "providerID", "Unique identifier for identifying the node in a machine database, i.e cloud provider."),
  cfg(
    "qos-reserved",
    "mapStringString",
    "qosReserved",
    "A set of `<resource name>=<percentage>` (e.g. `memory=50%`) pairs that describe how pod resource requests are reserved at the QoS level.",
  ),
  cfg(
    "read-only-port",
    "int32",
    "readOnlyPort",
    "The read-only port for the kubelet to serve on with no authentication/authorization (set to `0` to disable).",
  ),
  cfg(
    "register-node",
    "bool",
    "registerNode",
    "Register the node with the API server. If `--kubeconfig` is not provided, this flag is irrelevant, as the kubelet won't have an API server to register with.",
    { default: "true" },
  ),
  cfg(
    "register-with-taints",
    "taints",
    "registerWithTaints",
    "Register the node with the given list of taints (comma separated `<key>=<value>:<effect>`). No-op if `--register-node` is false.",
  ),
  cfg(
    "registry-burst",
    "int32",
    "registryBurst",
    "Maximum size of a bursty pulls, temporarily allows pulls to burst to this number, while still not exceeding `--registry-qps`. Only used if `--registry-qps > 0`.",
    { default: "10" },
  ),
  cfg("registry-qps", "int32", "registryPullQPS", "If > 0, limit registry pull QPS to this value. If `0`, unlimited.", { default: "5" }),
  cfg("reserved-cpus", "string", "reservedSystemCPUs", "A comma-separated list of CPUs or CPU ranges that are reserved for system and kubernetes usage."),
  cfg("resolv-conf", "string", "resolvConf", "Resolver configuration file used as the basis for the container DNS resolution configuration.", {
    default: '"/etc/resolv.conf"',
  }),
  node("root-dir", "string", "rootDir", "Directory path for managing kubelet files (volume mounts, etc).", { ...ACT, default: '"/var/lib/kubelet"' }),
  cfg(
    "rotate-certificates",
    "bool",
    "rotateCertificates",
    "Auto rotate the kubelet client certificates by requesting new certificates from the `kube-apiserver` when the certificate expiration approaches.",
  ),
  cfg(
    "rotate-server-certificates",
    "bool",
    "serverTLSBootstrap",
    "Auto-request and rotate the kubelet serving certificates by requesting new certificates from the `kube-apiserver` when the certificate expiration approaches.",
  ),
  cfg(
    "runtime-request-timeout",
    "duration",
    "runtimeRequestTimeout",
    "Timeout of all runtime requests except long running request - `pull`, `logs`, `exec` and `attach`.",
    { default: "2m0s" },
  ),
  cfg("seccomp-default", "bool", "seccompDefault", "Enable the use of `RuntimeDefault` as the default seccomp profile for all workloads."),
  cfg("serialize-image-pulls", "bool", "serializeImagePulls", "Pull images one at a time.", { default: "true" }),
  cfg(
    "streaming-connection-idle-timeout",
    "duration",
    "streamingConnectionIdleTimeout",
    "Maximum time a streaming connection can be idle before the connection is automatically closed. `0` indicates no timeout. Example: `5m`.",
    { default: "4h0m0s" },
  ),
  cfg("sync-frequency", "duration", "syncFrequency", "Max period between synchronizing running containers and config.", { default: "1m0s" }),
  cfg(
    "system-cgroups",
    "string",
    "systemCgroups",
    "Optional absolute name of cgroups in which to place all non-kernel processes that are not already inside a cgroup under '/'. Empty for no container. Rolling back the flag requires a reboot.",
  ),
  cfg(
    "system-reserved",
    "mapStringString",
    "systemReserved",
    "A set of `<resource name>=<resource quantity>` (e.g. `cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000`) pairs that describe resources reserved for non-kubernetes components. Currently only `cpu`, `memory` and `pid` are supported.",
  ),
  cfg(
    "system-reserved-cgroup",
    "string",
    "systemReservedCgroup",
    "Absolute name of the top level cgroup that is used to manage non-kubernetes components for which compute resources were reserved via `--system-reserved` flag. Ex. `/system-reserved`.",
  ),
  cfg(
    "tls-cert-file",
    "string",
    "tlsCertFile",
    "File containing x509 certificate used for serving HTTPS (with intermediate certs, if any, concatenated after server cert).",
  ),
  cfg(
    "tls-cipher-suites",
    "stringSlice",
    "tlsCipherSuites",
    "Comma-separated list of cipher suites for the server. If omitted, the default Go cipher suites will be used.",
  ),
  cfg("tls-min-version", "string", "tlsMinVersion", "Minimum TLS version supported."),
  cfg("tls-private-key-file", "string", "tlsPrivateKeyFile", "File containing x509 private key matching `--tls-cert-file`."),
  cfg(
    "topology-manager-policy",
    "string",
    "topologyManagerPolicy",
    "Topology Manager policy to use. Possible values: `none`, `best-effort`, `restricted`, `single-numa-node`.",
    { default: '"none"' },
  ),
  cfg(
    "topology-manager-policy-options",
    "mapStringString",
    "topologyManagerPolicyOptions",
    "A set of `key=value` Topology Manager policy options to use, to fine tune their behaviour.",
  ),
  cfg("topology-manager-scope", "string", "topologyManagerScope", "Scope to which topology hints are applied. Possible values: `container`, `pod`.", {
    default: '"container"',
  }),
  node(
    "unsafe-loopback-debug-handlers",
    "bool",
    "unsafeLoopbackDebugHandlers",
    "bunlet: standalone without TLS, also serve `/exec`, `/attach`, `/portForward`, `/run`, `/containerLogs` and `/logs` on the plain-HTTP loopback main port, where there is no authentication: every local process may then run commands in every container and read every log. Without it they answer 403. Ignored when the main port is TLS (API-server mode, TLS files, a client CA).",
    ACT,
  ),
  node("v", "level", "v", "number for the log level verbosity", { ...ACT, shorthand: "v" }),
  node("version", "version", "version", "Print version information and quit; `--version=vX.Y.Z...` sets the reported version.", ACT),
  cfg("vmodule", "vmodule", "logging.vmodule", "comma-separated list of pattern=N settings for file-filtered logging (only works for text log format)", {
    deprecated: false,
  }),
  cfg("volume-plugin-dir", "string", "volumePluginDir", "The full path of the directory in which to search for additional third party volume plugins.", {
    default: '"/usr/libexec/kubernetes/kubelet-plugins/volume/exec/"',
  }),
  cfg(
    "volume-stats-agg-period",
    "duration",
    "volumeStatsAggPeriod",
    "Specifies interval for kubelet to calculate and cache the volume disk usage for all pods and volumes. To disable volume calculations, set to a negative number.",
    { default: "1m0s" },
  ),
];

const BY_NAME = new Map(KUBELET_FLAGS.map((f) => [f.name, f]));
const BY_SHORTHAND = new Map(KUBELET_FLAGS.filter((f) => f.shorthand).map((f) => [f.shorthand!, f]));

/** The flag spec for a name ("eviction-hard" or "eviction_hard"), if bunlet knows it. */
export function findFlag(name: string): FlagSpec | undefined {
  return BY_NAME.get(normalizeFlagName(name));
}

/** cliflag.WordSepNormalizeFunc: "_" and "-" are interchangeable in flag names. */
export const normalizeFlagName = (name: string) => name.replaceAll("_", "-");

/** One flag occurrence on the command line, its value already converted. */
export interface FlagAssignment {
  spec: FlagSpec;
  /** The argument as typed, for messages. */
  arg: string;
  raw: string;
  value: unknown;
}

export interface ParsedArgs {
  assignments: FlagAssignment[];
  /** pflag's deprecation notices for deprecated flags that were used. */
  warnings: string[];
}

/** Parses kubelet argv (without the program name) the way pflag does. Throws ConfigError. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const assignments: FlagAssignment[] = [];
  const warnings: string[] = [];
  const positional: string[] = [];
  const add = (spec: FlagSpec, raw: string, arg: string) => {
    assignments.push({ spec, arg, raw, value: convertFlagValue(spec, raw) });
    if (spec.deprecated && !warnings.some((w) => w.startsWith(`Flag --${spec.name} `))) {
      warnings.push(`Flag --${spec.name} has been deprecated, ${spec.deprecated}`);
    }
  };
  const noOptValue = (spec: FlagSpec) => (spec.kind === "bool" ? "true" : spec.kind === "version" ? "true" : undefined);

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith("--") && arg.length > 2) {
      const body = arg.slice(2);
      const eq = body.indexOf("=");
      const name = normalizeFlagName(eq < 0 ? body : body.slice(0, eq));
      if (name.startsWith("-") || name.startsWith("=")) {
        throw new ConfigError(`bad flag syntax: ${arg}`, { source: arg });
      }
      const spec = BY_NAME.get(name);
      if (!spec) throw new ConfigError(`unknown flag: --${name}`, { source: arg });
      if (eq >= 0) add(spec, body.slice(eq + 1), arg);
      else if (noOptValue(spec) !== undefined) add(spec, noOptValue(spec)!, arg);
      else if (i + 1 < argv.length) add(spec, argv[++i]!, `${arg} ${argv[i]}`);
      else throw new ConfigError(`flag needs an argument: --${name}`, { source: arg });
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      // Shorthands: -v=4, -v 4, -v4, -h.
      const c = arg[1]!;
      const spec = BY_SHORTHAND.get(c);
      if (!spec) throw new ConfigError(`unknown shorthand flag: '${c}' in ${arg}`, { source: arg });
      const rest = arg.slice(2);
      if (rest.startsWith("=")) add(spec, rest.slice(1), arg);
      else if (noOptValue(spec) !== undefined) {
        if (rest !== "") throw new ConfigError(`unknown shorthand flag: '${rest[0]}' in ${arg}`, { source: arg });
        add(spec, noOptValue(spec)!, arg);
      } else if (rest !== "") add(spec, rest, arg);
      else if (i + 1 < argv.length) add(spec, argv[++i]!, `${arg} ${argv[i]}`);
      else throw new ConfigError(`flag needs an argument: '${c}' in -${c}`, { source: arg });
      continue;
    }
    positional.push(arg);
  }
  if (positional.length > 0) {
    // The kubelet takes no arguments (cmd/kubelet/app/server.go).
    throw new ConfigError(`unknown command ${positional[0]}`, { source: positional[0] });
  }
  return { assignments, warnings };
}

/** Converts one flag value to its typed form; the error names the flag as pflag does. */
export function convertFlagValue(spec: FlagSpec, raw: string): unknown {
  try {
    return convert(spec.kind, raw);
  } catch (e) {
    if (!(e instanceof SyntaxProblem)) throw e;
    throw new ConfigError(`invalid argument ${JSON.stringify(raw)} for "--${spec.name}" flag: ${e.message}`, {
      source: `--${spec.name}`,
      field: spec.configField,
      value: raw,
    });
  }
}

function convert(kind: FlagKind, raw: string): unknown {
  switch (kind) {
    case "string":
    case "version":
      return raw;
    case "bool":
      return parseGoBool(raw);
    case "int32":
      return parseGoInt(raw, 32);
    case "int64":
      return parseGoInt(raw, 64);
    case "float64":
      return parseGoFloat(raw);
    case "level": {
      const v = parseGoInt(raw, 32);
      if (v < 0) throw new SyntaxProblem(`verbosity must be a non-negative integer, got ${v}`);
      return v;
    }
    case "duration": {
      const problem = durationProblem(raw);
      if (problem) throw new SyntaxProblem(problem);
      return canonicalDuration(raw);
    }
    case "ip":
      // utilflag.IPVar accepts any IP; netutils.ParseIPSloppy also allows leading zeros in IPv4.
      if (isIP(raw) === 0 && isIP(raw.replace(/(^|\.)0+(\d)/g, "$1$2")) === 0) {
        throw new SyntaxProblem(`${JSON.stringify(raw)} is not a valid IP address`);
      }
      return raw;
    case "mapStringString":
      return parseKeyValueMap(raw, "=");
    case "mapLangle":
      return parseKeyValueMap(raw, "<");
    case "mapStringBool":
      return parseBoolMap(raw);
    case "colonMultimap":
      return parseColonMultimap(raw);
    case "configurationMap":
      return parseConfigurationMap(raw);
    case "stringSlice":
      return parseStringSlice(raw);
    case "taints":
      return parseTaints(raw);
    case "vmodule":
      return parseVModule(raw);
  }
}

/** klog's --vmodule: "pattern=N,pattern2=M". */
function parseVModule(raw: string): { filePattern: string; verbosity: number }[] {
  if (raw === "") return [];
  return raw.split(",").map((piece) => {
    const i = piece.indexOf("=");
    if (i <= 0) throw new SyntaxProblem(`${JSON.stringify(piece)} does not have the pattern=N format`);
    const n = Number(piece.slice(i + 1));
    if (!Number.isInteger(n) || n < 0) throw new SyntaxProblem(`parsing verbosity in ${JSON.stringify(piece)}: want a non-negative integer`);
    return { filePattern: piece.slice(0, i), verbosity: n };
  });
}
