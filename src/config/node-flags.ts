// The flags of settings that exist only on the command line, the NodeFlags record (upstream
// KubeletFlags.AddFlags in cmd/kubelet/app/options/options.go), and the global flags --config, -v,
// --version and --help (upstream globalflags.go and NewKubeletCommand). Unlike a config flag, a node
// flag says itself whether bunlet acts on it.
import { FLAG_TYPE_NAME, type FlagKind, type FlagSpec, type NodeFlags } from "./flag-spec.ts";

type Opts = { default?: string; actedOn?: boolean; deprecated?: string | false; shorthand?: string };

/** A flag that sets a NodeFlags key. */
const node = (name: string, kind: FlagKind, nodeFlag: keyof NodeFlags, description: string, o: Opts = {}): FlagSpec => ({
  name,
  kind,
  type: FLAG_TYPE_NAME[kind],
  description,
  nodeFlag,
  default: o.default,
  shorthand: o.shorthand,
  deprecated: o.deprecated || undefined,
  actedOn: o.actedOn ?? false,
});
const ACT = { actedOn: true } as const;

/** The flags of flag-only settings, sorted by name. */
export const NODE_FLAG_SPECS: readonly FlagSpec[] = [
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
  node("cloud-config", "string", "cloudConfig", "The path to the cloud provider configuration file. Empty string for no configuration file."),
  node(
    "cloud-provider",
    "string",
    "cloudProvider",
    "The provider for cloud services. Set to cloud provider name for using an external cloud provider; bunlet supports only none.",
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
  node("help", "bool", "help", "help for kubelet", { ...ACT, shorthand: "h" }),
  node("hostname-override", "string", "hostnameOverride", "If non-empty, will use this string as identification instead of the actual hostname.", ACT),
  node(
    "image-credential-provider-bin-dir",
    "string",
    "imageCredentialProviderBinDir",
    "The path to the directory where credential provider plugin binaries are located.",
  ),
  node("image-credential-provider-config", "string", "imageCredentialProviderConfig", "The path to the credential provider plugin config file."),
  node(
    "kubeconfig",
    "string",
    "kubeconfig",
    "Path to a kubeconfig file, specifying how to connect to the API server. Providing `--kubeconfig` enables API server mode, omitting `--kubeconfig` enables standalone mode.",
    ACT,
  ),
  node("lock-file", "string", "lockFile", "The path to file for kubelet to use as a lock file.", ACT),
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
  node(
    "minimum-container-ttl-duration",
    "duration",
    "minimumContainerTTLDuration",
    "Minimum age for a finished container before it is garbage collected. Examples: `300ms`, `10s` or `2h45m`.",
    { actedOn: true, deprecated: "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version." },
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
  node(
    "pod-infra-container-image",
    "string",
    "podInfraContainerImage",
    "Specified image will not be pruned by the image garbage collector. CRI implementations have their own configuration to set this image.",
    { default: '"registry.k8s.io/pause:3.10"', deprecated: "will be removed in 1.35. Image garbage collector will get sandbox image information from CRI." },
  ),
  node("root-dir", "string", "rootDir", "Directory path for managing kubelet files (volume mounts, etc).", { ...ACT, default: '"/var/lib/kubelet"' }),
  node(
    "unsafe-loopback-debug-handlers",
    "bool",
    "unsafeLoopbackDebugHandlers",
    "bunlet: standalone without TLS, also serve `/exec`, `/attach`, `/portForward`, `/run`, `/containerLogs` and `/logs` on the plain-HTTP loopback main port, where there is no authentication: every local process may then run commands in every container and read every log. Without it they answer 403. Ignored when the main port is TLS (API-server mode, TLS files, a client CA).",
    ACT,
  ),
  node("v", "level", "v", "number for the log level verbosity", { ...ACT, shorthand: "v" }),
  node("version", "version", "version", "Print version information and quit; `--version=vX.Y.Z...` sets the reported version.", ACT),
];
