// core/v1 Event as the kubelet's recorder writes it (client-go tools/record makeEvent), and the
// object references it points at (kubelet's nodeRef: kind Node, name = uid = node name).
export interface ObjectReference {
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  /** "spec.containers{name}" for container events. */
  fieldPath?: string;
}

export type EventType = "Normal" | "Warning";

export interface CoreEvent {
  metadata: { name: string; namespace: string; resourceVersion?: string; annotations?: Record<string, string> };
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  source: { component: string; host?: string };
  /** metav1.Time (RFC 3339, seconds). */
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  type: EventType;
  eventTime: null;
  reportingComponent: string;
  reportingInstance: string;
}

/** The strategic merge patch of an event seen before. */
export interface EventPatch {
  count: number;
  lastTimestamp: string;
  message: string;
}

/** Where events are written (client-go EventSink; the API's in sink.ts). */
export interface EventSink {
  create(e: CoreEvent): Promise<CoreEvent>;
  patch(e: CoreEvent, patch: EventPatch): Promise<CoreEvent>;
}

/** What the rest of bunlet records through (upstream record.EventRecorder). Never blocks. */
export interface EventRecorder {
  event(ref: ObjectReference, type: EventType, reason: string, message: string, annotations?: Record<string, string>): void;
}

export const nodeRef = (nodeName: string): ObjectReference => ({ kind: "Node", name: nodeName, uid: nodeName });

type RefPod = { metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string } };

/** The spec list a container is declared in: its events' fieldPath (upstream GenerateContainerRef). */
export type ContainerList = "containers" | "initContainers" | "ephemeralContainers";

export function podRef(pod: RefPod, containerName?: string, init = false): ObjectReference {
  return containerRef(pod, containerName, init ? "initContainers" : "containers");
}

/** The pod, and with a container name its `spec.<list>{name}` fieldPath. */
export function containerRef(pod: RefPod, containerName: string | undefined, list: ContainerList): ObjectReference {
  return {
    kind: "Pod",
    namespace: pod.metadata.namespace ?? "default",
    name: pod.metadata.name,
    uid: pod.metadata.uid,
    apiVersion: "v1",
    ...(pod.metadata.resourceVersion ? { resourceVersion: pod.metadata.resourceVersion } : {}),
    ...(containerName ? { fieldPath: `spec.${list}{${containerName}}` } : {}),
  };
}

/** A recorder that drops everything (tests, and code built without one). */
export const noopRecorder: EventRecorder = { event() {} };
