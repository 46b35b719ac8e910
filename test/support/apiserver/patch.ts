// The patch types kube-apiserver accepts from the kubelet and kubectl:
//   application/merge-patch+json            RFC 7386
//   application/json-patch+json             RFC 6902
//   application/strategic-merge-patch+json  the subset node status needs: maps merge, null deletes,
//     lists with a patchMergeKey merge by key (conditions/addresses by "type", ownerReferences by
//     "uid", images/taints replaced as upstream's atomic lists), "$setElementOrder/<list>" orders the
//     merged list, "$patch: delete" in a list item removes it, "$retainKeys" is accepted and ignored.
import type { Obj } from "./store.ts";

export class PatchError extends Error {}

const isMap = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return structuredClone(patch);
  const out: Obj = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function pointer(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw new PatchError(`invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function parentOf(doc: any, parts: string[], path: string): { parent: any; key: string } {
  let cur = doc;
  for (const p of parts.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[Number(p)] : cur?.[p];
    if (cur === undefined || cur === null) throw new PatchError(`doc is missing path: "${path}"`);
  }
  return { parent: cur, key: parts[parts.length - 1]! };
}

function getAt(doc: any, path: string): unknown {
  let cur = doc;
  for (const p of pointer(path)) {
    cur = Array.isArray(cur) ? cur[Number(p)] : cur?.[p];
    if (cur === undefined) throw new PatchError(`doc is missing path: "${path}"`);
  }
  return cur;
}

function removeAt(doc: any, path: string): unknown {
  const { parent, key } = parentOf(doc, pointer(path), path);
  if (Array.isArray(parent)) return parent.splice(Number(key), 1)[0];
  if (!(key in parent)) throw new PatchError(`doc is missing key: "${path}"`);
  const v = parent[key];
  delete parent[key];
  return v;
}

function addAt(doc: any, path: string, value: unknown): any {
  const parts = pointer(path);
  if (!parts.length) return value;
  const { parent, key } = parentOf(doc, parts, path);
  if (Array.isArray(parent)) parent.splice(key === "-" ? parent.length : Number(key), 0, value);
  else parent[key] = value;
  return doc;
}

export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new PatchError("json patch must be a list of operations");
  let doc: any = structuredClone(target);
  for (const op of ops as Obj[]) {
    switch (op.op) {
      case "add":
        doc = addAt(doc, op.path, structuredClone(op.value));
        break;
      case "remove":
        removeAt(doc, op.path);
        break;
      case "replace":
        removeAt(doc, op.path);
        doc = addAt(doc, op.path, structuredClone(op.value));
        break;
      case "move": {
        const v = removeAt(doc, op.from);
        doc = addAt(doc, op.path, v);
        break;
      }
      case "copy":
        doc = addAt(doc, op.path, structuredClone(getAt(doc, op.from)));
        break;
      case "test":
        if (JSON.stringify(getAt(doc, op.path)) !== JSON.stringify(op.value)) throw new PatchError(`testing value ${op.path} failed`);
        break;
      default:
        throw new PatchError(`Unexpected kind: ${op.op}`);
    }
  }
  return doc;
}

/** patchMergeKey of lists merged by key (path without indices → key), as k8s.io/api declares them. */
const MERGE_KEYS: Record<string, string> = {
  "status.conditions": "type",
  "status.addresses": "type",
  "status.volumesAttached": "name",
  "metadata.ownerReferences": "uid",
  "spec.containers": "name",
  "spec.initContainers": "name",
  "spec.volumes": "name",
  "spec.tolerations": "key",
  "status.containerStatuses": "name",
  "status.initContainerStatuses": "name",
  "status.podIPs": "ip",
};
/** Lists of scalars merged as sets (patchStrategy: merge without a key). */
const SET_LISTS = new Set(["metadata.finalizers", "status.volumesInUse"]);

function mergeKeyed(cur: Obj[], patch: Obj[], key: string, path: string): Obj[] {
  const out = cur.map((x) => structuredClone(x));
  for (const item of patch) {
    const i = out.findIndex((x) => x[key] === item[key]);
    if (item.$patch === "delete") {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) out[i] = strategicMerge(out[i], item, path) as Obj;
    else out.push(strategicMerge({}, item, path) as Obj);
  }
  return out;
}

function order<T>(list: T[], by: unknown[], keyOf: (x: T) => unknown): T[] {
  const rank = (x: T) => {
    const i = by.findIndex((b) => JSON.stringify(b) === JSON.stringify(keyOf(x)));
    return i < 0 ? by.length : i;
  };
  return [...list].sort((a, b) => rank(a) - rank(b));
}

export function strategicMerge(target: unknown, patch: unknown, path = ""): unknown {
  if (!isMap(patch)) return structuredClone(patch);
  if (patch.$patch === "replace") {
    const { $patch: _, ...rest } = patch;
    return structuredClone(rest);
  }
  const out: Obj = isMap(target) ? { ...target } : {};
  const orders: [string, unknown[]][] = [];
  for (const [k, v] of Object.entries(patch)) {
    if (k === "$retainKeys" || k === "$patch") continue;
    if (k.startsWith("$setElementOrder/")) {
      orders.push([k.slice(17), v as unknown[]]);
      continue;
    }
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const f = k.slice(25);
      out[f] = ((out[f] as unknown[]) ?? []).filter((x) => !(v as unknown[]).includes(x));
      continue;
    }
    const p = path ? `${path}.${k}` : k;
    if (v === null) delete out[k];
    else if (Array.isArray(v) && MERGE_KEYS[p] && Array.isArray(out[k])) out[k] = mergeKeyed(out[k], v as Obj[], MERGE_KEYS[p]!, p);
    else if (Array.isArray(v) && MERGE_KEYS[p]) out[k] = mergeKeyed([], v as Obj[], MERGE_KEYS[p]!, p);
    else if (Array.isArray(v) && SET_LISTS.has(p)) out[k] = [...new Set([...((out[k] as unknown[]) ?? []), ...v])];
    else if (isMap(v)) out[k] = strategicMerge(out[k], v, p);
    else out[k] = structuredClone(v);
  }
  for (const [f, by] of orders) {
    const p = path ? `${path}.${f}` : f;
    const key = MERGE_KEYS[p];
    if (Array.isArray(out[f])) out[f] = order(out[f] as Obj[], key ? by.map((b) => (b as Obj)[key]) : by, (x) => (key ? (x as Obj)[key] : x));
  }
  return out;
}

export const PATCH_TYPES = {
  "application/merge-patch+json": mergePatch,
  "application/json-patch+json": jsonPatch,
  "application/strategic-merge-patch+json": (t: unknown, p: unknown) => strategicMerge(t, p),
} as const;
