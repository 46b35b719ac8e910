// The v1 Pod as bunlet decodes it, as a zod schema (field names exactly as upstream core/v1). Every
// field a v1.37 API server can store decodes; a key that is not a v1 field is refused with its path (a
// typo in a static pod must not run half-configured), and a value bunlet cannot act on is refused
// naming the value and why (schema/unsupported.ts). The parts: schema/object-meta.ts,
// schema/pod-spec.ts (with schema/scheduling.ts and schema/security-context.ts), schema/container.ts,
// schema/volume.ts. docs/pod-spec.md lists what bunlet does with each field.
import { z } from "zod";
import type { PodLike } from "./pod-like.ts";
import { objectMeta } from "./schema/object-meta.ts";
import { podSpec } from "./schema/pod-spec.ts";

export const podSchema = z.strictObject({
  apiVersion: z.literal("v1").default("v1"),
  kind: z.literal("Pod").default("Pod"),
  metadata: objectMeta,
  spec: podSpec,
  // A manifest's status is ignored (upstream applyDefaults resets it to Pending); of an API pod's,
  // the API source keeps the conditions others own (sources/api.ts, readiness-gates.ts).
  status: z
    .unknown()
    .optional()
    .transform((): PodStatus | undefined => undefined),
});

export type Pod = z.output<typeof podSchema>;
export type PodSpec = Pod["spec"];
export type Container = PodSpec["containers"][number];
export type Probe = NonNullable<Container["livenessProbe"]>;
export type LifecycleHandler = NonNullable<NonNullable<Container["lifecycle"]>["postStart"]>;
export type Volume = NonNullable<PodSpec["volumes"]>[number];

// ---- status (written by bunlet, never parsed from manifests) ----

export type PodPhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}
export interface ContainerStateRunning {
  startedAt?: string;
}
export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}
export interface ContainerStateV1 {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  state: ContainerStateV1;
  lastState: ContainerStateV1;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
  /** The container's allocated requests (in-place resize). */
  allocatedResources?: Record<string, string>;
  /** What the container runs with now: the allocation, its cpu and memory as last actuated. */
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
}

/** The condition types the kubelet writes; readiness gates read any type (readiness-gates.ts). */
export type KubeletPodConditionType = "PodScheduled" | "Initialized" | "ContainersReady" | "Ready" | "DisruptionTarget";

export interface PodCondition {
  type: KubeletPodConditionType | (string & {});
  status: "True" | "False" | "Unknown";
  lastProbeTime: string | null;
  lastTransitionTime: string;
  /** The pod generation the condition speaks of (the resize conditions). */
  observedGeneration?: number;
  reason?: string;
  message?: string;
}

export interface PodStatus {
  phase: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
  qosClass?: "Guaranteed" | "Burstable" | "BestEffort";
  /** The pod's metadata.generation this status was generated for (upstream PodObservedGenerationTracking). */
  observedGeneration?: number;
}

// Compile-time guarantee that eviction/QoS code can take our pods as they are.
export const asPodLike = (pod: Pod): PodLike => pod;
