// The slice of a v1 Pod that kuberuntime reads, structurally (field names exactly core/v1). PODS' full
// `Pod` (src/pod/types.ts) and eviction's `PodLike` are assignable; every field beyond PodLike's is
// optional so a PodLike handed to Runtime.syncPod can be read as this without conversion.
import type { LifecycleHandlerSpec } from "../lifecycle-hooks.ts";
import type { PodLike } from "../pod-like.ts";

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
  securityContext?: {
    runAsUser?: number;
    runAsGroup?: number;
    privileged?: boolean;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
  };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string; subPathExpr?: string; mountPropagation?: string }[];
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  stdin?: boolean;
  tty?: boolean;
  restartPolicy?: string;
  lifecycle?: { postStart?: LifecycleHandlerSpec; preStop?: LifecycleHandlerSpec };
  livenessProbe?: { terminationGracePeriodSeconds?: number };
  startupProbe?: { terminationGracePeriodSeconds?: number };
}

export interface KubePod extends PodLike {
  metadata: PodLike["metadata"];
  spec: PodLike["spec"] & {
    containers: KubeContainer[];
    initContainers?: KubeContainer[];
    restartPolicy?: string;
    hostNetwork?: boolean;
    hostname?: string;
    nodeName?: string;
    serviceAccountName?: string;
    imagePullSecrets?: { name?: string }[];
    subdomain?: string;
    securityContext?: { runAsUser?: number; runAsGroup?: number; fsGroup?: number };
    terminationGracePeriodSeconds?: number;
  };
}

/** Reads a PodLike as the wider structural pod: all extra fields are optional, so this only widens. */
export function asKubePod(pod: PodLike): KubePod {
  return pod as KubePod;
}

export function podIdentity(pod: PodLike): { name: string; namespace: string; uid: string } {
  return { name: pod.metadata.name, namespace: pod.metadata.namespace ?? "", uid: pod.metadata.uid ?? "" };
}
