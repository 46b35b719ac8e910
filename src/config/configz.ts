// Serialising the effective configuration the way the kubelet does: v1beta1 JSON with Go's
// omitempty rules (zero scalars, empty maps and lists dropped; pointer fields and non-pointer
// structs such as durations always printed), durations as Go strings. /configz wraps it as
// {"kubeletconfig": {...}} without apiVersion/kind; `bunlet config print` adds them first.
import { stringify } from "yaml";
import { FIELD_GO_KIND, KUBELET_CONFIG_FIELDS, type KubeletConfiguration } from "./kubelet-config.ts";

function isGoZero(v: unknown): boolean {
  if (v === undefined || v === null || v === "" || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === "object") return Object.keys(v).length === 0;
  return false;
}

/** Drops undefined members recursively (nested omitempty fields are all optional in our types). */
function clean(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clean);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = clean(x);
    return out;
  }
  return v;
}

/** The v1beta1 JSON object (without apiVersion/kind), in upstream field order. */
export function toV1beta1(config: KubeletConfiguration): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const c = config as unknown as Record<string, unknown>;
  for (const k of KUBELET_CONFIG_FIELDS) {
    if (k === "apiVersion" || k === "kind") continue;
    const v = c[k];
    if (v === undefined) continue;
    const kind = FIELD_GO_KIND[k];
    if (kind === undefined && isGoZero(v)) continue;
    out[k] = clean(v);
  }
  return out;
}

/** The /configz response body, shaped as the kubelet's: {"kubeletconfig": {...}}. */
export function configz(config: KubeletConfiguration): { kubeletconfig: Record<string, unknown> } {
  return { kubeletconfig: toV1beta1(config) };
}

/** A loadable config file of the effective configuration (`bunlet config print`). */
export function renderConfig(config: KubeletConfiguration, format: "yaml" | "json"): string {
  const doc = { apiVersion: config.apiVersion, kind: config.kind, ...toV1beta1(config) };
  if (format === "json") return `${JSON.stringify(doc, null, 2)}\n`;
  return stringify(doc, { lineWidth: 0 });
}
