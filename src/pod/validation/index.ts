// Upstream's pod validation (ValidatePodCreate) for what bunlet's schema leaves open, run on a static
// pod AFTER its defaults (as upstream's tryDecodeSinglePod does), so the node-suffixed name is what is
// checked. Plus one bunlet check: the pod log directory's name must fit in one path component.
import type { Pod } from "../types.ts";
import { invalid, isDNS1123Label, isDNS1123Subdomain, validateAnnotations, validateLabels, type FieldError } from "./object-meta.ts";
import { validateResources } from "./resources.ts";
import { validateSecurity } from "./security.ts";

export type { FieldError } from "./object-meta.ts";
export { TotalAnnotationSizeLimitB } from "./object-meta.ts";

/** NAME_MAX: the longest file name (one path component) on Linux filesystems. */
const NAME_MAX = 255;

export function validatePod(pod: Pod): FieldError[] {
  const { name, namespace, uid } = pod.metadata;
  const out: FieldError[] = [];
  for (const m of isDNS1123Subdomain(name)) out.push(invalid("metadata.name", name, m));
  if (namespace) for (const m of isDNS1123Label(namespace)) out.push(invalid("metadata.namespace", namespace, m));
  out.push(...validateLabels(pod.metadata.labels, "metadata.labels"));
  out.push(...validateAnnotations(pod.metadata.annotations, "metadata.annotations"));
  out.push(...validateResources(pod.spec));
  out.push(...validateSecurity(pod));
  // upstream ValidatePodCreate: only the pods/ephemeralcontainers subresource adds them, later.
  if (pod.spec.ephemeralContainers?.length) out.push({ field: "spec.ephemeralContainers", detail: "Forbidden: cannot be set on create" });
  // The pod log directory is <podLogsDir>/<namespace>_<name>_<uid>: past NAME_MAX every container
  // start fails with ENAMETOOLONG, forever, so refuse the pod up front.
  const logDir = `${namespace}_${name}_${uid}`;
  if (out.length === 0 && Buffer.byteLength(logDir) > NAME_MAX)
    out.push(
      invalid(
        "metadata.name",
        name,
        `must be no more than ${NAME_MAX - (Buffer.byteLength(logDir) - Buffer.byteLength(name))} characters with the node-name suffix, so that the pod log directory ${namespace}_<name>_<uid> fits in ${NAME_MAX} bytes`,
      ),
    );
  return out;
}
