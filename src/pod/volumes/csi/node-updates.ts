// The Node's CSI metadata (upstream pkg/volume/csi/nodeinfomanager: updateNodeIDInNode,
// removeNodeIDFromNode, updateTopologyLabels): the csi.volume.kubernetes.io/nodeid annotation (a JSON
// map driver → the driver's node ID) and the topology labels a driver reports. Each update takes the
// Node's labels and annotations and gives them back changed (or says it changed nothing); the change
// goes to the API server as a strategic merge patch of the keys that differ (upstream PatchNodeStatus).

/** Upstream annotationKeyNodeID. */
export const NODE_ID_ANNOTATION = "csi.volume.kubernetes.io/nodeid";

export interface NodeMeta {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Changes meta in place; whether it changed anything. Throws when the Node is not as expected. */
export type NodeUpdate = (meta: NodeMeta) => boolean;

/** Go's json.Marshal of a map[string]string: keys sorted, no spaces. */
export function marshalSortedMap(m: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

function parseNodeIDMap(value: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (e) {
    throw new Error(`failed to parse node's ${JSON.stringify(NODE_ID_ANNOTATION)} annotation value (${JSON.stringify(value)}) err=${(e as Error).message}`);
  }
  if (parsed === null) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== "string"))
    throw new Error(`failed to parse node's ${JSON.stringify(NODE_ID_ANNOTATION)} annotation value (${JSON.stringify(value)}) err=not a map of strings`);
  return { ...(parsed as Record<string, string>) };
}

/** Upstream updateNodeIDInNode: the driver's node ID into the annotation's map. */
export function updateNodeIDInNode(driverName: string, nodeID: string): NodeUpdate {
  return (meta) => {
    const previous = meta.annotations[NODE_ID_ANNOTATION] ?? "";
    const drivers = previous === "" ? {} : parseNodeIDMap(previous);
    if (drivers[driverName] === nodeID) return false;
    drivers[driverName] = nodeID;
    meta.annotations[NODE_ID_ANNOTATION] = marshalSortedMap(drivers);
    return true;
  };
}

/** Upstream removeNodeIDFromNode: the driver out of the map; the annotation goes with the last driver. */
export function removeNodeIDFromNode(driverName: string): NodeUpdate {
  return (meta) => {
    const previous = meta.annotations[NODE_ID_ANNOTATION] ?? "";
    if (previous === "") return false;
    const drivers = parseNodeIDMap(previous);
    if (!(driverName in drivers)) return false;
    delete drivers[driverName];
    if (Object.keys(drivers).length === 0) delete meta.annotations[NODE_ID_ANNOTATION];
    else meta.annotations[NODE_ID_ANNOTATION] = marshalSortedMap(drivers);
    return true;
  };
}

/** Upstream updateTopologyLabels: the driver's topology as Node labels; a different existing value is a collision. */
export function updateTopologyLabels(topology: Record<string, string> | undefined): NodeUpdate {
  return (meta) => {
    const entries = Object.entries(topology ?? {});
    if (entries.length === 0) return false;
    for (const [k, v] of entries) {
      const cur = meta.labels[k];
      if (cur !== undefined && cur !== v)
        throw new Error(
          `detected topology value collision: driver reported ${JSON.stringify(k)}:${JSON.stringify(v)} but existing label is ${JSON.stringify(k)}:${JSON.stringify(cur)}`,
        );
    }
    for (const [k, v] of entries) meta.labels[k] = v;
    return true;
  };
}

/** Runs the updates in order; whether any changed the metadata. */
export function applyNodeUpdates(meta: NodeMeta, updates: NodeUpdate[]): boolean {
  let updated = false;
  for (const u of updates) updated = u(meta) || updated;
  return updated;
}

function mapPatch(before: Record<string, string>, after: Record<string, string>): Record<string, string | null> | undefined {
  const patch: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(after)) if (before[k] !== v) patch[k] = v;
  for (const k of Object.keys(before)) if (!(k in after)) patch[k] = null;
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** The strategic merge patch from one metadata to the other (the keys added, changed, or null for removed). */
export function nodeMetaPatch(
  before: NodeMeta,
  after: NodeMeta,
): { metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> } } {
  const labels = mapPatch(before.labels, after.labels);
  const annotations = mapPatch(before.annotations, after.annotations);
  return { metadata: { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
}
