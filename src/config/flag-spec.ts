// A kubelet flag as bunlet declares it: how its value parses (FlagKind), the type and default
// `--help` prints, and the one setting it targets — a KubeletConfiguration field or a NodeFlags key
// (upstream cmd/kubelet/app/options/options.go: KubeletFlags and the KubeletConfiguration flags).
// The flags themselves: node-flags.ts and config-flags.ts; the table and its parser: flags.ts.

/** How a flag's value parses (flags.ts convertFlagValue). */
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

/** One flag: its name, what `--help` prints for it and the setting it targets. */
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

/** The type `--help` prints after a flag's name, by kind (pflag's Value.Type()). */
export const FLAG_TYPE_NAME: Record<FlagKind, string> = {
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
