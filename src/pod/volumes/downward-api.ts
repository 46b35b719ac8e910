// The downward API (upstream pkg/api/v1/resource ExtractContainerResourceValue, pkg/fieldpath,
// kubelet_pods.go podFieldSelectorRuntimeValue): pod fields and container resources as env values or
// downwardAPI volume files. Pure: the pod, its IPs and the node's allocatable come in.
import type { PayloadFile } from "./atomic-writer.ts";
import { parseQuantity, quantityMilliValue, quantityValue } from "../../config/quantity.ts";

export interface DownwardPod {
  metadata: { name: string; namespace?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { nodeName?: string; serviceAccountName?: string; containers: DownwardContainer[]; initContainers?: DownwardContainer[] };
}
export interface DownwardContainer {
  name: string;
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
}
export interface DownwardContext {
  pod: DownwardPod;
  podIP?: string;
  hostIP?: string;
  /** Node allocatable, the value of a limit the container does not set (upstream MergeContainerResourceLimits). */
  nodeAllocatable: { cpuMilli: number; memoryBytes: number };
}

/** upstream fieldpath.FormatMap: sorted `key="value"` lines. */
export function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join("\n");
}

const SUBSCRIPT = /^metadata\.(labels|annotations)\['(.+)'\]$/;

/** Field paths a downwardAPI volume may use (upstream validDownwardAPIFieldPathExpressions). */
export const VOLUME_FIELD_PATHS = ["metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations"];
/** Field paths an env var may use besides those (upstream validEnvDownwardAPIFieldPathExpressions). */
export const ENV_FIELD_PATHS = [
  ...VOLUME_FIELD_PATHS.filter((p) => !p.endsWith("labels") && !p.endsWith("annotations")),
  "spec.nodeName",
  "spec.serviceAccountName",
  "status.hostIP",
  "status.hostIPs",
  "status.podIP",
  "status.podIPs",
];

/** True when `path` is one of `allowed` or a subscripted label/annotation. */
export const isSupportedFieldPath = (path: string, allowed: readonly string[]) => allowed.includes(path) || SUBSCRIPT.test(path);

export function fieldRefValue(fieldPath: string, ctx: DownwardContext): string {
  const m = ctx.pod.metadata;
  const sub = SUBSCRIPT.exec(fieldPath);
  if (sub) return (sub[1] === "labels" ? m.labels : m.annotations)?.[sub[2] as string] ?? "";
  switch (fieldPath) {
    case "metadata.name":
      return m.name;
    case "metadata.namespace":
      return m.namespace ?? "";
    case "metadata.uid":
      return m.uid ?? "";
    case "metadata.labels":
      return formatMap(m.labels);
    case "metadata.annotations":
      return formatMap(m.annotations);
    case "spec.nodeName":
      return ctx.pod.spec.nodeName ?? "";
    case "spec.serviceAccountName":
      return ctx.pod.spec.serviceAccountName ?? "";
    case "status.hostIP":
    case "status.hostIPs":
      return ctx.hostIP ?? "";
    case "status.podIP":
    case "status.podIPs":
      return ctx.podIP ?? "";
  }
  throw new Error(`unsupported fieldPath: ${fieldPath}`);
}

export interface ResourceFieldRef {
  containerName?: string;
  resource: string;
  divisor?: string | number;
}

/** upstream ExtractContainerResourceValue: ceil(value / divisor); cpu in millis, the rest in units. */
export function resourceFieldRefValue(ref: ResourceFieldRef, container: DownwardContainer, ctx: DownwardContext): string {
  const [kind, name] = ref.resource.split(".", 2) as [string, string | undefined];
  if ((kind !== "limits" && kind !== "requests") || !name) throw new Error(`unsupported container resource : ${ref.resource}`);
  const limit = container.resources?.limits?.[name];
  // Requests default to limits (SetDefaults); unset limits are the node's allocatable.
  const raw = kind === "limits" ? limit : (container.resources?.requests?.[name] ?? limit);
  // A zero divisor means 1: the API server writes an unset divisor as "0" (resource.Quantity has no
  // omitempty in ResourceFieldSelector's JSON), which upstream ExtractResourceValueByContainerName
  // reads as 1.
  const given = parseQuantity(String(ref.divisor ?? "1"));
  const divisor = given.nanos === 0n ? parseQuantity("1") : given;
  if (name === "cpu") {
    const milli = raw !== undefined ? quantityMilliValue(parseQuantity(String(raw))) : kind === "limits" ? ctx.nodeAllocatable.cpuMilli : 0;
    return String(Math.ceil(milli / quantityMilliValue(divisor)));
  }
  let value: number;
  if (raw !== undefined) value = quantityValue(parseQuantity(String(raw)));
  else if (kind === "requests") value = 0;
  else if (name === "memory") value = ctx.nodeAllocatable.memoryBytes;
  else throw new Error(`resource ${ref.resource} of container ${container.name} is not set and bunlet does not know the node's allocatable ${name}`);
  return String(Math.ceil(value / quantityValue(divisor)));
}

/** The container a volume's resourceFieldRef names (regular or init). */
export function findContainer(pod: DownwardPod, name: string | undefined): DownwardContainer | undefined {
  return [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((c) => c.name === name);
}

export interface DownwardApiItem {
  path: string;
  fieldRef?: { fieldPath: string; apiVersion?: string };
  resourceFieldRef?: ResourceFieldRef;
  mode?: number;
}

/** File contents of a downwardAPI volume (or projected source), by relative path. */
export function downwardApiPayload(items: readonly DownwardApiItem[], defaultMode: number | undefined, ctx: DownwardContext): Record<string, PayloadFile> {
  const out: Record<string, PayloadFile> = {};
  for (const it of items) {
    let content: string;
    if (it.fieldRef) content = fieldRefValue(it.fieldRef.fieldPath, ctx);
    else if (it.resourceFieldRef) {
      const c = findContainer(ctx.pod, it.resourceFieldRef.containerName);
      if (!c) throw new Error(`resourceFieldRef: container "${it.resourceFieldRef.containerName ?? ""}" not found in the pod`);
      content = resourceFieldRefValue(it.resourceFieldRef, c, ctx);
    } else continue;
    out[it.path] = { content, mode: it.mode ?? defaultMode ?? 0o644 };
  }
  return out;
}
