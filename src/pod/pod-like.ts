// The structural slice of a v1 Pod that eviction, QoS and admission read. Field names are exactly
// core/v1's so a parsed manifest, a `/pods` PodList item or PODS' full `Pod` (src/pod/types.ts) is
// assignable without conversion. Everything is optional because files and API objects omit freely.

export type ResourceList = Record<string, string | number>;

export interface ResourceRequirementsLike {
  requests?: ResourceList;
  limits?: ResourceList;
}

export interface ContainerLike {
  name: string;
  resources?: ResourceRequirementsLike;
  /** Init containers only: "Always" makes it a restartable sidecar (KEP-753). */
  restartPolicy?: string;
}

export interface VolumeLike {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string | number };
  hostPath?: { path?: string };
  configMap?: unknown;
  gitRepo?: unknown;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  ephemeral?: unknown;
  csi?: unknown;
}

export interface TolerationLike {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

export interface PodLike {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    creationTimestamp?: string;
    /** Bumped by the API server on each spec change (a resize among them). */
    generation?: number;
  };
  spec: {
    containers: ContainerLike[];
    initContainers?: ContainerLike[];
    priority?: number;
    priorityClassName?: string;
    volumes?: VolumeLike[];
    tolerations?: TolerationLike[];
    terminationGracePeriodSeconds?: number;
    overhead?: ResourceList;
  };
  status?: { phase?: string; qosClass?: string; reason?: string };
}

/** "namespace/name", as kubelet logs (klog.KObj) print a pod. */
export function podKey(pod: { metadata: { namespace?: string; name: string } }): string {
  return podKeyOf(pod.metadata.namespace, pod.metadata.name);
}

/** podKey of a pod known by its namespace and name alone (klog.KRef): a runtime pod, a record, a PodRef. */
export function podKeyOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}

/** The pod's UID, falling back to namespace/name for file pods that have none yet. */
export function podUid(pod: PodLike): string {
  return pod.metadata.uid || podKey(pod);
}

// Upstream kubelet/types: config.source annotation marks where a pod came from ("file", "http",
// "api"); config.mirror marks the API-server mirror of a static pod.
export const CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source";
export const CONFIG_MIRROR_ANNOTATION = "kubernetes.io/config.mirror";
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/**
 * The built-in PriorityClasses every cluster has (upstream scheduling.SystemPriorityClasses):
 * system-cluster-critical = SystemCriticalPriority, system-node-critical = SystemCriticalPriority + 1000.
 */
export const SYSTEM_PRIORITY_CLASSES: Readonly<Record<string, number>> = {
  "system-cluster-critical": SYSTEM_CRITICAL_PRIORITY,
  "system-node-critical": SYSTEM_CRITICAL_PRIORITY + 1000,
};

export function isStaticPod(pod: PodLike): boolean {
  const source = pod.metadata.annotations?.[CONFIG_SOURCE_ANNOTATION];
  return source !== undefined && source !== "api";
}

export function isMirrorPod(pod: PodLike): boolean {
  return pod.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION] !== undefined;
}

/** kubelettypes.IsCriticalPod: static, mirror, or priority ≥ SystemCriticalPriority. */
export function isCriticalPod(pod: PodLike): boolean {
  return isStaticPod(pod) || isMirrorPod(pod) || isCriticalPriority(pod);
}

export function isCriticalPriority(pod: PodLike): boolean {
  return pod.spec.priority !== undefined && pod.spec.priority >= SYSTEM_CRITICAL_PRIORITY;
}
