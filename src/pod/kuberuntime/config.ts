// CRI PodSandboxConfig and ContainerConfig built from a pod, as upstream generatePodSandboxConfig
// (kuberuntime_sandbox.go) and generateContainerConfig (kuberuntime_container.go). Pure: every host
// fact (log root, cgroup parent, memory capacity, volume host paths) comes in through `ConfigInputs`.
import { isAbsolute, join } from "node:path";
import type {
  ContainerConfig,
  Device,
  DNSConfig,
  KeyValue,
  LinuxContainerResources,
  Mount,
  MountPropagation,
  NamespaceOption,
  PodSandboxConfig,
  PortMapping,
  UserNamespace,
} from "../../cri/types.ts";
import { expandSubPathExpr, subPathError, type DownwardContext, type PodApiObjects } from "../volumes/index.ts";
import { containerSecurityContext, podSysctls, sandboxSecurityContext, verifyRunAsNonRoot, type ImageUser, type SeccompOptions } from "../security/index.ts";
import { ETC_HOSTS_PATH, kernelHostname, truncateHostname } from "../network/index.ts";
import { expand, mappingFor } from "../expansion.ts";
import { makeEnvironmentVariables } from "./env.ts";
import { hashContainer } from "./hash.ts";
import { newContainerAnnotations, newContainerLabels, newPodLabels } from "./labels.ts";
import { containerResources, type ContainerCgroupHost } from "./resources.ts";
import { terminationMessageMount, terminationMessagePathOf } from "./termination-message.ts";
import type { KubeContainer, KubePod } from "./types.ts";

export interface PodRef {
  name: string;
  namespace: string;
  uid: string;
}

export interface ConfigInputs {
  /** Root of pod log directories (kubelet podLogsDir, default /var/log/pods). */
  podLogsDir: string;
  /** LinuxPodSandboxConfig.cgroup_parent, e.g. /kubepods/burstable/pod<uid>; empty = runtime default. */
  cgroupParent?: string;
  /** Node memory capacity, for the Burstable oom_score_adj. */
  memoryCapacityBytes: number;
  /** cgroup v2 / swap controller of the host, for LinuxContainerResources.unified; default: v1 (none). */
  cgroupHost?: ContainerCgroupHost;
  /** The CPU manager's cpuset for a container ("" or undefined: none set) (upstream PreCreateContainer's GetCPUAffinity). */
  cpuAffinity?(containerName: string): string;
  /** Host path backing a pod volume (emptyDir dir, hostPath path); undefined = unknown volume. */
  volumeHostPath(pod: PodRef, volumeName: string): string | undefined;
  /** Pod/host IPs and node allocatable for env valueFrom (downward API); default: none known. */
  downward?: Omit<DownwardContext, "pod">;
  /**
   * The host path to mount for a volume's sub path: created, checked to stay inside the volume and
   * bind-mounted from a held fd (volumes/subpath-bind.ts prepareSafeSubPath); default: a join after
   * the pure checks (tests).
   */
  prepareSubPath?(volumePath: string, subPath: string, mountName: string, containerName: string, volumeMountIndex: number): string;
  /** Secrets and configMaps fetched for this sync (env valueFrom/envFrom of API pods). */
  objects?: PodApiObjects;
  /** The pod's service environment variables (upstream getServiceEnvVarMap); throws while they cannot be made. Default: none. */
  serviceEnv?(): ReadonlyMap<string, string>;
  /** A warning event about the pod (reason, message), e.g. InvalidEnvironmentVariableNames. */
  onWarning?(reason: string, message: string): void;
  /** Volumes always mounted read-only whatever the mount says (downwardAPI, projected: upstream's ReadOnly attribute). */
  readOnlyVolume?(volumeName: string): boolean;
  /** Seccomp profile root and seccompDefault; default: /var/lib/kubelet/seccomp, off. */
  seccomp?: SeccompOptions;
  /**
   * Creates the empty host file of a container instance's termination log (termination-message.ts);
   * undefined = no such mount (failed, or pure tests).
   */
  terminationMessageFile?(containerName: string): string | undefined;
  /** The pod's DNS for the sandbox (network/dns.ts podDnsConfig); default: none (the runtime's). */
  dnsConfig?: DNSConfig;
  /** kubelet clusterDomain, for the pod's subdomain FQDN (default ""). */
  clusterDomain?: string;
  /** Host path of the pod's managed hosts file, mounted at /etc/hosts (upstream makeHostsMount); default: none. */
  etcHostsPath?: string;
  /** The pod's user namespace (sandbox.ts usernsOptionsFor); default: none sent. */
  usernsOptions?: UserNamespace;
}

export const DEFAULT_SECCOMP: SeccompOptions = { seccompProfileRoot: "/var/lib/kubelet/seccomp", seccompDefault: false };

export class ContainerConfigError extends Error {
  constructor(
    readonly container: string,
    message: string,
  ) {
    super(message);
    this.name = "ContainerConfigError";
  }
}

/** /var/log/pods/<namespace>_<name>_<uid> (upstream BuildPodLogsDirectory). */
export function podLogsDirectory(podLogsDir: string, pod: PodRef): string {
  return join(podLogsDir, `${pod.namespace}_${pod.name}_${pod.uid}`);
}

/** <container>/<attempt>.log, relative to the sandbox log directory (upstream BuildContainerLogsPath). */
export function containerLogPath(containerName: string, attempt: number): string {
  return `${containerName}/${attempt}.log`;
}

/** Pod hostname: spec.hostname or the pod name, cut to a 63-character DNS label. */
export function podHostname(pod: KubePod): string {
  return truncateHostname(pod.spec.hostname || pod.metadata.name);
}

export function generatePodSandboxConfig(pod: KubePod, ref: PodRef, attempt: number, inputs: ConfigInputs): PodSandboxConfig {
  const hostNetwork = pod.spec.hostNetwork === true;
  const portMappings: PortMapping[] = [];
  for (const c of pod.spec.containers) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      portMappings.push({
        protocol: (p.protocol ?? "TCP") as PortMapping["protocol"],
        containerPort: p.containerPort,
        hostPort: p.hostPort,
        hostIp: p.hostIP ?? "",
      });
    }
  }
  const sysctls = podSysctls(pod);
  return {
    metadata: { name: ref.name, namespace: ref.namespace, uid: ref.uid, attempt },
    // A host-network sandbox shares the host's UTS namespace: runc refuses to set a hostname there.
    hostname: hostNetwork ? "" : kernelHostname(pod, inputs.clusterDomain ?? ""),
    logDirectory: podLogsDirectory(inputs.podLogsDir, ref),
    ...(inputs.dnsConfig ? { dnsConfig: inputs.dnsConfig } : {}),
    portMappings,
    labels: newPodLabels(ref, pod.metadata.labels),
    annotations: { ...(pod.metadata.annotations ?? {}) },
    linux: {
      cgroupParent: inputs.cgroupParent ?? "",
      securityContext: withUserns(sandboxSecurityContext(pod), inputs.usernsOptions),
      ...(Object.keys(sysctls).length > 0 ? { sysctls } : {}),
    },
  };
}

/** Expands $(VAR) from the container's env in command/args (upstream ExpandContainerCommandAndArgs). */
export function expandContainerCommand(s: string, env: Record<string, string>): string {
  return expand(s, mappingFor(new Map(Object.entries(env))));
}

/** env with envFrom and valueFrom resolved (upstream makeEnvironmentVariables); errors are CreateContainerConfigError. */
function containerEnvs(pod: KubePod, container: KubeContainer, inputs: ConfigInputs): KeyValue[] {
  const ctx: DownwardContext = { pod, nodeAllocatable: { cpuMilli: 0, memoryBytes: inputs.memoryCapacityBytes }, ...inputs.downward };
  try {
    const r = makeEnvironmentVariables(pod, container, ctx, inputs.objects, inputs.serviceEnv?.());
    for (const w of r.warnings) inputs.onWarning?.("InvalidEnvironmentVariableNames", w);
    return r.envs;
  } catch (err) {
    throw new ContainerConfigError(container.name, (err as Error).message);
  }
}

const PROPAGATION: Record<string, MountPropagation> = {
  None: "PROPAGATION_PRIVATE",
  HostToContainer: "PROPAGATION_HOST_TO_CONTAINER",
  Bidirectional: "PROPAGATION_BIDIRECTIONAL",
};

/** Mounts with sub paths (subPath, or subPathExpr expanded from env) and propagation (upstream makeMounts). */
function containerMounts(ref: PodRef, container: KubeContainer, envMap: Record<string, string>, inputs: ConfigInputs): Mount[] {
  const mounts = volumeMounts(ref, container, envMap, inputs);
  // The managed /etc/hosts, unless a volume is mounted there (upstream makeMounts).
  if (inputs.etcHostsPath && !mounts.some((m) => m.containerPath === ETC_HOSTS_PATH))
    mounts.push({ containerPath: ETC_HOSTS_PATH, hostPath: inputs.etcHostsPath, readonly: false, selinuxRelabel: true });
  return mounts;
}

function volumeMounts(ref: PodRef, container: KubeContainer, envMap: Record<string, string>, inputs: ConfigInputs): Mount[] {
  return (container.volumeMounts ?? []).map((m, index) => {
    const base = inputs.volumeHostPath(ref, m.name);
    if (base === undefined) {
      throw new ContainerConfigError(container.name, `container "${container.name}": volumeMounts name "${m.name}": no such volume on the node`);
    }
    let hostPath = base;
    try {
      const sub = m.subPathExpr ? expandSubPathExpr(m.subPathExpr, envMap) : m.subPath;
      if (sub) {
        const err = subPathError(sub);
        if (err) throw new Error(err);
        hostPath = inputs.prepareSubPath ? inputs.prepareSubPath(base, sub, m.name, container.name, index) : join(base, sub);
      }
    } catch (e) {
      throw new ContainerConfigError(container.name, (e as Error).message);
    }
    const propagation = m.mountPropagation ? PROPAGATION[m.mountPropagation] : undefined;
    const readonly = m.readOnly === true || inputs.readOnlyVolume?.(m.name) === true;
    return { containerPath: m.mountPath, hostPath, readonly, ...(propagation ? { propagation } : {}) };
  });
}

/**
 * upstream makeBlockVolumes: each volumeDevices entry a CRI Device from the volume's link on the host
 * (a raw block volume's set-up, volumes/block-volume.ts) to its devicePath, read-only ("r") when the
 * claim is, else "mrw".
 */
function blockVolumeDevices(ref: PodRef, container: KubeContainer, inputs: ConfigInputs): Device[] {
  return (container.volumeDevices ?? []).map((d) => {
    if (!isAbsolute(d.devicePath)) throw new ContainerConfigError(container.name, `error DevicePath \`${d.devicePath}\` must be an absolute path`);
    const hostPath = inputs.volumeHostPath(ref, d.name);
    if (hostPath === undefined) throw new ContainerConfigError(container.name, `cannot find volume "${d.name}" to pass into container "${container.name}"`);
    return { containerPath: d.devicePath, hostPath, permissions: inputs.readOnlyVolume?.(d.name) === true ? "r" : "mrw" };
  });
}

/** What a container start knows beyond the spec. */
export interface ContainerStartFacts {
  imageRef?: string;
  /** The image's user from ImageStatus (upstream getImageUser); unknown = root for runAsNonRoot. */
  imageUser?: ImageUser;
  /** An ephemeral container's target: the ID of the container whose process namespace it joins. */
  nsTargetId?: string;
}

export function generateContainerConfig(
  pod: KubePod,
  ref: PodRef,
  container: KubeContainer,
  attempt: number,
  inputs: ConfigInputs,
  facts: ContainerStartFacts = {},
): ContainerConfig {
  const { imageRef, imageUser, nsTargetId } = facts;
  if (!container.image) throw new ContainerConfigError(container.name, `container "${container.name}": image is required`);
  const nonRoot = verifyRunAsNonRoot(pod, container, imageUser ?? { uid: 0, username: "" });
  if (nonRoot) throw new ContainerConfigError(container.name, nonRoot);
  let securityContext;
  try {
    securityContext = containerSecurityContext(pod, container, imageUser, inputs.seccomp ?? DEFAULT_SECCOMP);
  } catch (e) {
    throw new ContainerConfigError(container.name, (e as Error).message);
  }
  // upstream generateLinuxContainerConfig: a target's PID namespace, unless the pod shares one anyway.
  const ns = securityContext.namespaceOptions;
  if (nsTargetId && ns?.pid === "CONTAINER") securityContext.namespaceOptions = { ...ns, pid: "TARGET", targetId: nsTargetId };
  withUserns(securityContext, inputs.usernsOptions);
  const envs = containerEnvs(pod, container, inputs);
  const envMap = Object.fromEntries(envs.map((e) => [e.key, e.value]));
  const mounts = containerMounts(ref, container, envMap, inputs);
  const devices = blockVolumeDevices(ref, container, inputs);
  // Created last, once nothing above can refuse the config (upstream makeMounts).
  const terminationMessagePath = terminationMessagePathOf(container);
  const terminationLog = inputs.terminationMessageFile?.(container.name);
  if (terminationLog) mounts.push(terminationMessageMount(terminationLog, terminationMessagePath));
  return {
    metadata: { name: container.name, attempt },
    image: { image: imageRef ?? container.image, userSpecifiedImage: container.image },
    command: (container.command ?? []).map((s) => expandContainerCommand(s, envMap)),
    args: (container.args ?? []).map((s) => expandContainerCommand(s, envMap)),
    workingDir: container.workingDir ?? "",
    envs,
    mounts,
    ...(devices.length > 0 ? { devices } : {}),
    labels: newContainerLabels(ref, container.name),
    annotations: newContainerAnnotations({
      hash: hashContainer(container),
      restartCount: attempt,
      terminationGracePeriodSeconds: pod.spec.terminationGracePeriodSeconds,
      terminationMessagePath,
      terminationMessagePolicy: container.terminationMessagePolicy,
      ports: container.ports,
      preStop: container.lifecycle?.preStop,
    }),
    logPath: containerLogPath(container.name, attempt),
    // upstream generateContainerConfig: Stdin, StdinOnce, Tty as the spec says (kubectl run -it).
    stdin: container.stdin === true,
    stdinOnce: container.stdinOnce === true,
    tty: container.tty === true,
    linux: {
      resources: withCpuset(containerResources(pod, container, inputs.memoryCapacityBytes, inputs.cgroupHost), inputs.cpuAffinity?.(container.name)),
      securityContext,
    },
  };
}

/** The user namespace set in a security context's namespace options (upstream NamespacesForPod's UsernsOptions). */
function withUserns<T extends { namespaceOptions?: NamespaceOption }>(sc: T, userns: UserNamespace | undefined): T {
  if (userns) sc.namespaceOptions = { ...sc.namespaceOptions, usernsOptions: userns };
  return sc;
}

/**
 * Every mount idmapped with the pod's mappings when it has its own user namespace (upstream
 * applyPlatformSpecificContainerConfig), once all mounts are known (the device plugins' too).
 */
export function idmapMounts(config: ContainerConfig, userns: UserNamespace | undefined): ContainerConfig {
  if (!userns?.uids?.length || !config.mounts?.length) return config;
  const mounts = config.mounts.map((m) => ({
    ...m,
    uidMappings: userns.uids!.map((x) => ({ ...x })),
    gidMappings: (userns.gids ?? []).map((x) => ({ ...x })),
  }));
  return { ...config, mounts };
}

/** LinuxContainerResources.cpusetCpus from the CPU manager, when it gives one. */
function withCpuset(resources: LinuxContainerResources, cpusetCpus: string | undefined): LinuxContainerResources {
  return cpusetCpus ? { ...resources, cpusetCpus } : resources;
}
