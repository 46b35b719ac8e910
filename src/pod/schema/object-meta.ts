// meta/v1 ObjectMeta of a Pod. The kubelet reads its identity, labels, annotations, owner references
// and deletion fields; the API server's own bookkeeping (resourceVersion, selfLink,
// managedFields) is accepted and dropped, so a pod copied from `kubectl get -o yaml` decodes and a
// static pod's mirror never carries a stale resourceVersion. generation is kept: the pod status's
// observedGeneration reports it. finalizers are kept (a mirror pod copies
// them, as upstream's CreateMirrorPod copies the static pod's metadata).
import { z } from "zod";
import { podUidError } from "../pod-dir.ts";
import { DNS_LABEL, DNS_SUBDOMAIN, time } from "./primitives.ts";

const ownerReference = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

const managedFieldsEntry = z.strictObject({
  manager: z.string().optional(),
  operation: z.enum(["Apply", "Update"]).optional(),
  apiVersion: z.string().optional(),
  time: z.string().nullable().optional(),
  fieldsType: z.string().optional(),
  fieldsV1: z.record(z.string(), z.unknown()).optional(),
  subresource: z.string().optional(),
});

export const objectMeta = z
  .strictObject({
    name: z.string().min(1, "name is required").max(253).regex(DNS_SUBDOMAIN, "must be a DNS subdomain (lowercase alphanumerics, '-' and '.')"),
    namespace: z.string().regex(DNS_LABEL, "must be a DNS label").default(""),
    // Empty: a static pod gets one from its content (static-pod.ts); otherwise it names a directory.
    uid: z
      .string()
      .default("")
      .refine((u) => u === "" || podUidError(u) === undefined, { error: (i) => podUidError(String(i.input)) ?? "invalid pod UID" }),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    creationTimestamp: time,
    generateName: z.string().optional(),
    // Set by the API server on API pods (src/pod/sources/api.ts keeps these of its metadata).
    deletionTimestamp: time,
    deletionGracePeriodSeconds: z
      .number()
      .int()
      .nullable()
      .optional()
      .transform((v) => v ?? undefined),
    ownerReferences: z.array(ownerReference).optional(),
    finalizers: z.array(z.string()).optional(),
    resourceVersion: z.string().optional(),
    generation: z.number().int().optional(),
    selfLink: z.string().optional(),
    managedFields: z.array(managedFieldsEntry).optional(),
  })
  .transform(({ resourceVersion: _rv, selfLink: _link, managedFields: _mf, ...meta }) => meta);
