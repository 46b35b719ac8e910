// Upstream ValidateResourceRequirements / ValidateNonnegativeQuantity (pkg/apis/core/validation):
// requests and limits are non-negative, and a request is at most its limit; emptyDir.sizeLimit too.
// (A `-5Gi` memory limit that reached runc would loop on its failure.)
import { parseQuantity, quantityMilliValue } from "../../config/quantity.ts";
import type { Pod } from "../types.ts";
import { invalid, type FieldError } from "./object-meta.ts";

const isNegativeErrorMsg = "must be greater than or equal to 0";

function milli(v: string): number | undefined {
  try {
    return quantityMilliValue(parseQuantity(v));
  } catch {
    return undefined; // the schema already reported an unparsable quantity
  }
}

function nonNegative(field: string, v: string | undefined): FieldError[] {
  if (v === undefined) return [];
  const m = milli(v);
  return m !== undefined && m < 0 ? [invalid(field, v, isNegativeErrorMsg)] : [];
}

export function validateResources(spec: Pod["spec"]): FieldError[] {
  const out: FieldError[] = [];
  const all = [
    ...(spec.initContainers ?? []).map((c, i) => ({ c, path: `spec.initContainers[${i}]` })),
    ...spec.containers.map((c, i) => ({ c, path: `spec.containers[${i}]` })),
  ];
  for (const { c, path } of all) {
    const { requests = {}, limits = {} } = c.resources ?? {};
    for (const [name, v] of Object.entries(limits)) out.push(...nonNegative(`${path}.resources.limits[${name}]`, v));
    for (const [name, v] of Object.entries(requests)) {
      out.push(...nonNegative(`${path}.resources.requests[${name}]`, v));
      const lim = limits[name];
      const r = milli(v);
      const l = lim === undefined ? undefined : milli(lim);
      if (r !== undefined && l !== undefined && r > l)
        out.push(invalid(`${path}.resources.requests[${name}]`, v, `must be less than or equal to ${name} limit of ${lim}`));
    }
  }
  (spec.volumes ?? []).forEach((v, i) => {
    out.push(...nonNegative(`spec.volumes[${i}].emptyDir.sizeLimit`, v.emptyDir?.sizeLimit));
  });
  return out;
}
