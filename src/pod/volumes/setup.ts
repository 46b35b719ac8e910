// Setting up the volumes bunlet prepares itself (emptyDir lives in kuberuntime/empty-dir.ts):
// hostPath (type checked), persistentVolumeClaim (its hostPath or local PV, resolved beforehand:
// persistent-volume.ts; a CSI PV or inline csi volume is published by csi/csi-mounter.ts and a local
// PV mounted by setUpClaimedLocalVolume before, only their paths given here; a local Block PV is
// mapped as a device link: block-volume.ts, a CSI one by csi/csi-block.ts before),
// downwardAPI, secret, configMap and projected (atomic writer) under
// <rootDir>/pods/<uid>/volumes/<plugin>/<name>, as upstream lays them out. Secret and projected
// volumes live on a tmpfs (upstream wraps them in a memory-medium emptyDir), mounted by the
// caller's `mountMemory` so that unit tests need no mounts.
import { chmodSync, existsSync } from "node:fs";
import { join } from "node:path";
import { makePodDir, podDir } from "../pod-dir.ts";
import { downwardApiPayload, type DownwardApiItem, type DownwardContext } from "./downward-api.ts";
import { checkHostPathType, type HostPathType } from "./host-path.ts";
import { type PayloadFile, writeAtomically } from "./atomic-writer.ts";
import { podDeviceMapPath } from "./csi/csi-block.ts";
import { podMountPath } from "./csi/csi-util.ts";
import type { CSIVolumeSource } from "./csi/volume-spec.ts";
import { mapPodDevice, podVolumeDeviceDir } from "./block-volume.ts";
import { LOCAL_VOLUME_PLUGIN_DIR, localVolumePodPath, setUpLocalVolume } from "./local-volume.ts";
import { MapVolumeError } from "./operation-error.ts";
import { setVolumeOwnership } from "./ownership.ts";
import { volumeClaimSource, type ClaimedVolume } from "./persistent-volume.ts";
import {
  configMapPayload,
  projectedPayload,
  secretPayload,
  type ConfigMapVolumeSource,
  type PodApiObjects,
  type ProjectedSource,
  type SecretVolumeSource,
} from "./api-objects.ts";

export interface PodVolumeSpec {
  name: string;
  hostPath?: { path: string; type?: string };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  /** A generic ephemeral volume: its claim template is the API server's; the kubelet uses the claim. */
  ephemeral?: unknown;
  downwardAPI?: { items?: DownwardApiItem[]; defaultMode?: number };
  projected?: { sources?: ProjectedSource[]; defaultMode?: number };
  secret?: SecretVolumeSource;
  configMap?: ConfigMapVolumeSource;
  csi?: CSIVolumeSource;
}

export interface VolumeSetUpContext extends DownwardContext {
  /** Secrets, configMaps and tokens fetched for this sync (API pods). */
  objects?: PodApiObjects;
  /** Mounts a tmpfs at `dir` once (secret and projected volumes); default: a plain directory. */
  mountMemory?: (dir: string) => void;
  /** The pod's securityContext.fsGroup: written volumes are group-owned by it, group-readable. */
  fsGroup?: number;
  /** The pod's securityContext.fsGroupChangePolicy (a local PV's ownership: OnRootMismatch skips a matching root). */
  fsGroupChangePolicy?: string;
}

/**
 * Writes the payload; when anything changed and the pod has an fsGroup, the whole volume gets it
 * (upstream's writer setPerms hook: SetVolumeOwnership, read-only mask, on every write).
 */
function write(dir: string, payload: Record<string, PayloadFile>, ctx: VolumeSetUpContext): void {
  if (writeAtomically(dir, payload) && ctx.fsGroup !== undefined) setVolumeOwnership(dir, ctx.fsGroup, true);
}

/**
 * The directory of an atomic-writer volume (on tmpfs when `memory`). Upstream wraps these volumes in
 * an emptyDir, whose setupDir makes the directory itself 0777 whatever the umask (its parents stay
 * 0750): a container of any user reaches the files, whose own modes decide the rest. A tmpfs root is 1777.
 */
function volumeDir(rootDir: string, uid: string, plugin: string, name: string, memory: boolean, ctx: VolumeSetUpContext): string {
  const dir = join(podDir(rootDir, uid), "volumes", plugin, name);
  const created = !existsSync(dir);
  makePodDir(rootDir, uid, "volumes", plugin, name);
  if (created) chmodSync(dir, 0o777);
  if (memory) ctx.mountMemory?.(dir);
  return dir;
}

/** The claim of a persistentVolumeClaim volume as resolved for this sync; throws its processing error. */
export function lookupClaimedVolume(ctx: VolumeSetUpContext, volumeName: string, claimName: string): ClaimedVolume {
  const v = ctx.objects?.claims?.get(volumeName);
  const ns = ctx.pod.metadata.namespace ?? "";
  if (v === undefined) throw new Error(`error processing PVC ${ns}/${claimName}: failed to fetch PVC from API server: no kubeClient defined`);
  if (v instanceof Error) throw v;
  return v;
}

/**
 * The link of a claim's Block PV (the CRI Device's host path), mapped beforehand: a local PV's by
 * setUpClaimedLocalVolume (block-volume.ts), a CSI PV's by csi/csi-block.ts; no other plugin bunlet
 * has maps raw block volumes.
 */
function mapClaimedBlockVolume(rootDir: string, uid: string, c: ClaimedVolume): string {
  if (c.source.plugin === "kubernetes.io/csi") return podDeviceMapPath(rootDir, uid, c.pvName);
  if (c.source.plugin !== "kubernetes.io/local-volume")
    throw new MapVolumeError(
      "FindMapperPluginBySpec",
      `failed to find BlockVolumeMapper plugin for ${c.source.plugin}: bunlet maps the raw block volumes of local and CSI PVs only`,
    );
  return join(podVolumeDeviceDir(rootDir, uid, LOCAL_VOLUME_PLUGIN_DIR), c.pvName);
}

/**
 * upstream MountDevice + SetUp of a claim's local PV in Filesystem mode, for the pod (a block device
 * may be formatted first), or MapVolume of a local Block PV (its bind mount and loop device made by
 * child processes): asynchronous, awaited before setUpPodVolume, which then only names its directory
 * or link; nothing for other claims.
 */
export async function setUpClaimedLocalVolume(
  rootDir: string,
  uid: string,
  c: ClaimedVolume,
  readOnly: boolean,
  ctx: Pick<VolumeSetUpContext, "fsGroup" | "fsGroupChangePolicy">,
): Promise<void> {
  if (!("local" in c.source)) return;
  if (c.volumeMode === "Block") {
    await mapPodDevice({ rootDir, podUid: uid, pvName: c.pvName, devicePath: c.source.local.path });
    return;
  }
  await setUpLocalVolume({
    rootDir,
    podUid: uid,
    pvName: c.pvName,
    path: c.source.local.path,
    fsType: c.source.local.fsType,
    readOnly,
    mountOptions: c.mountOptions,
    fsGroup: ctx.fsGroup,
    fsGroupChangePolicy: ctx.fsGroupChangePolicy,
  });
}

/**
 * The host path of a claim's PV: a Block PV's device link, a hostPath PV's path (type checked;
 * upstream's hostPath plugin sets no fsGroup), a local PV's bind mount (made beforehand by
 * setUpClaimedLocalVolume) or a CSI PV's publish directory (csi/csi-mounter.ts, beforehand too).
 * Read-only mounts of both are the runtime's (volumeMounts readonly), the local bind mount is read-only too.
 */
function setUpClaimedVolume(rootDir: string, uid: string, c: ClaimedVolume): string {
  if (c.volumeMode === "Block") return mapClaimedBlockVolume(rootDir, uid, c);
  if ("hostPath" in c.source) {
    checkHostPathType(c.source.hostPath.path, c.source.hostPath.type as HostPathType | undefined);
    return c.source.hostPath.path;
  }
  if (c.source.plugin === "kubernetes.io/csi") return podMountPath(rootDir, uid, c.pvName);
  return localVolumePodPath(rootDir, uid, c.pvName);
}

/**
 * The host path of a hostPath/persistentVolumeClaim/downwardAPI/secret/configMap/projected volume, set up (type check,
 * files written or refreshed); undefined for other kinds. Throws upstream's error when set-up fails;
 * the payload is built before anything is written, so a failure leaves the last good files.
 */
export function setUpPodVolume(rootDir: string, v: PodVolumeSpec, ctx: VolumeSetUpContext): string | undefined {
  const uid = ctx.pod.metadata.uid ?? "";
  if (v.hostPath) {
    checkHostPathType(v.hostPath.path, v.hostPath.type as HostPathType | undefined);
    return v.hostPath.path;
  }
  const claim = volumeClaimSource(ctx.pod.metadata.name, v);
  if (claim) return setUpClaimedVolume(rootDir, uid, lookupClaimedVolume(ctx, v.name, claim.claimName));
  if (v.csi) return podMountPath(rootDir, uid, v.name);
  if (v.downwardAPI) {
    const payload = downwardApiPayload(v.downwardAPI.items ?? [], v.downwardAPI.defaultMode, ctx);
    const dir = volumeDir(rootDir, uid, "kubernetes.io~downward-api", v.name, false, ctx);
    write(dir, payload, ctx);
    return dir;
  }
  if (v.secret) {
    const payload = secretPayload(v.secret, ctx.objects);
    const dir = volumeDir(rootDir, uid, "kubernetes.io~secret", v.name, true, ctx);
    write(dir, payload, ctx);
    return dir;
  }
  if (v.configMap) {
    const payload = configMapPayload(v.configMap, ctx.objects);
    const dir = volumeDir(rootDir, uid, "kubernetes.io~configmap", v.name, false, ctx);
    write(dir, payload, ctx);
    return dir;
  }
  if (v.projected) {
    const payload = projectedPayload(v.projected.sources ?? [], v.projected.defaultMode, ctx.objects, ctx, ctx.fsGroup !== undefined);
    const dir = volumeDir(rootDir, uid, "kubernetes.io~projected", v.name, true, ctx);
    write(dir, payload, ctx);
    return dir;
  }
  return undefined;
}
