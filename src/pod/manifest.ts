// Decoding pod manifests (static pod files, staticPodURL bodies): YAML or JSON, several documents per
// file, each a Pod, a PodList or a List of pods. Each bad pod becomes a ManifestError naming the file,
// document and field path; the good pods of the same file still run (upstream rejects a whole file;
// bunlet is more forgiving with multi-document files but never runs an invalid pod).
import { parseAllDocuments } from "yaml";
import type { z } from "zod";
import { apiObjectReference } from "./api-references.ts";
import { podSchema, type Pod } from "./types.ts";

export class ManifestError extends Error {
  override name = "ManifestError";
  constructor(
    readonly file: string,
    readonly field: string,
    readonly detail: string,
  ) {
    super(`invalid pod manifest ${file}${field ? `: ${field}` : ""}: ${detail}`);
  }
}

export interface DecodedManifests {
  pods: Pod[];
  errors: ManifestError[];
}

/** Formats a zod issue path as `spec.containers[0].env[1].valueFrom`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}

function issueErrors(file: string, prefix: string, error: z.ZodError): ManifestError[] {
  return error.issues.map((issue) => {
    const base = [prefix, formatPath(issue.path)].filter(Boolean).join(".");
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys;
      const field = keys.length === 1 ? [base, keys[0]].filter(Boolean).join(".") : base;
      const what = keys.length === 1 ? "field" : `fields ${keys.join(", ")}`;
      // Every v1 field decodes (schema/), so an unknown key is a typo or a field newer than v1.37.
      return new ManifestError(file, field, `${what} not supported by bunlet: not a field of the v1 Pod (Kubernetes v1.37); check the spelling`);
    }
    const message = /received undefined$/.test(issue.message) ? "required field is missing" : issue.message;
    return new ManifestError(file, base, message);
  });
}

export interface DecodedPod {
  pod?: Pod;
  errors: ManifestError[];
  /** API pods: the keys that are no v1.37 field, left out (`spec.someNewField`). */
  ignored?: string[];
}

/**
 * Validates one decoded object as a Pod. A static pod (the default source) may not reference API
 * objects (upstream tryDecodeSinglePod, PreventStaticPodAPIReferences); API pods (`source: "api"`) may.
 * A key that is no v1.37 field is an error in a file (a typo); in an API pod it is a field of a newer
 * API server, which the API server validated: it is left out, as a kubelet older than its API server
 * ignores the fields it does not know (Go's JSON decoding drops them), and named in `ignored`.
 */
export function decodePod(obj: unknown, file: string, prefix = "", source: "static" | "api" = "static"): DecodedPod {
  let r = podSchema.safeParse(obj);
  const ignored: string[] = [];
  for (let pass = 0; source === "api" && !r.success && pass < 3; pass++) {
    const unknown = r.error.issues.filter((i) => i.code === "unrecognized_keys");
    if (unknown.length === 0) break;
    ignored.push(...unknown.flatMap((i) => i.keys.map((k) => formatPath([...i.path, k]))));
    obj = withoutKeys(obj, unknown);
    r = podSchema.safeParse(obj);
  }
  if (!r.success) return { errors: issueErrors(file, prefix, r.error) };
  const ref = source === "static" ? apiObjectReference(r.data) : undefined;
  if (ref) return { errors: [new ManifestError(file, prefix, `static pods may not reference ${ref}`)] };
  return { pod: r.data, errors: [], ...(ignored.length ? { ignored } : {}) };
}

/** A copy of `obj` without the keys the issues name. */
function withoutKeys(obj: unknown, issues: { path: PropertyKey[]; keys: string[] }[]): unknown {
  const copy = structuredClone(obj);
  for (const i of issues) {
    let at = copy as Record<PropertyKey, unknown> | undefined;
    for (const p of i.path) at = at?.[p] as Record<PropertyKey, unknown> | undefined;
    if (at && typeof at === "object") for (const k of i.keys) delete at[k];
  }
  return copy;
}

/**
 * Alias expansion limit (the `yaml` package's resource-exhaustion guard, as Go's yaml.v2 has its own):
 * a "billion laughs" document becomes an error of its document instead of gigabytes of objects.
 */
export const MAX_ALIAS_COUNT = 100;

/**
 * Deepest flow nesting ([ and {) accepted. Measured: the `yaml` parser takes ~1 s for 1,000 nested
 * brackets and overflows its stack at ~6,000, so a 512 KiB file of brackets would block the event
 * loop for many seconds; a pod manifest never nests more than a dozen levels.
 */
export const MAX_FLOW_DEPTH = 100;

/** Cheap pre-scan for flow nesting depth (quoted scalars skipped), before the parser sees the text. */
export function flowDepthExceeded(text: string, max = MAX_FLOW_DEPTH): boolean {
  let depth = 0;
  let quote = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote || c === "\n") quote = "";
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "[" || c === "{") {
      if (++depth > max) return true;
    } else if ((c === "]" || c === "}") && depth > 0) depth--;
  }
  return false;
}

/** Decodes every document of a manifest text. `file` names the source in errors (path or URL). */
export function decodeManifests(text: string, file: string): DecodedManifests {
  const out: DecodedManifests = { pods: [], errors: [] };
  if (flowDepthExceeded(text)) {
    out.errors.push(new ManifestError(file, "", `not YAML/JSON: nesting deeper than ${MAX_FLOW_DEPTH} levels of [ or {`));
    return out;
  }
  let docs;
  try {
    docs = parseAllDocuments(text);
  } catch (e) {
    out.errors.push(new ManifestError(file, "", `not YAML/JSON: ${(e as Error).message}`));
    return out;
  }
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, d) => {
    const where = list.length > 1 ? `document ${d}` : "";
    if (doc.errors.length > 0) {
      out.errors.push(new ManifestError(file, where, `not YAML/JSON: ${doc.errors[0]!.message}`));
      return;
    }
    // Inside the per-document try: one hostile document is an error of that document only.
    let obj: unknown;
    try {
      obj = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (e) {
      out.errors.push(new ManifestError(file, where, `not YAML/JSON: ${(e as Error).message}`));
      return;
    }
    if (obj === null || obj === undefined) return; // empty document (e.g. trailing ---)
    if (Array.isArray(obj)) {
      // A bare array of pods (some config generators emit one).
      obj.forEach((item, i) => {
        const r = decodePod(item, file, [where && `${where}:`, `[${i}]`].join(""));
        if (r.pod) out.pods.push(r.pod);
        out.errors.push(...r.errors);
      });
      return;
    }
    if (typeof obj !== "object") {
      out.errors.push(new ManifestError(file, where, "expected a Pod, PodList or List object"));
      return;
    }
    const kind = (obj as { kind?: unknown }).kind;
    if (kind === "PodList" || kind === "List") {
      const items = (obj as { items?: unknown }).items;
      if (!Array.isArray(items)) {
        out.errors.push(new ManifestError(file, [where, "items"].filter(Boolean).join(" "), "must be a list of pods"));
        return;
      }
      items.forEach((item, i) => {
        const r = decodePod(item, file, [where && `${where}:`, `items[${i}]`].join(""));
        if (r.pod) out.pods.push(r.pod);
        out.errors.push(...r.errors);
      });
      return;
    }
    if (kind !== undefined && kind !== "Pod") {
      out.errors.push(new ManifestError(file, [where, "kind"].filter(Boolean).join(" "), `"${String(kind)}" is not supported; use Pod, PodList or List`));
      return;
    }
    const r = decodePod(obj, file, where && `${where}:`);
    if (r.pod) out.pods.push(r.pod);
    out.errors.push(...r.errors);
  });
  return out;
}
