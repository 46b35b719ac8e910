// The scheduling fields of core/v1 PodSpec. The kubelet reads few: required node affinity and
// tolerations in its predicate admission (admit-predicate.ts, as upstream lifecycle/predicate.go).
// The rest belong to the scheduler or to controllers — the kubelet never reads preemptionPolicy,
// preferred and pod (anti-)affinity, topologySpreadConstraints, schedulingGates, schedulingGroup or
// evictionResponders — so they are validated for shape (a typo in a manifest is still an error) and
// otherwise ignored.
import { z } from "zod";
import { labelSelector } from "./primitives.ts";

export const toleration = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: z.string().optional(),
  effect: z.enum(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
  tolerationSeconds: z.number().int().optional(),
});

const nodeSelectorRequirement = z.strictObject({
  key: z.string(),
  operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]),
  values: z.array(z.string()).optional(),
});
const nodeSelectorTerm = z.strictObject({
  matchExpressions: z.array(nodeSelectorRequirement).optional(),
  matchFields: z.array(nodeSelectorRequirement).optional(),
});
const nodeSelector = z.strictObject({ nodeSelectorTerms: z.array(nodeSelectorTerm) });

const podAffinityTerm = z.strictObject({
  labelSelector: labelSelector.optional(),
  namespaces: z.array(z.string()).optional(),
  topologyKey: z.string(),
  namespaceSelector: labelSelector.optional(),
  matchLabelKeys: z.array(z.string()).optional(),
  mismatchLabelKeys: z.array(z.string()).optional(),
});
const weightedPodAffinityTerm = z.strictObject({ weight: z.number().int(), podAffinityTerm });
const podAffinity = z.strictObject({
  requiredDuringSchedulingIgnoredDuringExecution: z.array(podAffinityTerm).optional(),
  preferredDuringSchedulingIgnoredDuringExecution: z.array(weightedPodAffinityTerm).optional(),
});

export const affinity = z.strictObject({
  nodeAffinity: z
    .strictObject({
      requiredDuringSchedulingIgnoredDuringExecution: nodeSelector.optional(),
      preferredDuringSchedulingIgnoredDuringExecution: z.array(z.strictObject({ weight: z.number().int(), preference: nodeSelectorTerm })).optional(),
    })
    .optional(),
  podAffinity: podAffinity.optional(),
  podAntiAffinity: podAffinity.optional(),
});

export const topologySpreadConstraint = z.strictObject({
  maxSkew: z.number().int(),
  topologyKey: z.string(),
  whenUnsatisfiable: z.enum(["DoNotSchedule", "ScheduleAnyway"]),
  labelSelector: labelSelector.optional(),
  minDomains: z.number().int().optional(),
  nodeAffinityPolicy: z.enum(["Honor", "Ignore"]).optional(),
  nodeTaintsPolicy: z.enum(["Honor", "Ignore"]).optional(),
  matchLabelKeys: z.array(z.string()).optional(),
});

export const schedulingGate = z.strictObject({ name: z.string() });
export const schedulingGroup = z.strictObject({ podGroupName: z.string().optional() });
// `priority` has no omitempty upstream.
export const evictionResponder = z.strictObject({ name: z.string(), priority: z.number().int().nullable().optional() });
