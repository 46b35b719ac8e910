// A pod's volumes as the runtime sets them up (upstream volumemanager WaitForAttachAndMount before the
// sandbox, and the pod's API objects fetched for it): plain functions over the shared
// KubeRuntimeContext (context.ts); the mounted set and fetched objects live in its caches.
import { kv, log } from "../../log.ts";
import { podRef, reasons } from "../../events/index.ts";
import { podKey, podKeyOf, podUid } from "../pod-like.ts";
import { setUpPodVolume, volumePluginName, type PodVolumeSpec } from "../volumes/index.ts";
import type { PodRef } from "./config.ts";
import { nodeAllocatable, type KubeRuntimeContext } from "./context.ts";
import { mountMemoryVolume, setUpEmptyDir, tearDownPodDir } from "./empty-dir.ts";
import type { KubePod } from "./types.ts";

/** Host path of a pod volume, set up here: an emptyDir under rootDir, or the volume plugin's directory. */
export function defaultVolumeHostPath(ctx: KubeRuntimeContext, pod: KubePod, volumeName: string): string | undefined {
  const v = pod.spec.volumes?.find((x) => x.name === volumeName);
  if (!v) return undefined;
  const allocatableMemory = ctx.opts.nodeAllocatableMemoryBytes?.() ?? ctx.memoryCapacityBytes;
  if (v.emptyDir) return setUpEmptyDir(ctx.rootDir, pod, volumeName, v.emptyDir, allocatableMemory);
  // upstream: the secret/configMap/downwardAPI/projected SetUp ends with SetVolumeOwnership (read-only
  // volumes) whenever the writer wrote (setUpPodVolume's fsGroup); hostPath never.
  return setUpPodVolume(ctx.rootDir, v as PodVolumeSpec, {
    pod,
    nodeAllocatable: nodeAllocatable(ctx),
    objects: ctx.podObjects.get(podUid(pod)),
    mountMemory: (dir) => mountMemoryVolume(dir, pod, allocatableMemory),
    fsGroup: pod.spec.securityContext?.fsGroup,
  });
}

/**
 * How long after its `failures`-th failed set-up in a row a pod's volumes are tried again: upstream's
 * volume manager retries a failed mount after 500 ms, doubling to 2 min 2 s (exponentialbackoff), and
 * its pod worker waits on the mount, so a token or secret that is refused for a moment (a pod the API
 * server's node authorizer has not yet seen bound here) does not hold the pod for the sync's 10 s.
 */
export function volumeRetryDelayMs(failures: number): number {
  return Math.min(500 * 2 ** Math.max(0, failures - 1), 122_000);
}

/**
 * Upstream WaitForAttachAndMount before the sandbox: every volume set up (hostPath type checked,
 * downward API files written); the first failure is returned as upstream's FailedMount message.
 */
export function setUpVolumes(ctx: KubeRuntimeContext, pod: KubePod): string | undefined {
  if (ctx.opts.volumeHostPath) return undefined;
  const uid = podUid(pod);
  for (const v of pod.spec.volumes ?? []) {
    try {
      // Timed here, once per pod sync, as upstream's volume manager mounts (containers only reference).
      ctx.storageOperation({ operationName: "volume_mount", volumePlugin: volumePluginName(v) ?? "unknown" }, () => defaultVolumeHostPath(ctx, pod, v.name));
      ctx.mountedVolumes.add(`${uid}/${v.name}`);
    } catch (e) {
      const message = `MountVolume.SetUp failed for volume "${v.name}" : ${(e as Error).message}`;
      // A volume set up before stays mounted with its last good files (a refresh that fails — a
      // deleted secret, the API server away — does not stop the pod), as upstream's volume manager.
      if (!ctx.mountedVolumes.has(`${uid}/${v.name}`)) return message;
      log.warn(`volume refresh failed; keeping its last contents ${kv({ pod: podKey(pod), event: "FailedMount", message })}`);
      ctx.events.event(podRef(pod), "Warning", reasons.FailedMountVolume, message);
    }
  }
  return undefined;
}

/** Fetches the pod's secrets, configMaps and tokens for this sync (failures are per object, inside). */
export async function resolveApiObjects(ctx: KubeRuntimeContext, pod: KubePod, ref: PodRef): Promise<void> {
  if (!ctx.opts.apiObjects) return;
  try {
    const objs = await ctx.opts.apiObjects.resolve(pod);
    if (objs) ctx.podObjects.set(ref.uid, objs);
  } catch (e) {
    log.warn(`API objects of the pod not fetched ${kv({ pod: podKeyOf(ref.namespace, ref.name), error: (e as Error).message })}`);
  }
}

/** The pod's volumes are no longer counted as set up (the next set-up is a first one again). */
export function forgetMountedVolumes(ctx: KubeRuntimeContext, uid: string): void {
  for (const k of ctx.mountedVolumes) if (k.startsWith(`${uid}/`)) ctx.mountedVolumes.delete(k);
}

/** Unmounts and deletes the pod's directory (or only its volumes), timed as an empty-dir unmount. */
export function tearDownPod(ctx: KubeRuntimeContext, uid: string, sub?: "volumes"): void {
  ctx.storageOperation({ operationName: "volume_unmount", volumePlugin: "kubernetes.io/empty-dir" }, () => tearDownPodDir(ctx.rootDir, uid, sub));
}
