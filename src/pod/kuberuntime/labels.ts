// Labels and annotations kuberuntime puts on CRI sandboxes and containers, named as upstream
// (k8s.io/kubelet/pkg/types/labels.go, pkg/kubelet/kuberuntime/labels.go) so tools like crictl and a
// restarted bunlet recognise them. Labels identify (pod name/namespace/uid, container name); annotations
// carry what kuberuntime needs back later (spec hash, restart count, grace period).
export const POD_NAME_LABEL = "io.kubernetes.pod.name";
export const POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace";
export const POD_UID_LABEL = "io.kubernetes.pod.uid";
export const CONTAINER_NAME_LABEL = "io.kubernetes.container.name";
export const POD_TERMINATION_GRACE_PERIOD_LABEL = "io.kubernetes.pod.terminationGracePeriod";
export const CONTAINER_HASH_LABEL = "io.kubernetes.container.hash";
export const CONTAINER_RESTART_COUNT_LABEL = "io.kubernetes.container.restartCount";
export const CONTAINER_TERMINATION_MESSAGE_PATH_LABEL = "io.kubernetes.container.terminationMessagePath";
export const CONTAINER_TERMINATION_MESSAGE_POLICY_LABEL = "io.kubernetes.container.terminationMessagePolicy";
export const CONTAINER_PORTS_LABEL = "io.kubernetes.container.ports";
export const CONTAINER_PRESTOP_HANDLER_LABEL = "io.kubernetes.container.preStopHandler";

export interface PodIdentity {
  name: string;
  namespace: string;
  uid: string;
}

/** Sandbox labels: the pod's own labels plus its identity (upstream newPodLabels). */
export function newPodLabels(pod: PodIdentity, podLabels: Record<string, string> = {}): Record<string, string> {
  return { ...podLabels, [POD_NAME_LABEL]: pod.name, [POD_NAMESPACE_LABEL]: pod.namespace, [POD_UID_LABEL]: pod.uid };
}

/** Container labels: identity only — labels are for selection (upstream newContainerLabels). */
export function newContainerLabels(pod: PodIdentity, containerName: string): Record<string, string> {
  return {
    [POD_NAME_LABEL]: pod.name,
    [POD_NAMESPACE_LABEL]: pod.namespace,
    [POD_UID_LABEL]: pod.uid,
    [CONTAINER_NAME_LABEL]: containerName,
  };
}

export interface ContainerAnnotationInput {
  hash: string;
  restartCount: number;
  terminationGracePeriodSeconds?: number;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  ports?: unknown[];
  /** The preStop handler, kept so a container whose pod spec is gone still runs it (upstream restoreSpecsFromContainerLabels). */
  preStop?: unknown;
}

/** Container annotations (upstream newContainerAnnotations). */
export function newContainerAnnotations(input: ContainerAnnotationInput, podAnnotations: Record<string, string> = {}): Record<string, string> {
  const a: Record<string, string> = { ...podAnnotations };
  a[CONTAINER_HASH_LABEL] = input.hash;
  a[CONTAINER_RESTART_COUNT_LABEL] = String(input.restartCount);
  a[CONTAINER_TERMINATION_MESSAGE_PATH_LABEL] = input.terminationMessagePath ?? "/dev/termination-log";
  a[CONTAINER_TERMINATION_MESSAGE_POLICY_LABEL] = input.terminationMessagePolicy ?? "File";
  if (input.terminationGracePeriodSeconds !== undefined) {
    a[POD_TERMINATION_GRACE_PERIOD_LABEL] = String(input.terminationGracePeriodSeconds);
  }
  if (input.ports && input.ports.length > 0) a[CONTAINER_PORTS_LABEL] = JSON.stringify(input.ports);
  if (input.preStop !== undefined) a[CONTAINER_PRESTOP_HANDLER_LABEL] = JSON.stringify(input.preStop);
  return a;
}

/** A CRI container's name: its metadata's, else the label kuberuntime put on it (upstream getContainerInfoFromLabels). */
export function containerNameOf(c: { metadata: { name: string } | null; labels: Record<string, string> }): string {
  return c.metadata?.name || c.labels[CONTAINER_NAME_LABEL] || "";
}

/** The pod identity recorded on a sandbox or container, or undefined when it was not made by a kubelet. */
export function podIdentityFromLabels(labels: Record<string, string>): PodIdentity | undefined {
  const uid = labels[POD_UID_LABEL];
  if (!uid) return undefined;
  return { uid, name: labels[POD_NAME_LABEL] ?? "", namespace: labels[POD_NAMESPACE_LABEL] ?? "" };
}
