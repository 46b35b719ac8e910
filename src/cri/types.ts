// TypeScript shapes of the CRI v1 messages bunlet uses (src/cri/api.proto), as protobufjs encodes and
// decodes them: camelCase field names, enums as their upstream names, int64 as number (nanosecond
// timestamps lose sub-microsecond precision, which nothing here needs), maps as records.
// Replies are decoded with defaults, so scalar fields are always present; unset sub-messages are null.

export type Labels = Record<string, string>;

export type NamespaceMode = "POD" | "CONTAINER" | "NODE" | "TARGET";
export type PodSandboxState = "SANDBOX_READY" | "SANDBOX_NOTREADY";
export type ContainerState = "CONTAINER_CREATED" | "CONTAINER_RUNNING" | "CONTAINER_EXITED" | "CONTAINER_UNKNOWN";
export type MountPropagation = "PROPAGATION_PRIVATE" | "PROPAGATION_HOST_TO_CONTAINER" | "PROPAGATION_BIDIRECTIONAL";

export interface VersionResponse {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

/** A runtime handler the runtime reports (CRI v1.30+): its name ("" is the default) and features. */
export interface RuntimeHandler {
  name: string;
  features: { recursiveReadOnlyMounts: boolean; userNamespaces: boolean } | null;
}

export interface StatusResponse {
  status: { conditions: RuntimeCondition[] } | null;
  info: Record<string, string>;
  /** Empty from runtimes older than CRI v1.30 (containerd 1.6). */
  runtimeHandlers?: RuntimeHandler[];
}

/** RuntimeConfigResponse: `linux` is null when the runtime left it unset (then it tells nothing). */
export interface RuntimeConfigResponse {
  linux: { cgroupDriver: "SYSTEMD" | "CGROUPFS" | number } | null;
}

export interface Int64Value {
  value: number;
}

/** One contiguous range of ids: containerId… inside the user namespace is hostId… outside. */
export interface IDMapping {
  hostId: number;
  containerId: number;
  length: number;
}

/** The pod's user namespace: mode POD with its mappings, or NODE (the host's). */
export interface UserNamespace {
  mode: NamespaceMode;
  uids?: IDMapping[];
  gids?: IDMapping[];
}

export interface NamespaceOption {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
  targetId?: string;
  usernsOptions?: UserNamespace;
}

export interface LinuxContainerResources {
  cpuPeriod?: number;
  cpuQuota?: number;
  cpuShares?: number;
  memoryLimitInBytes?: number;
  oomScoreAdj?: number;
  cpusetCpus?: string;
  cpusetMems?: string;
  unified?: Record<string, string>;
  memorySwapLimitInBytes?: number;
}

export interface SELinuxOption {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
}

export type SecurityProfileType = "RuntimeDefault" | "Unconfined" | "Localhost";

/** Seccomp or AppArmor profile: Localhost names a file path (seccomp) or a loaded profile (AppArmor). */
export interface SecurityProfile {
  profileType: SecurityProfileType;
  localhostRef?: string;
}

export interface LinuxSandboxSecurityContext {
  namespaceOptions?: NamespaceOption;
  selinuxOptions?: SELinuxOption;
  runAsUser?: Int64Value;
  runAsGroup?: Int64Value;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  privileged?: boolean;
  seccomp?: SecurityProfile;
  apparmor?: SecurityProfile;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

export interface DNSConfig {
  servers?: string[];
  searches?: string[];
  options?: string[];
}

export interface PortMapping {
  protocol?: "TCP" | "UDP" | "SCTP";
  containerPort?: number;
  hostPort?: number;
  hostIp?: string;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname?: string;
  logDirectory?: string;
  dnsConfig?: DNSConfig;
  portMappings?: PortMapping[];
  labels?: Labels;
  annotations?: Labels;
  linux?: {
    cgroupParent?: string;
    securityContext?: LinuxSandboxSecurityContext;
    sysctls?: Record<string, string>;
    overhead?: LinuxContainerResources;
    resources?: LinuxContainerResources;
  };
}

export interface PodSandboxFilter {
  id?: string;
  state?: { state: PodSandboxState };
  labelSelector?: Labels;
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  /** Nanoseconds since the epoch. */
  createdAt: number;
  labels: Labels;
  annotations: Labels;
  runtimeHandler: string;
}

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  createdAt: number;
  network: { ip: string; additionalIps: { ip: string }[] } | null;
  labels: Labels;
  annotations: Labels;
  runtimeHandler: string;
}

export interface PodSandboxStatusResponse {
  status: PodSandboxStatus | null;
  info: Record<string, string>;
}

export interface ImageSpec {
  image: string;
  annotations?: Labels;
  userSpecifiedImage?: string;
}

export interface KeyValue {
  key: string;
  value: string;
}

export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
  selinuxRelabel?: boolean;
  propagation?: MountPropagation;
  /** An idmapped mount: the pod's user namespace mappings (hostUsers: false). */
  uidMappings?: IDMapping[];
  gidMappings?: IDMapping[];
}

export interface LinuxContainerSecurityContext {
  capabilities?: { addCapabilities?: string[]; dropCapabilities?: string[] };
  privileged?: boolean;
  namespaceOptions?: NamespaceOption;
  selinuxOptions?: SELinuxOption;
  runAsUser?: Int64Value;
  runAsGroup?: Int64Value;
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  /** Deprecated string form of `apparmor` ("runtime/default", "unconfined", "localhost/<name>"), still sent for older runtimes. */
  apparmorProfile?: string;
  noNewPrivs?: boolean;
  maskedPaths?: string[];
  readonlyPaths?: string[];
  seccomp?: SecurityProfile;
  apparmor?: SecurityProfile;
}

export interface ContainerMetadata {
  name: string;
  attempt: number;
}

export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: ImageSpec;
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: KeyValue[];
  mounts?: Mount[];
  /** Host device nodes (device plugins' DeviceSpec). */
  devices?: Device[];
  labels?: Labels;
  annotations?: Labels;
  logPath?: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: { resources?: LinuxContainerResources; securityContext?: LinuxContainerSecurityContext };
  /** CDI devices by fully qualified name (CRI field CDI_devices). */
  CDIDevices?: { name: string }[];
}

export interface Device {
  containerPath: string;
  hostPath: string;
  /** cgroup permissions, e.g. "rwm". */
  permissions: string;
}

export interface ContainerFilter {
  id?: string;
  state?: { state: ContainerState };
  podSandboxId?: string;
  labelSelector?: Labels;
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata | null;
  image: ImageSpec | null;
  imageRef: string;
  state: ContainerState;
  createdAt: number;
  labels: Labels;
  annotations: Labels;
  imageId: string;
}

export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata | null;
  state: ContainerState;
  /** Nanoseconds since the epoch; 0 when not applicable. */
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  image: ImageSpec | null;
  imageRef: string;
  /** e.g. "OOMKilled", "Error", "Completed" (containerd sets these). */
  reason: string;
  message: string;
  labels: Labels;
  annotations: Labels;
  mounts: Mount[];
  logPath: string;
  resources: { linux: LinuxContainerResources | null } | null;
  imageId: string;
}

export interface ContainerStatusResponse {
  status: ContainerStatus | null;
  info: Record<string, string>;
}

export interface ExecSyncResponse {
  stdout: Uint8Array;
  stderr: Uint8Array;
  exitCode: number;
}

/** Which streams an Exec/Attach session carries (CRI: one of stdin/stdout/stderr must be true; tty ⇒ no stderr). */
export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export interface UInt64Value {
  value: number;
}

export interface ContainerStats {
  attributes: { id: string; metadata: ContainerMetadata | null; labels: Labels; annotations: Labels } | null;
  cpu: { timestamp: number; usageCoreNanoSeconds: UInt64Value | null; usageNanoCores: UInt64Value | null } | null;
  memory: {
    timestamp: number;
    workingSetBytes: UInt64Value | null;
    availableBytes: UInt64Value | null;
    usageBytes: UInt64Value | null;
    rssBytes: UInt64Value | null;
    pageFaults: UInt64Value | null;
    majorPageFaults: UInt64Value | null;
  } | null;
  writableLayer: FilesystemUsage | null;
}

export interface ContainerStatsFilter {
  id?: string;
  podSandboxId?: string;
  labelSelector?: Labels;
}

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  uid: Int64Value | null;
  username: string;
  spec: ImageSpec | null;
  pinned: boolean;
}

export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface FilesystemUsage {
  timestamp: number;
  fsId: { mountpoint: string } | null;
  usedBytes: UInt64Value | null;
  inodesUsed: UInt64Value | null;
}

export interface ImageFsInfoResponse {
  imageFilesystems: FilesystemUsage[];
  containerFilesystems: FilesystemUsage[];
}
