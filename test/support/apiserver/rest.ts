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

export function list(store: Store, t: Target, q: URLSearchParams, accept: string | undefined): Reply {
  const match = selectors(q);
  const items = store.list(keyPrefix(t.def, t.def.namespaced && t.ns ? t.ns : undefined)).filter(match);
  const rv = String(store.revision());
  if (wantsTable(accept)) return { code: 200, body: toTable(t.def.resource, items, rv) };
  return { code: 200, body: { kind: `${t.def.kind}List`, apiVersion: apiVersionOf(t.def), metadata: { resourceVersion: rv }, items } };
}

export function get(store: Store, t: Target, accept: string | undefined): Reply {
  const o = store.get(keyOf(t.def, t.ns, t.name!));
  if (!o) throw notFound(t.def, t.name!);
  if (wantsTable(accept)) return { code: 200, body: toTable(t.def.resource, [o], o.metadata.resourceVersion) };
  return { code: 200, body: o };
}

export function create(store: Store, t: Target, body: Obj, user: User): Reply {
  const obj = prepareCreate(t.def, t.ns, body, user);
  const key = keyOf(t.def, t.ns, obj.metadata.name);
  if (store.get(key)) throw alreadyExists(t.def, obj.metadata.name);
  return { code: 201, body: store.put(key, obj) };
}

function write(store: Store, t: Target, old: Obj, next: Obj): Reply {
  const key = keyOf(t.def, t.ns, t.name!);
  const expected = next.metadata?.resourceVersion ? Number(next.metadata.resourceVersion) : undefined;
  const prepared = prepareUpdate(t.def, old, next, t.sub);
  const stored = store.put(key, prepared, expected);
  if (stored === "conflict") throw conflict(t.def, t.name!);
  return { code: 200, body: stored };
}

export function update(store: Store, t: Target, body: Obj): Reply {
  const old = store.get(keyOf(t.def, t.ns, t.name!));
  if (!old) throw notFound(t.def, t.name!);
  if (body?.metadata?.name && body.metadata.name !== t.name) throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${t.name})`);
  return write(store, t, old, body);
}

export function patch(store: Store, t: Target, body: unknown, contentType: string): Reply {
  const apply = PATCH_TYPES[contentType.split(";")[0]!.trim() as keyof typeof PATCH_TYPES];
  if (!apply) throw unsupportedMedia(contentType);
  const old = store.get(keyOf(t.def, t.ns, t.name!));
  if (!old) throw notFound(t.def, t.name!);
  let next: Obj;
  try {
    next = apply(old, body) as Obj;
  } catch (e) {
    if (e instanceof PatchError) throw badRequest(e.message);
    throw e;
  }
  // A resourceVersion the patch sets is a precondition; otherwise the patch applies to the current object.
  const patchRv = (body as Obj)?.metadata?.resourceVersion;
  next.metadata = { ...next.metadata, resourceVersion: patchRv ?? old.metadata.resourceVersion };
  return write(store, t, old, next);
}

export function remove(store: Store, t: Target, body: Obj | undefined): Reply {
  const key = keyOf(t.def, t.ns, t.name!);
  const old = store.get(key);
  if (!old) throw notFound(t.def, t.name!);
  const pre = body?.preconditions ?? {};
  if (pre.uid && pre.uid !== old.metadata.uid) {
    throw conflict(t.def, t.name!, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`);
  }
  if (pre.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
    throw conflict(t.def, t.name!, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`);
  }
  return { code: 200, body: store.delete(key) };
}
