// The CSI hostpath run (--csi-hostpath): upstream's `[Driver: csi-hostpath]` storage suites, whose driver
// the e2e framework deploys per test as a StatefulSet on the node — csi-driver-host-path with its node
// sidecars (node-driver-registrar, livenessprobe) and controller sidecars (external-provisioner,
// -attacher, -resizer, -snapshotter) in one pod, images from scripts/upstream/csi-images.sh. The sidecars
// reach the API server through the `kubernetes` Service (service-route.ts). Patterns as in storage.ts.
import type { Skip } from "./skips.ts";

/** The host directory of the driver's volumes (csi-hostpath-plugin.yaml's csi-data-dir), not under the node's root directory. */
export const CSI_HOSTPATH_DATA = "/var/lib/csi-hostpath-data";

export const CSI_HOSTPATH: readonly string[] = ["\\[sig-storage\\] CSI Volumes \\[Driver: csi-hostpath\\]"];

export const CSI_HOSTPATH_SKIPS: readonly Skip[] = [
  { pattern: "\\[Slow\\]", reason: "minutes each (stress, StatefulSets, many volumes); the run stays near ten minutes" },
  // Every snapshot test also carries [Feature:VolumeSnapshotDataSource] (skipped by SKIPS): listed for the reason.
  { pattern: "[Ss]napshot", reason: "needs the VolumeSnapshot CRDs and the snapshot controller, not part of the test bed" },
];
