// The small v1 value types the Pod schema is built from (k8s.io/api core/v1 and apimachinery meta/v1):
// quantities, resource lists, int-or-string ports, file modes, 32-bit IDs, local relative paths and
// label selectors, each validated as upstream validates it (pkg/apis/core/validation).
import { z } from "zod";
import { parseQuantity } from "../../config/quantity.ts";
import { isSupportedFieldPath } from "../volumes/downward-api.ts";

export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** resource.Quantity: a string or a number, kept as the string the manifest wrote. */
export const quantity = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const s = String(v);
  try {
    parseQuantity(s);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: `invalid quantity "${s}": ${(e as Error).message}` });
    return z.NEVER;
  }
  return s;
});

const resourceName = z.string().regex(/^([a-z0-9.-]+\/)?[a-zA-Z0-9._-]+$/, "invalid resource name");
/** core/v1 ResourceList. */
export const resourceList = z.record(resourceName, quantity);

export const intOrString = z.union([z.number().int(), z.string().min(1)]);
export const port = z.number().int().min(1).max(65535);
export const fileMode = z.number().int().min(0).max(0o777);

const MAX_INT32 = 2147483647;
const ID_RANGE = "must be between 0 and 2147483647, inclusive";
/** A user or group ID (upstream ValidateNonnegativeField + the 32-bit range of runAsUser & co). */
export const id32 = z.number().int().min(0, ID_RANGE).max(MAX_INT32, ID_RANGE);

/** RFC 3339 time or null, as meta/v1 Time serialises. */
export const time = z
  .string()
  .nullable()
  .optional()
  .transform((v) => v ?? undefined);

/** upstream validateLocalDescendingPath. */
export const relativePath = z.string().superRefine((p, ctx) => {
  if (p.startsWith("/")) ctx.addIssue({ code: "custom", message: "must be a relative path" });
  if (p.split("/").includes("..")) ctx.addIssue({ code: "custom", message: "must not contain '..'" });
});
/** upstream validateLocalNonReservedPath: ..data and friends belong to the atomic writer. */
export const volumeFilePath = relativePath.pipe(
  z
    .string()
    .min(1)
    .refine((p) => !p.startsWith(".."), "must not start with '..'"),
);

/** meta/v1 LabelSelector. */
export const labelSelector = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z
    .array(z.strictObject({ key: z.string().min(1), operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]), values: z.array(z.string()).optional() }))
    .optional(),
});

/** core/v1 LocalObjectReference. */
export const localObjectReference = z.strictObject({ name: z.string().default("") });

/** core/v1 ObjectFieldSelector, limited to the downward API paths `allowed` (env and volumes differ). */
export const fieldRef = (allowed: readonly string[]) =>
  z.strictObject({ fieldPath: z.string(), apiVersion: z.literal("v1").optional() }).superRefine((f, ctx) => {
    if (!isSupportedFieldPath(f.fieldPath, allowed))
      ctx.addIssue({
        code: "custom",
        path: ["fieldPath"],
        message: `Unsupported value: "${f.fieldPath}": supported values: ${allowed.map((a) => `"${a}"`).join(", ")} and subscripted metadata.labels['…'], metadata.annotations['…']`,
      });
  });

/** core/v1 ResourceFieldSelector. */
export const resourceFieldRef = z.strictObject({
  containerName: z.string().optional(),
  resource: z
    .string()
    .regex(
      /^(limits|requests)\.(cpu|memory|ephemeral-storage|hugepages-.+)$/,
      "must be limits.* or requests.* of cpu, memory, ephemeral-storage or hugepages-*",
    ),
  divisor: quantity.optional(),
});
