// A pod's directory on the host (upstream kubelet_getters.go getPodDir, kubelet.go setupDataDirs and
// makePodDataDirs): <rootDir>/pods/<uid>, and rootDir, pods/, the pod's directory and its volumes/
// made 0750 — nobody but root walks into another pod's volumes. The UID becomes a path component, so
// it must be one: API server UIDs are UUIDs and static pod UIDs md5 hex, and a manifest's own
// metadata.uid is refused unless it is a plain name (no "/", no "..", no control bytes).
import { mkdirSync } from "node:fs";
import { join } from "node:path";

/** Mode of the kubelet's own data directories (upstream MkdirAll(…, 0750)). */
export const DATA_DIR_MODE = 0o750;

const UID_FORMAT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const MaxPodUidLength = 128;

/** Why `uid` cannot name a pod's directory; undefined when it can. */
export function podUidError(uid: string): string | undefined {
  if (uid.length > MaxPodUidLength) return `must be no more than ${MaxPodUidLength} characters`;
  if (!UID_FORMAT.test(uid) || uid.includes(".."))
    return "must consist of alphanumeric characters, '-', '_' or '.', start with an alphanumeric character and not contain '..'";
  return undefined;
}

export class InvalidPodUidError extends Error {
  constructor(uid: string, reason: string) {
    super(`pod UID ${JSON.stringify(uid.slice(0, 80))} cannot name a pod directory: ${reason}`);
    this.name = "InvalidPodUidError";
  }
}

/** <rootDir>/pods/<uid>; throws InvalidPodUidError for a UID that is not one plain path component. */
export function podDir(rootDir: string, uid: string): string {
  const err = podUidError(uid);
  if (err) throw new InvalidPodUidError(uid, err);
  return join(rootDir, "pods", uid);
}

/** Creates <rootDir>/pods/<uid>/<sub…> with every missing level 0750 (makePodDataDirs); returns its path. */
export function makePodDir(rootDir: string, uid: string, ...sub: string[]): string {
  const dir = join(podDir(rootDir, uid), ...sub);
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  return dir;
}
