// The REST verbs over the store for one resource, as kube-apiserver's generic registry serves them:
// get, list (selectors, Table), create, update (optimistic concurrency on metadata.resourceVersion),
// patch (the three patch types; a resourceVersion in the patch is a precondition), delete (with
// uid/resourceVersion preconditions). Watch lives in watch.ts.
import type { User } from "./auth.ts";
import { prepareCreate, prepareUpdate } from "./defaults.ts";
import { PATCH_TYPES, PatchError } from "./patch.ts";
import { apiVersionOf, qualifiedResource, type ResourceDef } from "./resources.ts";
import { parseFieldSelector, parseLabelSelector, SelectorError } from "./selectors.ts";
import { alreadyExists, badRequest, conflict, notFound, unsupportedMedia } from "./status.ts";
import type { Obj, Store } from "./store.ts";
import { toTable, wantsTable } from "./table.ts";
import { admitPod } from "./serviceaccounts.ts";

export interface Target {
  def: ResourceDef;
  ns: string;
  name?: string;
  sub?: string;
}

export interface Reply {
  code: number;
  body: unknown;
}

export const keyPrefix = (d: ResourceDef, ns?: string) => `${qualifiedResource(d)}/${ns ?? ""}${ns === undefined ? "" : "/"}`;
export const keyOf = (d: ResourceDef, ns: string, name: string) => `${qualifiedResource(d)}/${ns}/${name}`;

export function selectors(q: URLSearchParams): (o: Obj) => boolean {
  try {
    const l = parseLabelSelector(q.get("labelSelector"));
    const f = parseFieldSelector(q.get("fieldSelector"));
    return (o) => l(o) && f(o);
  } catch (e) {
    if (e instanceof SelectorError) throw badRequest(e.message);
    throw e;
  }
}

export async function list(store: Store, t: Target, q: URLSearchParams, accept: string | undefined): Promise<Reply> {
  const match = selectors(q);
  const listed = await store.list(keyPrefix(t.def, t.def.namespaced && t.ns ? t.ns : undefined));
  const items = listed.items.filter(match);
  const rv = String(listed.revision);
  if (wantsTable(accept)) return { code: 200, body: toTable(t.def.resource, items, rv) };
  return { code: 200, body: { kind: `${t.def.kind}List`, apiVersion: apiVersionOf(t.def), metadata: { resourceVersion: rv }, items } };
}

export async function get(store: Store, t: Target, accept: string | undefined): Promise<Reply> {
  const o = await store.get(keyOf(t.def, t.ns, t.name!));
  if (!o) throw notFound(t.def, t.name!);
  if (wantsTable(accept)) return { code: 200, body: toTable(t.def.resource, [o], o.metadata.resourceVersion) };
  return { code: 200, body: o };
}

export async function create(store: Store, t: Target, body: Obj, user: User): Promise<Reply> {
  const obj = prepareCreate(t.def, t.ns, body, user);
  if (t.def.resource === "pods") await admitPod(store, t.ns, obj);
  const stored = await store.put(keyOf(t.def, t.ns, obj.metadata.name), obj, 0);
  if (stored === "conflict") throw alreadyExists(t.def, obj.metadata.name);
  return { code: 201, body: stored };
}

/** Writes next over old: CAS on the resourceVersion the client sent, else on the one read (GuaranteedUpdate). */
async function write(store: Store, t: Target, old: Obj, next: Obj, clientRv: string | undefined): Promise<Reply | "retry"> {
  const prepared = prepareUpdate(t.def, old, next, t.sub);
  const stored = await store.put(keyOf(t.def, t.ns, t.name!), prepared, Number(clientRv ?? old.metadata.resourceVersion));
  if (stored !== "conflict") return { code: 200, body: stored };
  if (clientRv) throw conflict(t.def, t.name!);
  return "retry";
}

async function guaranteedUpdate(store: Store, t: Target, next: (old: Obj) => { obj: Obj; clientRv?: string }): Promise<Reply> {
  for (let i = 0; i < 10; i++) {
    const old = await store.get(keyOf(t.def, t.ns, t.name!));
    if (!old) throw notFound(t.def, t.name!);
    const n = next(old);
    const r = await write(store, t, old, n.obj, n.clientRv);
    if (r !== "retry") return r;
  }
  throw conflict(t.def, t.name!);
}

export function update(store: Store, t: Target, body: Obj): Promise<Reply> {
  if (body?.metadata?.name && body.metadata.name !== t.name)
    throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${t.name})`);
  return guaranteedUpdate(store, t, () => ({ obj: body, clientRv: body?.metadata?.resourceVersion || undefined }));
}

export function patch(store: Store, t: Target, body: unknown, contentType: string): Promise<Reply> {
  const apply = PATCH_TYPES[contentType.split(";")[0]!.trim() as keyof typeof PATCH_TYPES];
  if (!apply) throw unsupportedMedia(contentType);
  // A resourceVersion the patch sets is a precondition; otherwise the patch applies to the current object.
  const patchRv = (body as Obj)?.metadata?.resourceVersion as string | undefined;
  return guaranteedUpdate(store, t, (old) => {
    try {
      return { obj: apply(old, body) as Obj, clientRv: patchRv };
    } catch (e) {
      if (e instanceof PatchError) throw badRequest(e.message);
      throw e;
    }
  });
}

export async function remove(store: Store, t: Target, body: Obj | undefined): Promise<Reply> {
  const key = keyOf(t.def, t.ns, t.name!);
  const old = await store.get(key);
  if (!old) throw notFound(t.def, t.name!);
  const pre = body?.preconditions ?? {};
  if (pre.uid && pre.uid !== old.metadata.uid) {
    throw conflict(t.def, t.name!, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`);
  }
  if (pre.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
    throw conflict(
      t.def,
      t.name!,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
    );
  }
  // Graceful deletion of a scheduled pod (registry/core/pod BeforeDelete): deletionTimestamp = now +
  // grace, the kubelet stops it and deletes with grace 0. A pending shorter grace is kept.
  const grace = body?.gracePeriodSeconds ?? old.spec?.terminationGracePeriodSeconds ?? 30;
  if (t.def.resource === "pods" && old.spec?.nodeName && grace > 0 && !(old.metadata.deletionGracePeriodSeconds <= grace)) {
    const marked = {
      ...old,
      metadata: {
        ...old.metadata,
        deletionTimestamp: new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d+Z$/, "Z"),
        deletionGracePeriodSeconds: grace,
      },
    };
    const put = await store.put(key, marked, Number(old.metadata.resourceVersion));
    if (put === "conflict") throw conflict(t.def, t.name!);
    return { code: 200, body: put };
  }
  if (t.def.resource === "pods" && old.metadata.deletionTimestamp && grace > 0) return { code: 200, body: old };
  const gone = await store.delete(key, Number(old.metadata.resourceVersion));
  if (gone === "conflict") throw conflict(t.def, t.name!);
  if (!gone) throw notFound(t.def, t.name!);
  return { code: 200, body: gone };
}

/**
 * pods/<name>/eviction (registry/core/pod/storage EvictionREST): a policy/v1 Eviction deletes the pod
 * with its deleteOptions (graceful, as DELETE). The double has no PodDisruptionBudgets, so every
 * eviction is allowed; the answer is a Success Status (201).
 */
export async function evict(store: Store, t: Target, body: Obj | undefined): Promise<Reply> {
  if (body?.metadata?.name && body.metadata.name !== t.name) throw badRequest("name in URL does not match name in Eviction object");
  await remove(store, { ...t, sub: undefined }, body?.deleteOptions);
  return { code: 201, body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 } };
}
