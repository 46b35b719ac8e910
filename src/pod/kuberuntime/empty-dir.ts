// emptyDir volumes on the host (upstream pkg/volume/emptydir): a directory per volume under
// <rootDir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>; with `medium: Memory` a tmpfs is
// mounted there, sized as upstream calculateEmptyDirMemorySize (KEP-1967): the smallest of node
// allocatable memory, the pod's memory limit and the volume's sizeLimit. Volumes stay mounted while
// the pod exists (also across a bunlet restart); removing the pod unmounts them and deletes the
// pod's directory.
import { chmodSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { mount, UMOUNT_NOFOLLOW, umount2 } from "../../../ffi/fs.ts";
import { parseQuantity, quantityValue } from "../../config/quantity.ts";
import { kv, log } from "../../log.ts";
import { makePodDir, podDir } from "../pod-dir.ts";
import { podKey, podUid } from "../pod-like.ts";
import { mountPointsUnder } from "../volumes/mount-points.ts";
import { setVolumeOwnership } from "../volumes/ownership.ts";
import type { KubeContainer, KubePod } from "./types.ts";

export { mountPointsUnder };

export const EMPTY_DIR_PLUGIN_DIR = "kubernetes.io~empty-dir";

export { podDir };

export function emptyDirPath(rootDir: string, uid: string, volumeName: string): string {
  return join(podDir(rootDir, uid), "volumes", EMPTY_DIR_PLUGIN_DIR, volumeName);
}

function memoryLimitBytes(c: KubeContainer): number | undefined {
  const v = c.resources?.limits?.memory;
  return v === undefined ? undefined : quantityValue(parseQuantity(String(v)));
}

/**
 * Upstream resourcehelper.PodLimits for memory: the sum of the containers' limits, raised to the
 * largest init container limit, plus spec.overhead's memory when non-zero; undefined when no container
 * sets one.
 */
export function podMemoryLimitBytes(pod: KubePod): number | undefined {
  let sum: number | undefined;
  for (const c of pod.spec.containers) {
    const l = memoryLimitBytes(c);
    if (l !== undefined) sum = (sum ?? 0) + l;
  }
  for (const c of pod.spec.initContainers ?? []) {
    const l = memoryLimitBytes(c);
    if (l !== undefined && (sum === undefined || l > sum)) sum = l;
  }
  const overhead = pod.spec.overhead?.memory;
  if (sum && overhead !== undefined) sum += quantityValue(parseQuantity(String(overhead)));
  return sum;
}

/** tmpfs size in bytes; 0 means no size option (the kernel's default, half of RAM). */
export function emptyDirMemorySizeBytes(pod: KubePod, sizeLimit: string | number | undefined, nodeAllocatableMemoryBytes: number): number {
  let size = nodeAllocatableMemoryBytes;
  const podLimit = podMemoryLimitBytes(pod);
  if (podLimit !== undefined && podLimit > 0 && (size <= 0 || podLimit < size)) size = podLimit;
  if (sizeLimit !== undefined) {
    const limit = quantityValue(parseQuantity(String(sizeLimit)));
    if (limit > 0 && (size <= 0 || limit < size)) size = limit;
  }
  return Math.max(0, size);
}

/** A tmpfs of `size` bytes (unbounded at 0) mounted at `dir`, by mount(2). */
function mountTmpfs(dir: string, size: number): void {
  mount("tmpfs", dir, "tmpfs", 0, size > 0 ? `size=${size}` : null);
}

/** Creates the volume's directory and, for medium Memory, mounts the tmpfs (once). Returns the path. */
export function setUpEmptyDir(
  rootDir: string,
  pod: KubePod,
  volumeName: string,
  emptyDir: { medium?: string; sizeLimit?: string | number },
  nodeAllocatableMemoryBytes: number,
): string {
  const uid = podUid(pod);
  const dir = emptyDirPath(rootDir, uid, volumeName);
  const fsGroup = pod.spec.securityContext?.fsGroup;
  const created = !existsSync(dir);
  makePodDir(rootDir, uid, "volumes", EMPTY_DIR_PLUGIN_DIR);
  mkdirSync(dir, { recursive: true });
  if (emptyDir.medium !== "Memory") {
    if (created) {
      // upstream setupDir: 0777 whatever the umask, so a non-root container can write without fsGroup.
      chmodSync(dir, 0o777);
      // Upstream SetVolumeOwnership at set-up, once: later syncs leave what containers did to it.
      if (fsGroup !== undefined) setVolumeOwnership(dir, fsGroup);
    }
    return dir;
  }
  // Set up once per pod: a container restart must keep the volume's contents.
  if (mountPointsUnder(dir).includes(dir)) return dir;
  const size = emptyDirMemorySizeBytes(pod, emptyDir.sizeLimit, nodeAllocatableMemoryBytes);
  mountTmpfs(dir, size);
  if (fsGroup !== undefined) setVolumeOwnership(dir, fsGroup);
  log.info(`mounted emptyDir tmpfs ${kv({ pod: podKey(pod), volume: volumeName, path: dir, sizeBytes: size, fsGroup })}`);
  return dir;
}

/**
 * A tmpfs at `dir` (secret and projected volumes: upstream wraps them in a memory-medium emptyDir
 * without sizeLimit), mounted once; a mount already there is kept (files survive a bunlet restart).
 */
export function mountMemoryVolume(dir: string, pod: KubePod, nodeAllocatableMemoryBytes: number): void {
  if (mountPointsUnder(dir).includes(dir)) return;
  const size = emptyDirMemorySizeBytes(pod, undefined, nodeAllocatableMemoryBytes);
  mountTmpfs(dir, size);
  log.info(`mounted volume tmpfs ${kv({ pod: podKey(pod), path: dir, sizeBytes: size })}`);
}

/**
 * Unmounts every mount below the pod's directory, then deletes it. The directory is deleted only when
 * nothing is mounted under it any more, so a failed unmount never deletes through into another
 * filesystem; the error names the mount left behind.
 */
export function tearDownPodDir(rootDir: string, uid: string, sub?: "volumes"): void {
  const dir = sub ? join(podDir(rootDir, uid), sub) : podDir(rootDir, uid);
  if (!existsSync(dir)) return;
  const errors: string[] = [];
  for (const mp of mountPointsUnder(dir)) {
    try {
      umount2(mp, UMOUNT_NOFOLLOW);
      log.info(`unmounted pod volume ${kv({ uid, path: mp })}`);
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  if (errors.length > 0 || mountPointsUnder(dir).length > 0) throw new Error(`pod ${uid}: volumes still mounted under ${dir}: ${errors.join("; ")}`);
  rmSync(dir, { recursive: true, force: true });
}
