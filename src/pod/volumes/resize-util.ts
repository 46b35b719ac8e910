// Expanding a claim's filesystem on the node (upstream pkg/volume/util resize_util.go and
// operationexecutor node_expander.go; the populator's checkVolumeFSResize and the actual state's
// volumeNeedsExpansion): a mounted, writable claim whose PV's capacity has grown past the claim's
// status capacity, while the claim's storage resize status says the node's part is due
// (NodeResizePending, or NodeResizeInProgress after an attempt), is expanded by its driver
// (NodeExpandVolume), and the claim's status is patched: NodeResizeInProgress first, then the new
// capacity with the resize status and conditions cleared. Pure: the claim and PV in, patches out.
import { parseQuantity, type Quantity } from "../../config/quantity.ts";

/** What of a claim a node expansion reads (core/v1 PersistentVolumeClaim). */
export interface ExpandableClaim {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
  status: {
    capacity?: Record<string, string> | null;
    allocatedResourceStatuses?: Record<string, string> | null;
    conditions?: { type?: string }[] | null;
  };
}

/** A node expansion due: the size the volume grows to (the PV's capacity) and the claim's recorded one. */
export interface NodeExpansion {
  newSize: string;
  oldSize: string;
}

/** upstream's resize conditions, cleared once the node's expansion is done (knownResizeConditions). */
const RESIZE_CONDITIONS = new Set(["FileSystemResizePending", "Resizing", "ControllerResizeError", "NodeResizeError"]);
const NODE_RESIZE_PENDING = "NodeResizePending";
const NODE_RESIZE_IN_PROGRESS = "NodeResizeInProgress";

function quantityOf(s: string | undefined): Quantity | undefined {
  if (!s) return undefined;
  try {
    return parseQuantity(s);
  } catch {
    return undefined;
  }
}

/**
 * The node expansion the claim's volume is due, or undefined: none for a read-only mount, a size
 * unknown or zero, a PV not larger than the claim's status, or a resize status that is not the node's
 * turn (upstream runPreCheck: an empty status, ControllerResizeInProgress, …InProgress, …Infeasible).
 */
export function nodeExpansionDue(pvc: ExpandableClaim, pvCapacity: string | undefined, readOnly: boolean): NodeExpansion | undefined {
  if (readOnly) return undefined;
  const desired = quantityOf(pvCapacity);
  const actual = quantityOf(pvc.status.capacity?.storage ?? undefined);
  if (!desired || !actual || desired.nanos === 0n || actual.nanos === 0n || desired.nanos <= actual.nanos) return undefined;
  const status = pvc.status.allocatedResourceStatuses?.storage;
  if (status !== NODE_RESIZE_PENDING && status !== NODE_RESIZE_IN_PROGRESS) return undefined;
  return { newSize: pvCapacity!, oldSize: pvc.status.capacity!.storage! };
}

/** The claim's URL path for a status patch. */
export const claimStatusPath = (pvc: ExpandableClaim) =>
  `/api/v1/namespaces/${encodeURIComponent(pvc.metadata.namespace ?? "")}/persistentvolumeclaims/${encodeURIComponent(pvc.metadata.name ?? "")}/status`;

/** upstream MarkNodeExpansionInProgress, as a JSON merge patch held to the claim's resourceVersion. */
export function nodeExpansionInProgressPatch(pvc: ExpandableClaim): object | undefined {
  if (pvc.status.allocatedResourceStatuses?.storage === NODE_RESIZE_IN_PROGRESS) return undefined;
  return { metadata: { resourceVersion: pvc.metadata.resourceVersion }, status: { allocatedResourceStatuses: { storage: NODE_RESIZE_IN_PROGRESS } } };
}

/**
 * upstream MarkNodeExpansionFinishedWithRecovery, as a JSON merge patch held to the claim's
 * resourceVersion: the new capacity, the storage resize status removed, the resize conditions dropped.
 */
export function nodeExpansionFinishedPatch(pvc: ExpandableClaim, newSize: string): object {
  const conditions = (pvc.status.conditions ?? []).filter((c) => !RESIZE_CONDITIONS.has(c.type ?? ""));
  return {
    metadata: { resourceVersion: pvc.metadata.resourceVersion },
    status: { capacity: { storage: newSize }, allocatedResourceStatuses: { storage: null }, conditions },
  };
}
