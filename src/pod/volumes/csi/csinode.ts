// The CSINode object (storage.k8s.io/v1) as the kubelet keeps it (upstream
// pkg/volume/csi/nodeinfomanager: installDriverToCSINode, tryUninstallDriverFromCSINode,
// setMigrationAnnotation, nodeOwnsCSINode, CreateCSINode): pure functions from the object read to the
// object to write, or undefined when nothing changes.
import { z } from "zod";
import { objectMetaSchema } from "../../../kube/types.ts";
import { log } from "../../../log.ts";

/** Upstream v1.MigratedPluginsAnnotationKey. */
export const MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins";
/** The in-tree plugins whose volumes CSI serves (upstream csi_plugin.go Init: every one migrated). */
export const MIGRATED_PLUGINS = [
  "kubernetes.io/gce-pd",
  "kubernetes.io/aws-ebs",
  "kubernetes.io/cinder",
  "kubernetes.io/azure-disk",
  "kubernetes.io/azure-file",
  "kubernetes.io/vsphere-volume",
  "kubernetes.io/portworx-volume",
];
const MAX_INT32 = 2_147_483_647;

const csiNodeDriverSchema = z.looseObject({
  name: z.string(),
  nodeID: z.string(),
  topologyKeys: z.array(z.string()).nullish(),
  allocatable: z.looseObject({ count: z.number().nullish() }).nullish(),
});
export const csiNodeSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: objectMetaSchema,
  spec: z.looseObject({ drivers: z.array(csiNodeDriverSchema).nullish() }),
});
export type CSINode = z.infer<typeof csiNodeSchema>;
export type CSINodeDriver = z.infer<typeof csiNodeDriverSchema>;

/** A new CSINode owned by the Node (upstream CreateCSINode), with the migration annotation. */
export function newCSINode(nodeName: string, nodeUID: string): CSINode {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSINode",
    metadata: {
      name: nodeName,
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name: nodeName, uid: nodeUID }],
      annotations: { [MIGRATED_PLUGINS_ANNOTATION]: [...MIGRATED_PLUGINS].sort().join(",") },
    },
    spec: { drivers: [] },
  };
}

/** Upstream nodeOwnsCSINode: whether an owner reference names this Node with its UID; else the last Node owner's UID. */
export function nodeOwnsCSINode(n: CSINode, nodeName: string, nodeUID: string): { owns: boolean; ownerUID: string } {
  let ownerUID = "";
  for (const r of n.metadata.ownerReferences ?? []) {
    if (r.kind !== "Node") continue;
    ownerUID = r.uid;
    if (r.name === nodeName && r.uid === nodeUID) return { owns: true, ownerUID };
  }
  return { owns: false, ownerUID };
}

/** Sets the migration annotation to the migrated plugins; whether it changed (upstream setMigrationAnnotation). */
export function setMigrationAnnotation(n: CSINode): boolean {
  const annotations = { ...(n.metadata.annotations ?? {}) };
  const old = annotations[MIGRATED_PLUGINS_ANNOTATION] ?? "";
  const oldSet = new Set(old === "" ? [] : old.split(","));
  const wanted = [...MIGRATED_PLUGINS].sort();
  if (oldSet.size === wanted.length && wanted.every((p) => oldSet.has(p))) return false;
  annotations[MIGRATED_PLUGINS_ANNOTATION] = wanted.join(",");
  n.metadata.annotations = annotations;
  return true;
}

const sameSet = (a: readonly string[], b: readonly string[]) => {
  const s = new Set(a);
  return new Set(b).size === s.size && b.every((x) => s.has(x));
};

/** Upstream keepAllocatableCount: whether the driver's allocatable count already says maxAttachLimit. */
function keepAllocatableCount(d: CSINodeDriver, maxAttachLimit: number): boolean {
  const count = d.allocatable?.count;
  if (maxAttachLimit === 0) return count === undefined || count === null;
  return count === maxAttachLimit;
}

/** The driver's entry: sorted topology keys, allocatable.count from max_volumes_per_node when positive. */
export function driverSpec(name: string, nodeID: string, maxAttachLimit: number, topology: Record<string, string>): CSINodeDriver {
  const d: CSINodeDriver = { name, nodeID, topologyKeys: Object.keys(topology).sort() };
  if (maxAttachLimit > 0) {
    if (maxAttachLimit > MAX_INT32) log.warn(`Exceeded max supported attach limit value, truncating it to ${MAX_INT32}`);
    d.allocatable = { count: Math.min(maxAttachLimit, MAX_INT32) };
  } else if (maxAttachLimit !== 0) {
    log.error(`Invalid attach limit value ${maxAttachLimit} cannot be added to CSINode object for ${JSON.stringify(name)}`);
  }
  return d;
}

/** Upstream installDriverToCSINode: the CSINode to write with the driver's entry (last), or undefined when unchanged. */
export function installDriver(n: CSINode, name: string, nodeID: string, maxAttachLimit: number, topology: Record<string, string>): CSINode | undefined {
  const out = structuredClone(n);
  let specModified = true;
  const others: CSINodeDriver[] = [];
  for (const d of n.spec.drivers ?? []) {
    if (d.name !== name) others.push(d);
    else if (d.nodeID === nodeID && sameSet(d.topologyKeys ?? [], Object.keys(topology)) && keepAllocatableCount(d, maxAttachLimit)) specModified = false;
  }
  const annotationModified = setMigrationAnnotation(out);
  if (!specModified && !annotationModified) return undefined;
  out.spec.drivers = [...others, driverSpec(name, nodeID, maxAttachLimit, topology)];
  return out;
}

/** Upstream tryUninstallDriverFromCSINode: the CSINode without the driver, or undefined when it had none. */
export function uninstallDriver(n: CSINode, name: string): CSINode | undefined {
  const drivers = n.spec.drivers ?? [];
  if (!drivers.some((d) => d.name === name)) return undefined;
  const out = structuredClone(n);
  out.spec.drivers = drivers.filter((d) => d.name !== name);
  return out;
}
