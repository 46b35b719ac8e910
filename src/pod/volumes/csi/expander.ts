// The csi plugin's node expansion (upstream pkg/volume/csi expander.go NodeExpand, and the operation
// executor's NodeExpander around it): a claim's published volume whose expansion is due
// (resize-util.ts) is grown by its driver's NodeExpandVolume — at the pod's publish path (a raw block
// volume's: its per-pod publish path, as upstream's DevicePath), with the staging path when the driver
// stages — between two patches of the claim's status: NodeResizeInProgress
// before the call, the new capacity after it. A driver without EXPAND_VOLUME cannot grow it on the node.
import { kv, log } from "../../../log.ts";
import { parseQuantity, quantityValue } from "../../../config/quantity.ts";
import { persistentVolumeClaimSchema } from "../persistent-volume.ts";
import { claimStatusPath, nodeExpansionDue, nodeExpansionFinishedPatch, nodeExpansionInProgressPatch, type ExpandableClaim } from "../resize-util.ts";
import { blockPublishPath, blockStagingPath } from "./csi-block.ts";
import { deviceMountPath, podMountPath } from "./csi-util.ts";
import type { CSINodeClient } from "./node-client.ts";
import { blockVolumeCapability, mountVolumeCapability, type CSIVolumeSpec } from "./volume-spec.ts";

export interface NodeExpanderDeps {
  rootDir: string;
  client: CSINodeClient;
  /** A JSON merge patch of an API object's path; the object the API server answers. */
  patch: (path: string, body: object) => Promise<unknown>;
}

/** A published claim's volume, with the claim and its PV's capacity as this sync read them. */
export interface NodeExpansionRequest {
  podUid: string;
  spec: CSIVolumeSpec;
  /** The driver's endpoint, asked for only when an expansion is due (throws when the driver is not registered). */
  endpoint: () => string;
  claim: ExpandableClaim;
  capacity: string | undefined;
  /** A raw block volume (volumeDevices): the `block` capability at its block publish and staging paths. */
  block?: boolean;
}

/** upstream's NodeResizeOptions paths: the filesystem's publish and staging paths, or a raw block volume's. */
function expansionPaths(rootDir: string, req: NodeExpansionRequest, staged: boolean): { volumePath: string; stagingTargetPath: string } {
  const { spec, podUid } = req;
  if (req.block) {
    return { volumePath: blockPublishPath(rootDir, spec.specVolID, podUid), stagingTargetPath: staged ? blockStagingPath(rootDir, spec.specVolID) : "" };
  }
  return {
    volumePath: podMountPath(rootDir, podUid, spec.specVolID),
    stagingTargetPath: staged ? deviceMountPath(rootDir, spec.driver, spec.volumeHandle) : "",
  };
}

/** upstream NodeExpand's refusal of a driver without EXPAND_VOLUME. */
export const nodeExpandNotSupported = (driver: string) => `NodeExpand is not supported by the CSI driver ${driver}`;

/** Grows the volume when its expansion is due; true when it did. Throws the driver's or the API server's error. */
export async function expandIfDue(d: NodeExpanderDeps, req: NodeExpansionRequest): Promise<boolean> {
  const { spec, claim } = req;
  const due = nodeExpansionDue(claim, req.capacity, spec.readOnly);
  if (!due) return false;
  const endpoint = req.endpoint();
  const caps = await d.client.nodeGetCapabilities(endpoint);
  if (!caps.includes("EXPAND_VOLUME") || !d.client.nodeExpandVolume) throw new Error(nodeExpandNotSupported(spec.driver));
  let current = claim;
  const inProgress = nodeExpansionInProgressPatch(claim);
  if (inProgress) {
    const patched = await d.patch(claimStatusPath(claim), inProgress).catch((e: Error) => {
      throw new Error(`MountVolume.NodeExpandVolume failed to mark node expansion in progress: ${e.message}`);
    });
    current = persistentVolumeClaimSchema.parse(patched);
  }
  const multiWriter = caps.includes("SINGLE_NODE_MULTI_WRITER");
  await d.client
    .nodeExpandVolume(endpoint, {
      volumeId: spec.volumeHandle,
      ...expansionPaths(d.rootDir, req, caps.includes("STAGE_UNSTAGE_VOLUME")),
      requiredBytes: quantityValue(parseQuantity(due.newSize)),
      volumeCapability: req.block ? blockVolumeCapability(spec, multiWriter) : mountVolumeCapability(spec, multiWriter),
    })
    .catch((e: Error) => {
      throw new Error(`Expander.NodeExpand failed to expand the volume : ${e.message}`);
    });
  log.info(`MountVolume.NodeExpandVolume succeeded ${kv({ volume: spec.specVolID, pod: req.podUid, oldSize: due.oldSize, newSize: due.newSize })}`);
  await d.patch(claimStatusPath(current), nodeExpansionFinishedPatch(current, due.newSize)).catch((e: Error) => {
    throw new Error(`mountVolume.NodeExpandVolume update pvc status failed: ${e.message}`);
  });
  return true;
}
