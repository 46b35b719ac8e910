// The API objects the kubelet reads back, validated at the edge (zod): the fields bunlet uses are
// typed, everything else passes through untouched so a write-back never drops a field it ignores.
import { z } from "zod";

export const objectMetaSchema = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  creationTimestamp: z.string().nullish(),
  labels: z.record(z.string(), z.string()).nullish(),
  annotations: z.record(z.string(), z.string()).nullish(),
  ownerReferences: z.array(z.looseObject({ apiVersion: z.string(), kind: z.string(), name: z.string(), uid: z.string() })).nullish(),
});

export const nodeConditionSchema = z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastHeartbeatTime: z.string().nullish(),
  lastTransitionTime: z.string().nullish(),
});

export const nodeSchema = z.looseObject({
  kind: z.string().optional(),
  apiVersion: z.string().optional(),
  metadata: objectMetaSchema,
  spec: z.looseObject({ taints: z.array(z.looseObject({ key: z.string(), effect: z.string() })).nullish(), unschedulable: z.boolean().nullish() }).nullish(),
  status: z.looseObject({ conditions: z.array(nodeConditionSchema).nullish() }).nullish(),
});

export const leaseSchema = z.looseObject({
  metadata: objectMetaSchema,
  spec: z
    .looseObject({
      holderIdentity: z.string().nullish(),
      leaseDurationSeconds: z.number().nullish(),
      renewTime: z.string().nullish(),
    })
    .nullish(),
});

export const csrSchema = z.looseObject({
  metadata: objectMetaSchema,
  spec: z.looseObject({ signerName: z.string(), request: z.string() }),
  status: z
    .looseObject({
      conditions: z
        .array(z.looseObject({ type: z.string(), status: z.string().optional(), reason: z.string().optional(), message: z.string().optional() }))
        .nullish(),
      certificate: z.string().nullish(),
    })
    .nullish(),
});

export type Node = z.infer<typeof nodeSchema>;
export type NodeCondition = z.infer<typeof nodeConditionSchema>;
export type Lease = z.infer<typeof leaseSchema>;
export type CertificateSigningRequest = z.infer<typeof csrSchema>;

/** metav1.Time: RFC 3339, seconds. */
export const metav1Time = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
/** metav1.MicroTime: RFC 3339 with microseconds, as Lease renewTime is written. */
export const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
