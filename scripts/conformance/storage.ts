// The storage run (--storage): upstream's [sig-storage] tests whose volumes the node provides by
// itself — local PersistentVolumes of every type the e2e framework makes on the node (directories,
// symlinks, bind mounts, tmpfs, loop block devices, formatted by the test or by the node; made through
// privileged hostexec pods that nsenter the host's mount namespace), inline hostPath and hostPath
// symlink volumes — with no CSI driver, NFS server or cloud. Patterns are ginkgo focus expressions
// (Go RE2) over the full test name, joined with the same skips as the [NodeConformance] run (skips.ts)
// plus STORAGE_SKIPS.
import type { Skip } from "./skips.ts";

/** `[Driver: local]` of the in-tree suites: its volumes and volumeMode tests for every local volume type, subPath for one. */
const LOCAL_DRIVER = "\\[sig-storage\\] In-tree Volumes \\[Driver: local\\]";

export const STORAGE: readonly string[] = [
  // Every local volume type through a pre-bound claim: one pod, two pods at once and one after the other, fsGroup.
  "\\[sig-storage\\] PersistentVolumes-local",
  `${LOCAL_DRIVER} \\[LocalVolumeType: [^\\]]+\\] \\[Testpattern: [^\\]]+\\] (volumes|volumeMode) `,
  // The subPath suite does the same for every local type (the PV is only its mount): one type runs it.
  `${LOCAL_DRIVER} \\[LocalVolumeType: dir\\] \\[Testpattern: [^\\]]+\\] subPath `,
  "\\[sig-storage\\] In-tree Volumes \\[Driver: hostPath\\]",
  "\\[sig-storage\\] In-tree Volumes \\[Driver: hostPathSymlink\\]",
  "\\[sig-storage\\] HostPath ",
  "\\[sig-storage\\] PV Protection",
];

export const STORAGE_SKIPS: readonly Skip[] = [
  { pattern: "\\[Slow\\]", reason: "minutes each (StatefulSets, fsGroup waits, unmountable volumes); the storage run stays near ten minutes" },
];
