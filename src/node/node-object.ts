// The Node object the kubelet registers (upstream Kubelet.initialNode) and the reconcile of an
// existing one (tryRegisterWithAPIServer: the default labels and the controller-managed
// attach/detach annotation are brought back to what this kubelet would register).
import type { Node } from "../kube/types.ts";
import type { NodeStatus } from "./node-status.ts";

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface NodeRegistration {
  nodeName: string;
  hostname: string;
  os: string;
  arch: string;
  nodeLabels: Record<string, string>;
  registerWithTaints: Taint[];
  providerID?: string;
}

export const CONTROLLER_MANAGED_ATTACH = "volumes.kubernetes.io/controller-managed-attach-detach";

export function defaultLabels(r: NodeRegistration): Record<string, string> {
  return {
    "kubernetes.io/hostname": r.hostname,
    "kubernetes.io/os": r.os,
    "kubernetes.io/arch": r.arch,
    "beta.kubernetes.io/os": r.os,
    "beta.kubernetes.io/arch": r.arch,
  };
}

export function initialNode(r: NodeRegistration, status: NodeStatus): Node {
  const spec: Record<string, unknown> = {};
  if (r.registerWithTaints.length) spec.taints = r.registerWithTaints.map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect }));
  if (r.providerID) spec.providerID = r.providerID;
  return {
    kind: "Node",
    apiVersion: "v1",
    metadata: {
      name: r.nodeName,
      labels: { ...defaultLabels(r), ...r.nodeLabels },
      annotations: { [CONTROLLER_MANAGED_ATTACH]: "true" },
    },
    spec,
    status,
  };
}

/** The merge patch that brings an existing Node's default labels and attach/detach annotation back; undefined if none is needed. */
export function reconcileExisting(r: NodeRegistration, existing: Node): Record<string, unknown> | undefined {
  const labels: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(defaultLabels(r))) if (existing.metadata.labels?.[k] !== v) labels[k] = v;
  const annotations: Record<string, string> = {};
  if (existing.metadata.annotations?.[CONTROLLER_MANAGED_ATTACH] !== "true") annotations[CONTROLLER_MANAGED_ATTACH] = "true";
  if (!Object.keys(labels).length && !Object.keys(annotations).length) return undefined;
  return { metadata: { ...(Object.keys(labels).length ? { labels } : {}), ...(Object.keys(annotations).length ? { annotations } : {}) } };
}
