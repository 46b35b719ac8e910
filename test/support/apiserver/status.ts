// metav1.Status bodies with upstream's reasons and message texts (k8s.io/apimachinery/pkg/api/errors).
import { qualifiedResource, type ResourceDef } from "./resources.ts";

export class ApiStatus extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: object,
  ) {
    super(message);
  }
  body(): object {
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

const details = (d: ResourceDef, name: string) => ({ name, ...(d.group ? { group: d.group } : {}), kind: d.resource });

export const notFound = (d: ResourceDef, name: string) => new ApiStatus(404, "NotFound", `${qualifiedResource(d)} "${name}" not found`, details(d, name));
export const alreadyExists = (d: ResourceDef, name: string) =>
  new ApiStatus(409, "AlreadyExists", `${qualifiedResource(d)} "${name}" already exists`, details(d, name));
export const conflict = (d: ResourceDef, name: string, why = "the object has been modified; please apply your changes to the latest version and try again") =>
  new ApiStatus(409, "Conflict", `Operation cannot be fulfilled on ${qualifiedResource(d)} "${name}": ${why}`, details(d, name));
export const badRequest = (msg: string) => new ApiStatus(400, "BadRequest", msg);
export const invalid = (d: ResourceDef, name: string, field: string, msg: string) =>
  new ApiStatus(422, "Invalid", `${d.kind} "${name}" is invalid: ${field}: ${msg}`, {
    ...details(d, name),
    causes: [{ reason: "FieldValueInvalid", message: msg, field }],
  });
export const unauthorized = () => new ApiStatus(401, "Unauthorized", "Unauthorized");
export const gone = (msg: string) => new ApiStatus(410, "Expired", msg);
export const unsupportedMedia = (ct: string) =>
  new ApiStatus(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got ${ct})`,
  );

export function forbidden(user: string, verb: string, d: ResourceDef, ns: string, name?: string, sub?: string): ApiStatus {
  const res = sub ? `${d.resource}/${sub}` : d.resource;
  const scope = ns ? `in the namespace "${ns}"` : "at the cluster scope";
  const what = name ? `${qualifiedResource(d)} "${name}"` : qualifiedResource(d);
  return new ApiStatus(403, "Forbidden", `${what} is forbidden: User "${user}" cannot ${verb} resource "${res}" in API group "${d.group}" ${scope}`, {
    ...(name ? { name } : {}),
    ...(d.group ? { group: d.group } : {}),
    kind: d.resource,
  });
}
