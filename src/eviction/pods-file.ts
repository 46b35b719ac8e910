// Pod lists for `bunlet eviction simulate/explain`: a v1 PodList or a JSON array of v1 Pods,
// validated just enough for eviction (names, containers, resources, priority, annotations).
// Unknown fields pass through; wrong types are errors naming the file and field.
import { z } from "zod";
import { parseQuantity } from "../config/quantity.ts";
import { podKeyOf, type PodLike } from "../pod/pod-like.ts";
import type { Summary } from "../stats/summary.ts";
import { issuePath } from "../stats/summary-schema.ts";

const quantity = z.union([z.string(), z.number()]).refine(
  (v) => {
    try {
      parseQuantity(String(v));
      return true;
    } catch {
      return false;
    }
  },
  { message: "not a Kubernetes quantity (e.g. 100Mi, 0.5, 2Gi)" },
);
const resources = z.looseObject({ requests: z.record(z.string(), quantity).optional(), limits: z.record(z.string(), quantity).optional() });
const container = z.looseObject({ name: z.string(), resources: resources.optional(), restartPolicy: z.string().optional() });
const podSchema = z.looseObject({
  metadata: z.looseObject({
    name: z.string().min(1),
    namespace: z.string().optional(),
    uid: z.string().optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    creationTimestamp: z.string().nullable().optional(),
  }),
  // Trimmed lists (the kubelet-real fixture) may lack spec or containers: treat as empty.
  spec: z
    .looseObject({
      containers: z.array(container).default([]),
      initContainers: z.array(container).optional(),
      priority: z.number().int().optional(),
      priorityClassName: z.string().optional(),
      terminationGracePeriodSeconds: z.number().int().optional(),
      overhead: z.record(z.string(), quantity).optional(),
      volumes: z
        .array(
          z.looseObject({
            name: z.string(),
            emptyDir: z.looseObject({ medium: z.string().optional(), sizeLimit: quantity.optional() }).optional(),
          }),
        )
        .optional(),
      tolerations: z
        .array(z.looseObject({ key: z.string().optional(), operator: z.string().optional(), value: z.string().optional(), effect: z.string().optional() }))
        .optional(),
    })
    .default({ containers: [] }),
  status: z.looseObject({ phase: z.string().optional(), qosClass: z.string().optional(), reason: z.string().optional() }).optional(),
});

const podList = z.union([z.looseObject({ items: z.array(podSchema).nullable() }), z.array(podSchema)]);

export class PodsFileError extends Error {
  override name = "PodsFileError";
}

export function parsePodsText(text: string, source: string): PodLike[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new PodsFileError(`${source}: invalid JSON: ${(e as Error).message}`);
  }
  // Report against the shape the user meant: an array of pods or an object with items.
  const schema = Array.isArray(data) ? z.array(podSchema) : z.looseObject({ items: z.array(podSchema).nullable() });
  const r = schema.safeParse(data);
  if (!r.success) {
    const msgs = r.error.issues.slice(0, 5).map((i) => `${source}: field ${issuePath(i.path)}: ${i.message}`);
    throw new PodsFileError(`${msgs.join("\n")}\n(expected a v1 PodList {"items":[…]} or a JSON array of v1 Pods)`);
  }
  const parsed = r.data as z.infer<typeof podList>;
  const items = Array.isArray(parsed) ? parsed : (parsed.items ?? []);
  return items.map((p) => ({ ...p, metadata: { ...p.metadata, creationTimestamp: p.metadata.creationTimestamp ?? undefined } }) as PodLike);
}

/**
 * Fills what trimmed pod lists lack, from the summary's podRefs: a missing namespace from the
 * stats entry with the same UID (else "default"), a missing UID from the entry with the same
 * namespace/name — stats are joined by UID, as upstream.
 */
export function completePods(pods: PodLike[], summary: Summary | undefined): PodLike[] {
  const refs = summary?.pods?.map((p) => p.podRef) ?? [];
  return pods.map((p) => {
    const md = { ...p.metadata };
    if (!md.namespace) md.namespace = refs.find((r) => md.uid && r.uid === md.uid)?.namespace ?? "default";
    if (!md.uid) md.uid = refs.find((r) => r.name === md.name && r.namespace === md.namespace)?.uid ?? podKeyOf(md.namespace, md.name);
    return { ...p, metadata: md };
  });
}
