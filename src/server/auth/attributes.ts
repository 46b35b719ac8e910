// The kubelet's mapping of an HTTP request to authorization attributes (upstream
// pkg/kubelet/server/auth.go GetRequestAttributes): resource "nodes", name = this node, verb from
// the HTTP method, subresource from the path. With KubeletFineGrainedAuthz (on by default since
// v1.33), /pods, /runningpods, /healthz and /configz first ask for their own subresource and fall
// back to "proxy", so existing RBAC keeps working.
import type { Attributes, UserInfo } from "./types.ts";

const VERBS: Record<string, string> = { POST: "create", GET: "get", PUT: "update", PATCH: "patch", DELETE: "delete" };

/** Upstream isSubpath: `path` itself or anything below it. */
export function isSubpath(subpath: string, path: string): boolean {
  const p = path.endsWith("/") ? path.slice(0, -1) : path;
  return subpath === p || (subpath.startsWith(p) && subpath[p.length] === "/");
}

const EXACT: readonly [string, string][] = [
  ["/stats", "stats"],
  ["/metrics", "metrics"],
  ["/logs", "log"],
  ["/checkpoint", "checkpoint"],
];
const FINE_GRAINED: readonly [string, string][] = [
  ["/pods", "pods"],
  ["/runningpods", "pods"],
  ["/healthz", "healthz"],
  ["/configz", "configz"],
];

/** The attributes to try in order; the request is allowed when any of them is. */
export function requestAttributes(user: UserInfo, method: string, path: string, nodeName: string, fineGrained = true): Attributes[] {
  // HEAD is not in upstream's switch: its verb is "" (so is OPTIONS, …).
  const verb = VERBS[method] ?? "";
  const attrs = (subresource: string): Attributes => ({
    user,
    verb,
    namespace: "",
    apiGroup: "",
    apiVersion: "v1",
    resource: "nodes",
    subresource,
    name: nodeName,
    resourceRequest: true,
    path,
  });
  for (const [prefix, sub] of EXACT) if (isSubpath(path, prefix)) return [attrs(sub)];
  for (const [prefix, sub] of FINE_GRAINED) {
    if (isSubpath(path, prefix)) return fineGrained ? [attrs(sub), attrs("proxy")] : [attrs("proxy")];
  }
  return [attrs("proxy")];
}
