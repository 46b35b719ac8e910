// The kubelet's root directory on a shared mount (upstream pkg/volume/util/hostutil MakeRShared, called
// by setupDataDirs at start). A CSI node plugin mounts volumes under <rootDir>/pods and <rootDir>/plugins
// from inside its container with Bidirectional propagation; the runtime refuses that unless the root
// directory's mount is shared ("… is mounted on "/" but it is not a shared mount"). On a systemd host "/"
// is shared already and nothing is done; otherwise the directory is bind-mounted on itself and the new
// mount made rshared, as `mount --bind <root> <root> && mount --make-rshared <root>`.
import { readFileSync, realpathSync } from "node:fs";
import * as libc from "../../../ffi/libc.ts";
import { log } from "../../log.ts";
import { MOUNTINFO, mountHolding } from "./mount-points.ts";

/** Whether `path` resides on a mount in a shared peer group (upstream isShared). */
export function isShared(path: string, mountinfo: string): boolean {
  const m = mountHolding(path, mountinfo);
  if (!m) throw new Error(`cannot find mount point for "${path}"`);
  return m.optionalFields.some((f) => f.startsWith("shared:"));
}

export interface MakeRSharedDeps {
  readMountInfo(): string;
  mount(source: string, target: string, flags: number): void;
}

const hostDeps: MakeRSharedDeps = { readMountInfo: () => readFileSync(MOUNTINFO, "utf8"), mount: libc.mount };

/**
 * Makes `path` (an existing directory) reside on a shared mount; upstream's error texts. mountinfo names
 * canonical paths, so a root directory reached through a symlink is resolved first.
 */
export function makeRShared(path: string, deps: MakeRSharedDeps = hostDeps): void {
  const real = realpathSync(path);
  if (isShared(real, deps.readMountInfo())) return;
  log.info(`Bind-mounting "${real}" with shared mount propagation`);
  try {
    // Recursive, unlike upstream: volumes an earlier agent left mounted below stay visible through it.
    deps.mount(real, real, libc.MS_BIND | libc.MS_REC);
  } catch (e) {
    throw new Error(`failed to bind-mount ${real}: ${(e as Error).message}`);
  }
  try {
    deps.mount(real, real, libc.MS_SHARED | libc.MS_REC);
  } catch (e) {
    throw new Error(`failed to make ${real} rshared: ${(e as Error).message}`);
  }
}
