// Static pod defaults, as upstream pkg/kubelet/config/common.go applyDefaults: a UID derived from an
// md5 of the pod plus where it came from (so the same manifest on the same node keeps its UID across
// restarts — that is what makes adoption of running containers possible), the name suffixed with
// `-<nodeName>`, namespace "default", spec.nodeName, the config hash/source annotations, a NoExecute
// toleration for file pods, and phase Pending. Plus what the API server's Priority admission would
// have set: spec.priority from a system priorityClassName when the manifest gives only the name.
import { createHash } from "node:crypto";
import { SYSTEM_PRIORITY_CLASSES } from "./pod-like.ts";
import type { Pod } from "./types.ts";

export const ConfigSourceAnnotationKey = "kubernetes.io/config.source";
export const ConfigHashAnnotationKey = "kubernetes.io/config.hash";
export const ConfigFirstSeenAnnotationKey = "kubernetes.io/config.seen";
export const ConfigMirrorAnnotationKey = "kubernetes.io/config.mirror";

export type PodSourceName = "file" | "http" | "api";

/** Stable JSON (sorted keys) so the hash does not depend on key order in the manifest. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (v && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${stableJson(x)}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

/**
 * Upstream: md5(DeepHashObject(pod) + "host:<node>" + "file:<path>") for files, + "url:<url>" for
 * http. We hash a canonical JSON of the decoded pod instead of Go's spew dump: same inputs, same
 * stability, different bytes (UIDs are not comparable with a Go kubelet's, which nothing needs).
 */
export function staticPodUid(pod: Pod, nodeName: string, source: "file" | "http", location: string): string {
  const h = createHash("md5");
  h.update(stableJson(pod));
  if (source === "file") {
    h.update(`host:${nodeName}`);
    h.update(`file:${location}`);
  } else {
    h.update(`url:${location}`);
  }
  return h.digest("hex");
}

export function generatePodName(name: string, nodeName: string): string {
  return `${name}-${nodeName.toLowerCase()}`;
}

/** Returns a defaulted copy; the input is not modified. */
export function applyStaticPodDefaults(pod: Pod, opts: { nodeName: string; source: "file" | "http"; location: string }): Pod {
  const out = structuredClone(pod);
  if (!out.metadata.uid) out.metadata.uid = staticPodUid(pod, opts.nodeName, opts.source, opts.location);
  out.metadata.name = generatePodName(out.metadata.name, opts.nodeName);
  if (!out.metadata.namespace) out.metadata.namespace = "default";
  out.spec.nodeName = opts.nodeName;
  out.metadata.annotations = {
    ...out.metadata.annotations,
    [ConfigHashAnnotationKey]: out.metadata.uid,
    [ConfigSourceAnnotationKey]: opts.source,
  };
  if (opts.source === "file") {
    // So node taints never evict static pods (upstream AddOrUpdateTolerationInPod).
    const tolerations = out.spec.tolerations ?? [];
    if (!tolerations.some((t) => t.operator === "Exists" && t.effect === "NoExecute" && !t.key)) tolerations.push({ operator: "Exists", effect: "NoExecute" });
    out.spec.tolerations = tolerations;
  }
  // No API server admits a static pod, so nothing resolves its priorityClassName: the built-in system
  // classes are known without one (kubeadm writes both fields; hand-written manifests often only the
  // name). Other class names stay at priority 0 — their values live in the API.
  const classPriority = out.spec.priorityClassName ? SYSTEM_PRIORITY_CLASSES[out.spec.priorityClassName] : undefined;
  if (out.spec.priority === undefined && classPriority !== undefined) out.spec.priority = classPriority;
  out.status = { phase: "Pending" };
  return out;
}
