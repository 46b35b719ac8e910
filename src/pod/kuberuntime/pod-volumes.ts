// A pod's volumes as the runtime sets them up (upstream volumemanager WaitForAttachAndMount before the
// sandbox, and the pod's API objects fetched for it): plain functions over the shared
// KubeRuntimeContext (context.ts); the mounted set and fetched objects live in its caches.
import { kv, log } from "../../log.ts";
import { podRef, reasons } from "../../events/index.ts";
import { podKey, podKeyOf, podUid } from "../pod-like.ts";
import {
  usedVolumeNames,
  setUpClaimedLocalVolume,
  setUpPodVolume,
  unmapPodDevices,
  unmountUnusedLocalDevices,
  unmountedVolumesMessage,
  MapVolumeError,
  volumeClaimSource,
  volumeOperationStep,
  volumePluginName,
  isReadWriteOncePodOnly,
  READ_WRITE_ONCE_POD_IN_USE,
  type ClaimedVolume,
  type PodApiObjects,
  type PodVolumeSpec,
} from "../volumes/index.ts";
import type { PodRef } from "./config.ts";
import { nodeAllocatable, type KubeRuntimeContext } from "./context.ts";
import { mountMemoryVolume, setUpEmptyDir, tearDownPodDir } from "./empty-dir.ts";
import type { KubePod } from "./types.ts";
import { ephemeralCSIVolumeSpec, persistentCSIVolumeSpec, type CSIVolumeSpec } from "../volumes/csi/index.ts";

/** The pod's fsGroup and its change policy (volume ownership). */
const fsGroupOf = (pod: KubePod) => ({ fsGroup: pod.spec.securityContext?.fsGroup, fsGroupChangePolicy: pod.spec.securityContext?.fsGroupChangePolicy });

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
    ...fsGroupOf(pod),
  });
}

/** Why the pod's volumes were not set up; `processing`: a claim could not be resolved (upstream's populator). */
export interface VolumeSetUpFailure {
  message: string;
  processing: boolean;
}

const claimOf = (ctx: KubeRuntimeContext, pod: KubePod, name: string): ClaimedVolume | Error | undefined => ctx.podObjects.get(podUid(pod))?.claims?.get(name);

/**
 * upstream's populator step before any mount: every used persistentVolumeClaim volume resolved to its
 * PV. Failures give WaitForAttachAndMount's error, with the volumes not mounted yet.
 */
function claimsFailure(ctx: KubeRuntimeContext, pod: KubePod): VolumeSetUpFailure | undefined {
  const uid = podUid(pod);
  const used = usedVolumeNames(pod);
  const failed: { volume: string; error: string }[] = [];
  for (const v of pod.spec.volumes ?? []) {
    const claim = volumeClaimSource(pod.metadata.name, v);
    if (!claim || !used.has(v.name)) continue;
    const c = claimOf(ctx, pod, v.name);
    const ns = pod.metadata.namespace ?? "";
    if (c === undefined)
      failed.push({
        volume: v.name,
        error: `error processing PVC ${ns}/${claim.claimName}: failed to fetch PVC from API server: no kubeClient defined`,
      });
    else if (c instanceof Error) failed.push({ volume: v.name, error: c.message });
  }
  if (failed.length === 0) return undefined;
  const unmounted = [...used].filter((n) => !ctx.mountedVolumes.has(`${uid}/${n}`));
  return { message: `Unable to attach or mount volumes: ${unmountedVolumesMessage(unmounted, failed)}`, processing: true };
}

/** Upstream's message for a failed set-up: a claim's PV is named by the PV (the volume spec's name). */
function setUpFailureMessage(v: { name: string }, claimed: ClaimedVolume | Error | undefined, e: Error): string {
  const name = claimed && !(claimed instanceof Error) ? claimed.pvName : v.name;
  return `${volumeOperationStep(e)} failed for volume "${name}" : ${e.message}`;
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

/** The CSI volume behind a pod volume (an inline csi volume, or a claim's CSI PV), or undefined. */
function csiVolumeSpec(pod: KubePod, v: PodVolumeSpec, claimed: ClaimedVolume | Error | undefined): CSIVolumeSpec | undefined {
  if (v.csi) return ephemeralCSIVolumeSpec(podUid(pod), v.name, v.csi, pod.metadata.namespace ?? "");
  if (!claimed || claimed instanceof Error || claimed.source.plugin !== "kubernetes.io/csi") return undefined;
  const pv = { accessModes: claimed.source.accessModes, mountOptions: claimed.mountOptions };
  return persistentCSIVolumeSpec(claimed.pvName, claimed.source.csi, pv, volumeClaimSource(pod.metadata.name, v)?.readOnly === true);
}

/**
 * A CSI volume staged and published (once: a published volume is not published again at each sync); a
 * Block PV is mapped (its publish path linked from the pod's volumeDevices).
 */
async function setUpCSIVolume(
  ctx: KubeRuntimeContext,
  pod: KubePod,
  spec: CSIVolumeSpec,
  volumeName: string,
  claimed: ClaimedVolume | undefined,
  block: boolean,
): Promise<void> {
  const claim = claimed?.claim ? { claim: claimed.claim, capacity: claimed.capacity } : undefined;
  const req = { pod, spec, fsGroup: pod.spec.securityContext?.fsGroup, claim };
  if (ctx.mountedVolumes.has(`${podUid(pod)}/${volumeName}`)) {
    // A published claim's volume grown while the pod runs (upstream ExpandInUseVolume).
    if (claim) await ctx.opts.csi?.expand(req, block);
    return;
  }
  if (block) {
    if (!ctx.opts.csi) throw new MapVolumeError("SetUpDevice", `driver name ${spec.driver} not found in the list of registered CSI drivers`);
    await ctx.opts.csi.mapBlock(req);
    return;
  }
  if (!ctx.opts.csi) throw new Error(`driver name ${spec.driver} not found in the list of registered CSI drivers`);
  await ctx.opts.csi.setUp(req);
}

/**
 * upstream IsVolumeMountedElsewhere for a ReadWriteOncePod-only PV: a pod may not mount it while another
 * pod on the node has it mounted (the scheduler enforces it across nodes; a pod bound by name is not).
 */
function checkReadWriteOncePod(ctx: KubeRuntimeContext, uid: string, volumeName: string, claimed: ClaimedVolume): void {
  if (ctx.mountedVolumes.has(`${uid}/${volumeName}`) || !isReadWriteOncePodOnly(claimed)) return;
  for (const key of ctx.mountedVolumes) {
    const [other = "", name = ""] = key.split("/", 2);
    if (other === uid) continue;
    const c = ctx.podObjects.get(other)?.claims?.get(name);
    if (c && !(c instanceof Error) && c.pvName === claimed.pvName) throw new Error(READ_WRITE_ONCE_POD_IN_USE);
  }
}

/**
 * Upstream WaitForAttachAndMount before the sandbox: every volume set up (hostPath type checked,
 * downward API files written, CSI volumes published, raw block volumes mapped); the first failure is
 * returned as upstream's FailedMount message.
 */
export async function setUpVolumes(ctx: KubeRuntimeContext, pod: KubePod): Promise<VolumeSetUpFailure | undefined> {
  if (ctx.opts.volumeHostPath) return undefined;
  const uid = podUid(pod);
  const unresolved = claimsFailure(ctx, pod);
  if (unresolved) return unresolved;
  const used = usedVolumeNames(pod);
  for (const v of pod.spec.volumes ?? []) {
    // An unused claim is not read (upstream's populator skips unused volumes).
    const claim = volumeClaimSource(pod.metadata.name, v);
    if (claim && !used.has(v.name)) continue;
    const claimed = claim ? claimOf(ctx, pod, v.name) : undefined;
    const plugin = claimed && !(claimed instanceof Error) ? claimed.source.plugin : volumePluginName(v);
    try {
      if (claimed && !(claimed instanceof Error)) checkReadWriteOncePod(ctx, uid, v.name, claimed);
      const block = claimed !== undefined && !(claimed instanceof Error) && claimed.volumeMode === "Block";
      const csi = csiVolumeSpec(pod, v as PodVolumeSpec, claimed);
      if (csi) await setUpCSIVolume(ctx, pod, csi, v.name, claimed instanceof Error ? undefined : claimed, block);
      if (claim && claimed && !(claimed instanceof Error)) await setUpClaimedLocalVolume(ctx.rootDir, uid, claimed, claim.readOnly, fsGroupOf(pod));
      // Timed here, once per pod sync, as upstream's volume manager mounts (containers only reference).
      const operationName = block ? "map_volume" : "volume_mount";
      ctx.storageOperation({ operationName, volumePlugin: plugin ?? "unknown" }, () => defaultVolumeHostPath(ctx, pod, v.name));
      ctx.mountedVolumes.add(`${uid}/${v.name}`);
    } catch (e) {
      const message = setUpFailureMessage(v, claimed, e as Error);
      // A volume set up before stays mounted with its last good files (a refresh that fails — a
      // deleted secret, the API server away — does not stop the pod), as upstream's volume manager.
      if (!ctx.mountedVolumes.has(`${uid}/${v.name}`)) return { message, processing: false };
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
    if (objs) ctx.podObjects.set(ref.uid, keepMountedClaims(ctx, pod, ctx.podObjects.get(ref.uid), objs));
  } catch (e) {
    log.warn(`API objects of the pod not fetched ${kv({ pod: podKeyOf(ref.namespace, ref.name), error: (e as Error).message })}`);
  }
}

/**
 * A claim's volume mounted before keeps the PV it was mounted from when the claim cannot be read
 * again (the API server away, the node authorizer not answering): the running pod keeps its data.
 */
function keepMountedClaims(ctx: KubeRuntimeContext, pod: KubePod, prev: PodApiObjects | undefined, next: PodApiObjects): PodApiObjects {
  if (!next.claims || !prev?.claims) return next;
  const claims = new Map(next.claims);
  for (const [name, c] of next.claims) {
    const before = prev.claims.get(name);
    if (!(c instanceof Error) || !before || before instanceof Error || !ctx.mountedVolumes.has(`${podUid(pod)}/${name}`)) continue;
    log.warn(`claim not read again; keeping its mounted volume ${kv({ pod: podKey(pod), volume: name, pv: before.pvName, error: c.message })}`);
    claims.set(name, before);
  }
  return { ...next, claims };
}

/** The pod's volumes are no longer counted as set up (the next set-up is a first one again). */
export function forgetMountedVolumes(ctx: KubeRuntimeContext, uid: string): void {
  for (const k of ctx.mountedVolumes) if (k.startsWith(`${uid}/`)) ctx.mountedVolumes.delete(k);
}

/**
 * Unmounts and deletes the pod's directory (or only its volumes and raw block volume links), timed as an
 * empty-dir unmount; its CSI volumes are unpublished (and unstaged) by their drivers first, and the
 * local block devices no pod mounts any more are unmounted after (upstream UnmountDevice).
 */
export async function tearDownPod(ctx: KubeRuntimeContext, uid: string, sub?: "volumes"): Promise<void> {
  if (uid) await ctx.opts.csi?.tearDownPod(uid);
  if (uid && sub === "volumes") unmapPodDevices(ctx.rootDir, uid);
  ctx.storageOperation({ operationName: "volume_unmount", volumePlugin: "kubernetes.io/empty-dir" }, () => tearDownPodDir(ctx.rootDir, uid, sub));
  await unmountUnusedLocalDevices(ctx.rootDir);
}
