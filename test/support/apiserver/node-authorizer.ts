// The Node authorizer's rule for the objects pods reference (plugin/pkg/auth/authorizer/node): a node
// (system:node:<name>) may get — or list/watch with fieldSelector=metadata.name=<name> — a secret or
// configMap only when a pod bound to it references it, and may request a token only for the service
// account of a pod bound to it. Anything else is 403 with the authorizer's reason.
import type { User } from "./auth.ts";
import { ApiStatus } from "./status.ts";
import type { Obj, Store } from "./store.ts";

function references(pod: Obj, resource: string, name: string): boolean {
  const spec = pod.spec ?? {};
  const cs: Obj[] = [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
  const vols: Obj[] = spec.volumes ?? [];
  if (resource === "secrets")
    return (
      (spec.imagePullSecrets ?? []).some((s: Obj) => s.name === name) ||
      cs.some(
        (c) => (c.envFrom ?? []).some((e: Obj) => e.secretRef?.name === name) || (c.env ?? []).some((e: Obj) => e.valueFrom?.secretKeyRef?.name === name),
      ) ||
      vols.some((v) => v.secret?.secretName === name || (v.projected?.sources ?? []).some((s: Obj) => s.secret?.name === name))
    );
  if (resource === "configmaps")
    return (
      cs.some(
        (c) => (c.envFrom ?? []).some((e: Obj) => e.configMapRef?.name === name) || (c.env ?? []).some((e: Obj) => e.valueFrom?.configMapKeyRef?.name === name),
      ) || vols.some((v) => v.configMap?.name === name || (v.projected?.sources ?? []).some((s: Obj) => s.configMap?.name === name))
    );
  if (resource === "serviceaccounts") return spec.serviceAccountName === name;
  return false;
}

/** Throws 403 unless the node may do `verb` on the object (secrets, configmaps, serviceaccounts/token). */
export async function authorizeNodeObject(
  store: Store,
  user: User,
  verb: string,
  resource: string,
  ns: string,
  name: string | undefined,
  sub: string | undefined,
  q: URLSearchParams,
): Promise<void> {
  if (!user.groups.includes("system:nodes") || !user.name.startsWith("system:node:")) return;
  if (!["secrets", "configmaps", "serviceaccounts"].includes(resource)) return;
  const node = user.name.slice("system:node:".length);
  const deny = (why: string) => {
    const res = sub ? `${resource}/${sub}` : resource;
    const what = name ? `${resource} "${name}"` : resource;
    return new ApiStatus(
      403,
      "Forbidden",
      `${what} is forbidden: User "${user.name}" cannot ${verb} resource "${res}" in API group "" in the namespace "${ns}": ${why}`,
      { ...(name ? { name } : {}), kind: resource },
    );
  };
  let target = name;
  if (verb === "list" || verb === "watch") target = /^metadata\.name=([^,]+)$/.exec(q.get("fieldSelector") ?? "")?.[1];
  const allowedVerb = resource === "serviceaccounts" ? verb === "create" && sub === "token" : ["get", "list", "watch"].includes(verb) && !sub;
  if (!allowedVerb || !target)
    throw deny(
      `can only ${resource === "serviceaccounts" ? "create tokens for" : "get, or list/watch by name,"} individual resources related to pods bound to it`,
    );
  const pods = (await store.list(`pods/${ns}/`)).items.filter((p) => p.spec?.nodeName === node);
  if (!pods.some((p) => references(p, resource, target!))) throw deny(`no relationship found between node '${node}' and this object`);
}
