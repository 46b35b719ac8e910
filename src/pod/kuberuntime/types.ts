// The slice of a v1 Pod that kuberuntime reads, structurally (field names exactly core/v1). PODS' full
// `Pod` (src/pod/types.ts) and eviction's `PodLike` are assignable; every field beyond PodLike's is
// optional so a PodLike handed to Runtime.syncPod can be read as this without conversion.
import type { LifecycleHandlerSpec } from "../lifecycle-hooks.ts";
import type { PodLike } from "../pod-like.ts";

/** core/v1 SeccompProfile / AppArmorProfile. */
export interface KubeSecurityProfile {
  type: "RuntimeDefault" | "Unconfined" | "Localhost";
  localhostProfile?: string;
}

export interface KubeSELinuxOptions {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
}

/** core/v1 SecurityContext (container). */
export interface KubeSecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  privileged?: boolean;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: KubeSecurityProfile;
  appArmorProfile?: KubeSecurityProfile;
  seLinuxOptions?: KubeSELinuxOptions;
  procMount?: string;
}

/** core/v1 PodSecurityContext. */
export interface KubePodSecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  fsGroup?: number;
  fsGroupChangePolicy?: string;
  supplementalGroups?: number[];
  sysctls?: { name: string; value: string }[];
  seccompProfile?: KubeSecurityProfile;
  appArmorProfile?: KubeSecurityProfile;
  seLinuxOptions?: KubeSELinuxOptions;
}

export interface KubeContainer {
  name: string;
  image?: string;
  imagePullPolicy?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: {
    name: string;
    value?: string;
    valueFrom?: {
      fieldRef?: { fieldPath: string };
      resourceFieldRef?: { containerName?: string; resource: string; divisor?: string | number };
      secretKeyRef?: { name?: string; key: string; optional?: boolean };
      configMapKeyRef?: { name?: string; key: string; optional?: boolean };
    };
  }[];
  envFrom?: { prefix?: string; configMapRef?: { name?: string; optional?: boolean }; secretRef?: { name?: string; optional?: boolean } }[];
  ports?: { name?: string; containerPort: number; hostPort?: number; hostIP?: string; protocol?: string }[];
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  /** Per resource, whether an in-place resize restarts the container (default NotRequired). */
  resizePolicy?: { resourceName: string; restartPolicy: string }[];
  securityContext?: KubeSecurityContext;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string; subPathExpr?: string; mountPropagation?: string }[];
  /** Raw block volumes (a Block claim's device at devicePath). */
  volumeDevices?: { name: string; devicePath: string }[];
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  restartPolicy?: string;
  lifecycle?: { postStart?: LifecycleHandlerSpec; preStop?: LifecycleHandlerSpec };
  livenessProbe?: { terminationGracePeriodSeconds?: number };
  startupProbe?: { terminationGracePeriodSeconds?: number };
}

/** core/v1 EphemeralContainer: a container added to a running pod (kubectl debug), never restarted. */
export interface KubeEphemeralContainer extends KubeContainer {
  /** The container whose process namespace it joins (upstream nsTarget). */
  targetContainerName?: string;
}

export interface KubePod extends PodLike {
  metadata: PodLike["metadata"];
  spec: PodLike["spec"] & {
    containers: KubeContainer[];
    initContainers?: KubeContainer[];
    ephemeralContainers?: KubeEphemeralContainer[];
    restartPolicy?: string;
    hostNetwork?: boolean;
    hostname?: string;
    nodeName?: string;
    serviceAccountName?: string;
    imagePullSecrets?: { name?: string }[];
    subdomain?: string;
    securityContext?: KubePodSecurityContext;
    hostPID?: boolean;
    hostIPC?: boolean;
    shareProcessNamespace?: boolean;
    hostAliases?: { ip: string; hostnames?: string[] }[];
    setHostnameAsFQDN?: boolean;
    dnsPolicy?: string;
    dnsConfig?: { nameservers?: string[]; searches?: string[]; options?: { name: string; value?: string }[] };
    terminationGracePeriodSeconds?: number;
    /** Defaulted to true by the API server (and, as upstream's defaults, for static pods). */
    enableServiceLinks?: boolean;
    /** The RuntimeClass whose handler the sandbox runs with ("" or unset: the runtime's default). */
    runtimeClassName?: string;
    /** false: the pod's own user namespace (src/pod/userns). */
    hostUsers?: boolean;
  };
}

/** Reads a PodLike as the wider structural pod: all extra fields are optional, so this only widens. */
export function asKubePod(pod: PodLike): KubePod {
  return pod as KubePod;
}

export function podIdentity(pod: PodLike): { name: string; namespace: string; uid: string } {
  return { name: pod.metadata.name, namespace: pod.metadata.namespace ?? "", uid: pod.metadata.uid ?? "" };
}

/** A container computePodActions decided to kill (upstream containerToKillInfo). */
export interface ContainerToKill {
  id: string;
  name: string;
  /** Why, as upstream logs/records it, e.g. "Container app definition changed, will be restarted". */
  message: string;
  /** Which probe killed it, for the probe-level terminationGracePeriodSeconds (termination.ts). */
  reason?: "liveness" | "startup";
}
