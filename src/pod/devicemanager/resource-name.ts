// Upstream v1helper.IsExtendedResourceName (pkg/apis/core/v1/helper/helpers.go), the check a device
// plugin's resource name passes at registration: in a domain of its own (not *kubernetes.io/, not
// unprefixed), not "requests.", and a qualified name once prefixed with "requests." (quota's form).
import { isQualifiedName } from "../validation/object-meta.ts";

/** Upstream IsNativeResource: unprefixed, or in the *kubernetes.io/ namespace. */
export function isNativeResource(name: string): boolean {
  return !name.includes("/") || name.includes("kubernetes.io/");
}

export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith("requests.")) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}
