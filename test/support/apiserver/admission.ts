// The NodeRestriction admission plugin for what a kubelet creates (kube-apiserver
// plugin/pkg/admission/noderestriction): a node may create only mirror pods (config.mirror
// annotation), bound to itself, owned by its own Node as controller.
import type { User } from "./auth.ts";
import type { ResourceDef } from "./resources.ts";
import { ApiStatus } from "./status.ts";
import type { Obj } from "./store.ts";

const forbid = (name: string, msg: string) => new ApiStatus(403, "Forbidden", `pods "${name}" is forbidden: ${msg}`, { name, kind: "pods" });

export async function admitCreate(user: User, d: ResourceDef, obj: Obj, getNode: (name: string) => Promise<Obj | undefined>): Promise<void> {
  if (d.resource !== "pods" || !user.groups.includes("system:nodes") || !user.name.startsWith("system:node:")) return;
  const node = user.name.slice("system:node:".length);
  const name = obj?.metadata?.name ?? "";
  if (obj?.metadata?.annotations?.["kubernetes.io/config.mirror"] === undefined)
    throw forbid(name, `pod does not have "kubernetes.io/config.mirror" annotation, node "${node}" can only create mirror pods`);
  if (obj.spec?.nodeName !== node) throw forbid(name, `node "${node}" can only create pods with spec.nodeName set to itself`);
  const owners: Obj[] = obj.metadata.ownerReferences ?? [];
  if (owners.length !== 1) throw forbid(name, `node "${node}" can only create pods with a single owner reference set to itself`);
  const o = owners[0]!;
  if (o.controller !== true) throw forbid(name, `node "${node}" can only create pods with a controller owner reference set to itself`);
  if (o.apiVersion !== "v1" || o.kind !== "Node" || o.name !== node)
    throw forbid(name, `node "${node}" can only create pods with an owner reference set to itself`);
  const n = await getNode(node);
  if (!n || n.metadata.uid !== o.uid) throw forbid(name, `node "${node}" UID mismatch: expected ${n?.metadata.uid} got ${o.uid}`);
}
