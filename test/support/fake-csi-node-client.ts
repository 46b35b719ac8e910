// A CSI node client for unit tests of the CSI volume manager (src/pod/volumes/csi/csi-mounter.ts): no
// socket, each call recorded with its request; the publish target is made as the test says (a
// directory for a mounted volume, a link to a block device for a raw block one) and the unpublish
// removes what the test's `unpublish` removes.
import { mkdirSync } from "node:fs";
import { createCSIVolumeManager } from "../../src/pod/volumes/csi/csi-mounter.ts";
import type { CSINodeClient } from "../../src/pod/volumes/csi/node-client.ts";

export interface RecordedCall {
  method: "stage" | "unstage" | "publish" | "unpublish";
  req: Record<string, unknown>;
}

/** What the driver does at a publish target (default: makes the directory, leaves it at unpublish). */
export interface FakeTargets {
  publish(targetPath: string): void;
  unpublish(targetPath: string): void;
}

const directoryTargets: FakeTargets = { publish: (p) => mkdirSync(p, { recursive: true }), unpublish: () => {} };

/** A driver of the given node capabilities that records its calls. */
export function recordingNodeClient(caps: string[], targets: FakeTargets = directoryTargets) {
  const calls: RecordedCall[] = [];
  const client: CSINodeClient = {
    nodeGetCapabilities: async () => caps,
    nodeStageVolume: async (_e, req) => void calls.push({ method: "stage", req: { ...req } }),
    nodeUnstageVolume: async (_e, volumeId, stagingTargetPath) => void calls.push({ method: "unstage", req: { volumeId, stagingTargetPath } }),
    nodePublishVolume: async (_e, req) => {
      targets.publish(req.targetPath);
      calls.push({ method: "publish", req: { ...req } });
    },
    nodeUnpublishVolume: async (_e, volumeId, targetPath) => {
      targets.unpublish(targetPath);
      calls.push({ method: "unpublish", req: { volumeId, targetPath } });
    },
  };
  return { calls, client };
}

export interface RecordingManagerOptions {
  rootDir: string;
  caps: string[];
  /** Whether driver `drv` is registered (at /run/drv.sock). */
  registered?: boolean;
  /** The API objects by path, as they are when asked. */
  objects: () => Record<string, unknown>;
  targets?: FakeTargets;
  /** As CSIVolumeManagerDeps: set-ups of attachable volumes wait until reported in use; told of changes. */
  controllerAttachDetach?: boolean;
  onVolumesInUseChange?: () => void;
  onVolumesReportedInUse?: (podUids: ReadonlySet<string>) => void;
}

/** A CSI volume manager on node n1 over a recording driver `drv`. */
export function recordingCSIVolumeManager(o: RecordingManagerOptions) {
  const f = recordingNodeClient(o.caps, o.targets);
  const m = createCSIVolumeManager({
    rootDir: o.rootDir,
    nodeName: () => "n1",
    driverEndpoint: (d) => (o.registered !== false && d === "drv" ? "/run/drv.sock" : undefined),
    getObject: async (path) => o.objects()[path],
    client: f.client,
    controllerAttachDetach: o.controllerAttachDetach,
    onVolumesInUseChange: o.onVolumesInUseChange,
    onVolumesReportedInUse: o.onVolumesReportedInUse,
  });
  return { ...f, m };
}
