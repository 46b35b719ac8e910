// The kubelet's predicate admit handler (upstream pkg/kubelet/lifecycle/predicate.go, with the
// scheduler's AdmissionCheck): before a pod runs, the node must fit it. Checked in upstream's order,
// every failure collected, the first one reported:
//   OS selector → OS field → pods (maxPods) → cpu → memory → ephemeral-storage (requests against
//   allocatable minus the other active pods' requests: OutOf<resource>, InsufficientResourceError
//   text) → NodeAffinity (nodeSelector + required node affinity) → NodeName → NodePorts →
//   TaintToleration (untolerated NoExecute taints; static pods exempt). A rejected pod ends Failed
//   with that reason.
// Without the Node object (standalone mode, or before registration) only the OS field and the pod
// count are checked.
// A refused pod's failures go to the admission failure handler first (upstream's
// CriticalPodAdmissionHandler, src/pod/preemption-handler.ts): a critical pod short only of
// resources preempts lower-priority pods and is admitted.
import { parseQuantity, quantityMilliValue } from "../config/quantity.ts";
import { podRequestMilli } from "./pod-resources.ts";
import { admitMaxPods, OUT_OF_PODS } from "./admit-max-pods.ts";
import type { PodAdmitHandler } from "./lifecycle-types.ts";
import { isStaticPod, type PodLike } from "./pod-like.ts";

export interface AdmissionNode {
  name: string;
  labels: Record<string, string>;
  taints: { key: string; value?: string; effect: string }[];
  /** status.allocatable (quantities). */
  allocatable: Record<string, string>;
}

/** InsufficientResourceError's figures, in resource.GetResourceRequest units (cpu millicores, bytes, pod count). */
export interface InsufficientResource {
  resourceName: string;
  requested: number;
  used: number;
  capacity: number;
}

/** A refusal; `insufficient` marks the resource ones (OutOf<resource>), the only ones preemption can cure. */
export type AdmitRejection = { admit: false; reason: string; message: string; insufficient?: InsufficientResource };
/** `waitFor`: the pod is admitted, but starts once this settles (the pods it preempted are stopped). */
export type AdmitVerdict = { admit: true; waitFor?: Promise<unknown> } | AdmitRejection;

/**
 * Upstream lifecycle.AdmissionFailureHandler: given the failed predicates, the ones that still stand
 * (none: admit), or an error (UnexpectedAdmissionError); `waitFor` as in AdmitVerdict.
 */
export type AdmissionFailureHandler = (
  pod: PodLike,
  failures: AdmitRejection[],
  others: PodLike[],
) => { failures: AdmitRejection[]; error?: string; waitFor?: Promise<unknown> };

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}
interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}
interface SchedulingSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: {
    nodeAffinity?: {
      requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: { matchExpressions?: Requirement[]; matchFields?: Requirement[] }[] };
    };
  };
  tolerations?: Toleration[];
  containers: { ports?: { hostPort?: number; hostIP?: string; protocol?: string }[] }[];
  initContainers?: { ports?: { hostPort?: number; hostIP?: string; protocol?: string }[] }[];
  os?: { name: string };
}

const spec = (p: PodLike) => p.spec as unknown as SchedulingSpec;
const predicate = (name: string, desc: string): AdmitRejection => ({ admit: false, reason: name, message: `Predicate ${name} failed: ${desc}` });

function milli(q: string | undefined): number {
  if (q === undefined) return 0;
  try {
    return quantityMilliValue(parseQuantity(q));
  } catch {
    return 0;
  }
}

/** noderesources.Fits for cpu, memory, ephemeral-storage (in upstream's order and units). */
function insufficientResources(pod: PodLike, others: PodLike[], node: AdmissionNode): AdmitRejection[] {
  const out: AdmitRejection[] = [];
  const maxPods = Math.floor(milli(node.allocatable.pods) / 1000);
  const pods = admitMaxPods(others.length, maxPods);
  if (!pods.admit) out.push({ ...pods, insufficient: { resourceName: "pods", requested: 1, used: others.length, capacity: maxPods } });
  for (const [name, scale] of [
    ["cpu", 1],
    ["memory", 1000],
    ["ephemeral-storage", 1000],
  ] as const) {
    const requested = podRequestMilli(pod, name);
    if (requested <= 0) continue;
    const used = others.reduce((n, p) => n + podRequestMilli(p, name), 0);
    const capacity = milli(node.allocatable[name]);
    if (requested > capacity - used) {
      const v = (x: number) => Math.ceil(x / scale);
      out.push({
        admit: false,
        reason: `OutOf${name}`,
        message: `Node didn't have enough resource: ${name}, requested: ${v(requested)}, used: ${v(used)}, capacity: ${v(capacity)}`,
        insufficient: { resourceName: name, requested: v(requested), used: v(used), capacity: v(capacity) },
      });
    }
  }
  return out;
}

function matchesRequirement(r: Requirement, value: string | undefined): boolean {
  const vals = r.values ?? [];
  switch (r.operator) {
    case "In":
      return value !== undefined && vals.includes(value);
    case "NotIn":
      return value === undefined || !vals.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
    case "Lt": {
      if (value === undefined || vals.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(vals[0]!)) return false;
      return r.operator === "Gt" ? BigInt(value) > BigInt(vals[0]!) : BigInt(value) < BigInt(vals[0]!);
    }
    default:
      return false;
  }
}

/** GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND (any term: all its expressions and fields). */
export function matchesNodeAffinity(pod: PodLike, node: AdmissionNode): boolean {
  const s = spec(pod);
  for (const [k, v] of Object.entries(s.nodeSelector ?? {})) if (node.labels[k] !== v) return false;
  const terms = s.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms) return true;
  return terms.some((t) => {
    if (!t.matchExpressions?.length && !t.matchFields?.length) return false; // an empty term matches nothing
    return (
      (t.matchExpressions ?? []).every((r) => matchesRequirement(r, node.labels[r.key])) &&
      (t.matchFields ?? []).every((r) => r.key === "metadata.name" && matchesRequirement(r, node.name))
    );
  });
}

/** v1helper.TolerationsTolerateTaint. */
export function tolerates(t: Toleration, taint: AdmissionNode["taints"][number]): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === "Exists") return true;
  return (t.operator ?? "Equal") === "Equal" && (t.value ?? "") === (taint.value ?? "");
}

const hostPorts = (p: PodLike) =>
  [...(spec(p).initContainers ?? []), ...spec(p).containers].flatMap((c) =>
    (c.ports ?? []).filter((x) => (x.hostPort ?? 0) > 0).map((x) => ({ port: x.hostPort!, ip: x.hostIP || "0.0.0.0", protocol: x.protocol || "TCP" })),
  );

function hostPortsConflict(pod: PodLike, others: PodLike[]): boolean {
  const used = others.flatMap(hostPorts);
  return hostPorts(pod).some((w) =>
    used.some((u) => u.port === w.port && u.protocol === w.protocol && (u.ip === w.ip || u.ip === "0.0.0.0" || w.ip === "0.0.0.0")),
  );
}

/** All failed predicates in upstream's order (the first is the one reported). */
export function generalPredicates(pod: PodLike, others: PodLike[], node: AdmissionNode): AdmitRejection[] {
  const out = insufficientResources(pod, others, node);
  if (!matchesNodeAffinity(pod, node)) out.push(predicate("NodeAffinity", "node(s) didn't match Node's node affinity/selector"));
  const nodeName = spec(pod).nodeName;
  if (nodeName && nodeName !== node.name) out.push(predicate("NodeName", "node(s) didn't match the requested node name"));
  if (hostPortsConflict(pod, others)) out.push(predicate("NodePorts", "node(s) didn't have free ports for the requested pod ports"));
  if (!isStaticPod(pod)) {
    const tolerations = spec(pod).tolerations ?? [];
    if (node.taints.some((t) => t.effect === "NoExecute" && !tolerations.some((x) => tolerates(x, t))))
      out.push(predicate("TaintToleration", "node(s) had untolerated taint"));
  }
  return out;
}

/** Upstream lifecycle.UnexpectedAdmissionError. */
export const UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError";

/** The failures left once the failure handler had its say, as one verdict (upstream Admit's tail). */
function afterFailureHandler(pod: PodLike, failures: AdmitRejection[], others: PodLike[], onFailure: AdmissionFailureHandler | undefined): AdmitVerdict {
  if (failures.length === 0) return { admit: true };
  if (!onFailure) return failures[0]!;
  const r = onFailure(pod, failures, others);
  if (r.error !== undefined)
    return { admit: false, reason: UNEXPECTED_ADMISSION_ERROR, message: `Unexpected error while attempting to recover from admission failure: ${r.error}` };
  return r.failures[0] ?? (r.waitFor ? { admit: true, waitFor: r.waitFor } : { admit: true });
}

/** upstream lifecycle.PodOSNotSupported. */
export const POD_OS_NOT_SUPPORTED = "PodOSNotSupported";

/**
 * upstream rejectPodAdmissionBasedOnOSField: spec.os.name must be the kubelet's OS (runtime.GOOS;
 * Node's process.platform names Linux as Go does). Needs no Node object.
 */
export function admitPodOS(pod: PodLike, nodeOS: string = process.platform): AdmitRejection | undefined {
  const os = spec(pod).os?.name;
  if (os === undefined || os === nodeOS) return undefined;
  return { admit: false, reason: POD_OS_NOT_SUPPORTED, message: "Failed to admit pod as the OS field doesn't match node OS" };
}

/** The whole handler: OS selector and OS field first (preemption would not help), then the general predicates. */
export function admitPredicates(pod: PodLike, others: PodLike[], node: AdmissionNode, onFailure?: AdmissionFailureHandler): AdmitVerdict {
  const os = spec(pod).nodeSelector?.["kubernetes.io/os"];
  if (os !== undefined && node.labels["kubernetes.io/os"] !== os)
    return {
      admit: false,
      reason: "PodOSSelectorNodeLabelDoesNotMatch",
      message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    };
  const osField = admitPodOS(pod);
  if (osField) return osField;
  return afterFailureHandler(pod, generalPredicates(pod, others, node), others, onFailure);
}

/** The admit handler: full predicates against the Node object when known, else the pod count. */
export function predicateAdmitHandler(o: { maxPods: number; node: () => AdmissionNode | undefined; onFailure?: AdmissionFailureHandler }): PodAdmitHandler {
  return (pod, others) => {
    const node = o.node();
    if (node) return admitPredicates(pod, others, node, o.onFailure);
    const osField = admitPodOS(pod);
    if (osField) return osField;
    const pods = admitMaxPods(others.length, o.maxPods);
    return pods.admit
      ? pods
      : afterFailureHandler(
          pod,
          [{ ...pods, insufficient: { resourceName: "pods", requested: 1, used: others.length, capacity: o.maxPods } }],
          others,
          o.onFailure,
        );
  };
}

/** The Node object as the API server returned it → what admission reads. */
export function admissionNodeFrom(
  node: { metadata: { name: string; labels?: Record<string, string> | null }; spec?: object | null; status?: object | null } | undefined,
): AdmissionNode | undefined {
  const allocatable = (node?.status as { allocatable?: Record<string, string> } | null | undefined)?.allocatable;
  if (!node || !allocatable) return undefined;
  const taints = (node.spec as { taints?: AdmissionNode["taints"] | null } | null | undefined)?.taints ?? [];
  return { name: node.metadata.name, labels: node.metadata.labels ?? {}, taints, allocatable };
}

export { OUT_OF_PODS };
