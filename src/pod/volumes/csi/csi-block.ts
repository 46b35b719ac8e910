// A raw block CSI volume on the node (upstream pkg/volume/csi csi_block.go csiBlockMapper SetUpDevice,
// MapPodDevice, UnmapPodDevice, TearDownDevice; pkg/volume/util MapBlockVolume's pod link): a Block PV
// of a CSI driver is staged once per node (NodeStageVolume with the `block` access type, when the driver
// has STAGE_UNSTAGE_VOLUME) at plugins/kubernetes.io/csi/volumeDevices/staging/<spec name>, published
// per pod (NodePublishVolume) at the file plugins/kubernetes.io/csi/volumeDevices/publish/<spec name>/<pod
// UID>, where the driver makes the device appear, and linked from the pod's
// pods/<uid>/volumeDevices/kubernetes.io~csi/<spec name>: the CRI Device's host path, which the runtime
// resolves at each container start. As upstream's MapBlockVolume (../block-volume.ts), the publish path
// is bind-mounted on the global map file volumeDevices/<spec name>/dev/<pod UID> with a loop device
// attached to it, the "fd lock". vol_data.json in volumeDevices/<spec name>/data names the driver and
// the volume handle, so teardown works from the disk alone. Teardown: the fd lock released, the link
// removed and the global map file unmounted (UnmapBlockVolume), NodeUnpublishVolume, then
// NodeUnstageVolume once no pod's publish path nor global map file is left for the volume.
import { existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { kv, log } from "../../../log.ts";
import { checkNoDeviceRefs, mapBlockVolume, podVolumeDeviceDir, unmapBlockVolume } from "../block-volume.ts";
import { mountPointsUnder } from "../mount-points.ts";
import { MapVolumeError } from "../operation-error.ts";
import { nodeBlockVolumePathHandler, type BlockVolumePathHandler } from "../volume-path-handler.ts";
import { getCredentialsFromSecret, type GetObject } from "./credentials.ts";
import { CSI_PLUGIN_NAME, CSI_POD_PLUGIN_DIR, escapeQualifiedName, loadVolumeData, saveVolumeData, type VolumeData } from "./csi-util.ts";
import type { CSINodeClient, NodeStageVolumeRequest, VolumeUsage } from "./node-client.ts";
import { blockVolumeCapability, publishVolumeContext, type CSIVolumeSpec, type PodIdentity, type SecretRef } from "./volume-spec.ts";

/** upstream GetVolumeDevicePluginDir(CSIPluginName): the csi plugin's directory of block volumes. */
export const volumeDevicePluginDir = (rootDir: string) => join(rootDir, "plugins", CSI_PLUGIN_NAME, "volumeDevices");

/** upstream csiBlockMapper.GetStagingPath: NodeStageVolume's staging target path of a Block PV. */
export const blockStagingPath = (rootDir: string, specName: string) => join(volumeDevicePluginDir(rootDir), "staging", specName);

/** upstream csiBlockMapper.getPublishDir: the directory of the volume's publish paths, one per pod. */
export const blockPublishDir = (rootDir: string, specName: string) => join(volumeDevicePluginDir(rootDir), "publish", specName);

/** upstream csiBlockMapper.getPublishPath: NodePublishVolume's target path for a pod (a file the driver makes the device). */
export const blockPublishPath = (rootDir: string, specName: string, podUid: string) => join(blockPublishDir(rootDir, specName), podUid);

/** upstream getVolumePluginDir: the volume's own directory (its data, removed at TearDownDevice). */
export const blockVolumePluginDir = (rootDir: string, specName: string) => join(volumeDevicePluginDir(rootDir), escapeQualifiedName(specName));

/** upstream csiBlockMapper.GetGlobalMapPath (getVolumeDevicePluginDir): where each pod's global map file is. */
export const blockGlobalMapPath = (rootDir: string, specName: string) => join(blockVolumePluginDir(rootDir, specName), "dev");

/** upstream getVolumeDeviceDataDir: where the volume's vol_data.json lives. */
export const blockVolumeDataDir = (rootDir: string, specName: string) => join(blockVolumePluginDir(rootDir, specName), "data");

/** upstream csiBlockMapper.GetPodDeviceMapPath: the pod's link to the publish path. */
export const podDeviceMapPath = (rootDir: string, podUid: string, specName: string) => join(podVolumeDeviceDir(rootDir, podUid, CSI_POD_PLUGIN_DIR), specName);

export interface CSIBlockDeps {
  rootDir: string;
  client: CSINodeClient;
  getObject?: GetObject;
  /** The bind mounts, links and loop devices of the map (the node's when absent). */
  blkUtil?: BlockVolumePathHandler;
}

/** What the volume manager resolved before the map: the driver's endpoint, capabilities and policy, the attachment's context. */
export interface CSIBlockMap {
  pod: PodIdentity;
  spec: CSIVolumeSpec;
  endpoint: string;
  capabilities: string[];
  podInfoOnMount: boolean;
  publishContext: Record<string, string>;
  nodeName: string;
  attachmentID: string;
}

const isBlockDevice = (path: string) => {
  try {
    return statSync(path).isBlockDevice();
  } catch {
    return false;
  }
};

/** The pods (UIDs) with a publish path of the volume on this node. */
const publishedPods = (rootDir: string, specName: string) => {
  const dir = blockPublishDir(rootDir, specName);
  return existsSync(dir) ? readdirSync(dir) : [];
};

/**
 * Whether the pod's block volume is mapped: its link names the publish path, which the driver made a
 * block device, and its global map file holds the device.
 */
export function isBlockVolumeMapped(rootDir: string, podUid: string, specName: string): boolean {
  const publish = blockPublishPath(rootDir, specName, podUid);
  const link = podDeviceMapPath(rootDir, podUid, specName);
  const mapped = existsSync(link) && lstatSync(link).isSymbolicLink() && readlinkSync(link) === publish && isBlockDevice(publish);
  return mapped && isBlockDevice(join(blockGlobalMapPath(rootDir, specName), podUid));
}

/** upstream getCredentialsFromSecret for a block call, its failure in csi_block.go's words. */
async function blockSecrets(d: CSIBlockDeps, ref: SecretRef | undefined, what: string): Promise<Record<string, string> | undefined> {
  if (!ref) return undefined;
  return getCredentialsFromSecret(d.getObject, ref).catch((e: Error) => {
    throw new Error(`kubernetes.io/csi: ${what} ${ref.namespace}/${ref.name}: ${e.message}`);
  });
}

/** The fields NodeStageVolume and NodePublishVolume share (the publish's volume context is its own). */
function stageRequest(m: CSIBlockMap, staging: string, capability: object, secrets: Record<string, string> | undefined): NodeStageVolumeRequest {
  const req = { volumeId: m.spec.volumeHandle, publishContext: m.publishContext, stagingTargetPath: staging, volumeCapability: capability };
  return { ...req, volumeContext: m.spec.volumeAttributes, ...(secrets ? { secrets } : {}) };
}

/** Removes a path the kubelet made when nothing is mounted at or below it. */
function removeUnmounted(path: string): void {
  if (existsSync(path) && mountPointsUnder(path).length === 0) rmSync(path, { recursive: true, force: true });
}

/**
 * upstream SetUpDevice (stageVolumeForBlock): NodeStageVolume at the staging path, once per node — not when
 * the driver lacks STAGE_UNSTAGE_VOLUME, nor when another pod's publish path shows it staged. Returns the
 * staging path, which NodePublishVolume names in any case, as upstream does.
 */
async function setUpDevice(d: CSIBlockDeps, m: CSIBlockMap, capability: object): Promise<string> {
  const { spec } = m;
  const staging = blockStagingPath(d.rootDir, spec.specVolID);
  const podUid = m.pod.metadata.uid ?? "";
  if (!m.capabilities.includes("STAGE_UNSTAGE_VOLUME")) return staging;
  if (publishedPods(d.rootDir, spec.specVolID).some((uid) => uid !== podUid)) return staging;
  const secrets = await blockSecrets(d, spec.nodeStageSecretRef, "failed to get NodeStageSecretRef");
  mkdirSync(staging, { recursive: true, mode: 0o750 });
  try {
    await d.client.nodeStageVolume(m.endpoint, stageRequest(m, staging, capability, secrets));
  } catch (e) {
    // upstream cleanupOrphanDeviceFiles: a stage that failed leaves no staging path.
    removeUnmounted(staging);
    throw e;
  }
  log.info(`CSI block volume staged ${kv({ driver: spec.driver, volumeHandle: spec.volumeHandle, stagingTargetPath: staging })}`);
  return staging;
}

/** upstream MapPodDevice (publishVolumeForBlock): NodePublishVolume at the pod's publish path. */
async function publishVolumeForBlock(d: CSIBlockDeps, m: CSIBlockMap, staging: string, capability: object): Promise<string> {
  const { spec } = m;
  const publish = blockPublishPath(d.rootDir, spec.specVolID, m.pod.metadata.uid ?? "");
  const secrets = await blockSecrets(d, spec.nodePublishSecretRef, "blockMapper.publishVolumeForBlock failed to get NodePublishSecretRef");
  mkdirSync(dirname(publish), { recursive: true, mode: 0o750 });
  try {
    await d.client.nodePublishVolume(m.endpoint, {
      ...stageRequest(m, staging, capability, secrets),
      targetPath: publish,
      readonly: spec.readOnly,
      volumeContext: publishVolumeContext(spec, m.pod, m.podInfoOnMount),
    });
  } catch (e) {
    removeUnmounted(publish);
    throw e;
  }
  return publish;
}

/**
 * upstream GenerateMapVolumeFunc for a CSI Block PV: vol_data.json, SetUpDevice, MapPodDevice, then
 * MapBlockVolume of the publish path (the pod's link, the global map file, the fd lock); returns the link
 * (the CRI Device's host path). Failures are MapVolumeErrors of their step.
 */
export async function mapCSIBlockVolume(d: CSIBlockDeps, m: CSIBlockMap): Promise<string> {
  const { spec } = m;
  const podUid = m.pod.metadata.uid ?? "";
  const capability = blockVolumeCapability(spec, m.capabilities.includes("SINGLE_NODE_MULTI_WRITER"));
  const data: VolumeData = {
    specVolumeID: spec.specVolID,
    volumeHandle: spec.volumeHandle,
    driverName: spec.driver,
    nodeName: m.nodeName,
    attachmentID: m.attachmentID,
  };
  saveVolumeData(blockVolumeDataDir(d.rootDir, spec.specVolID), data);
  const staging = await setUpDevice(d, m, capability).catch((e: Error) => {
    throw new MapVolumeError("SetUpDevice", e.message);
  });
  const publish = await publishVolumeForBlock(d, m, staging, capability).catch((e: Error) => {
    throw new MapVolumeError("MapPodDevice", e.message);
  });
  if (!isBlockDevice(publish))
    throw new MapVolumeError("MapPodDevice", `kubernetes.io/csi: blockMapper.MapPodDevice: the driver's publish path ${publish} is not a block device`);
  const globalMapPath = blockGlobalMapPath(d.rootDir, spec.specVolID);
  const podVolumeMapPath = podVolumeDeviceDir(d.rootDir, podUid, CSI_POD_PLUGIN_DIR);
  await mapBlockVolume(d.blkUtil ?? nodeBlockVolumePathHandler(), {
    devicePath: publish,
    globalMapPath,
    podVolumeMapPath,
    volumeMapName: spec.specVolID,
    podUid,
  });
  const link = podDeviceMapPath(d.rootDir, podUid, spec.specVolID);
  log.info(`CSI block volume mapped ${kv({ driver: spec.driver, volumeHandle: spec.volumeHandle, pod: podUid, publishPath: publish, globalMapPath, link })}`);
  return link;
}

/** The spec names of the pod's CSI block volumes: its links, and the publish paths and global map files it has left. */
export function podBlockVolumes(rootDir: string, podUid: string): string[] {
  const links = podVolumeDeviceDir(rootDir, podUid, CSI_POD_PLUGIN_DIR);
  const publishRoot = join(volumeDevicePluginDir(rootDir), "publish");
  const linked = existsSync(links) ? readdirSync(links) : [];
  const published = existsSync(publishRoot) ? readdirSync(publishRoot).filter((s) => existsSync(blockPublishPath(rootDir, s, podUid))) : [];
  const present = (p: string) => lstatSync(p, { throwIfNoEntry: false }) !== undefined;
  const specs = existsSync(volumeDevicePluginDir(rootDir)) ? readdirSync(volumeDevicePluginDir(rootDir)) : [];
  const globalMaps = specs.filter((s) => s !== "staging" && s !== "publish" && present(join(blockGlobalMapPath(rootDir, s), podUid)));
  return [...new Set([...linked, ...published, ...globalMaps])].sort();
}

/**
 * upstream csiBlockMapper's MetricsProvider (NewMetricsCsi): NodeGetVolumeStats of the pod's global map
 * file <globalMapPath>/<pod UID>, with the staging path when the driver stages. Undefined when the volume is
 * not mapped for the pod, its driver is not registered, or it lacks GET_VOLUME_STATS.
 */
export async function blockVolumeStats(
  d: CSIBlockDeps,
  podUid: string,
  specName: string,
  endpointOf: (driver: string) => string | undefined,
): Promise<VolumeUsage[] | undefined> {
  const data = loadVolumeData(blockVolumeDataDir(d.rootDir, specName));
  const globalMapFile = join(blockGlobalMapPath(d.rootDir, specName), podUid);
  const endpoint = data && endpointOf(data.driverName);
  if (!data || !endpoint || !d.client.nodeGetVolumeStats || !existsSync(globalMapFile)) return undefined;
  const caps = await d.client.nodeGetCapabilities(endpoint);
  if (!caps.includes("GET_VOLUME_STATS")) return undefined;
  const staging = caps.includes("STAGE_UNSTAGE_VOLUME") ? blockStagingPath(d.rootDir, specName) : "";
  return d.client.nodeGetVolumeStats(endpoint, data.volumeHandle, globalMapFile, staging);
}

/**
 * upstream TearDownDevice (unstageVolumeForBlock, cleanupOrphanDeviceFiles): NodeUnstageVolume when the
 * staging path exists and the driver stages, then the publish directory, the staging path and the
 * volume's directory go.
 */
async function tearDownDevice(d: CSIBlockDeps, endpoint: string, data: VolumeData): Promise<void> {
  const staging = blockStagingPath(d.rootDir, data.specVolumeID);
  if (existsSync(staging) && (await d.client.nodeGetCapabilities(endpoint)).includes("STAGE_UNSTAGE_VOLUME")) {
    await d.client.nodeUnstageVolume(endpoint, data.volumeHandle, staging).catch((e: Error) => {
      throw new Error(`UnmapDevice.TearDownDevice failed: kubernetes.io/csi: blockMapper.unstageVolumeForBlock failed: ${e.message}`);
    });
    log.info(`CSI block volume unstaged ${kv({ driver: data.driverName, volumeHandle: data.volumeHandle, stagingTargetPath: staging })}`);
  }
  for (const path of [staging, blockPublishDir(d.rootDir, data.specVolumeID), blockVolumePluginDir(d.rootDir, data.specVolumeID)]) {
    if (mountPointsUnder(path).length > 0) throw new Error(`CSI block volume ${data.volumeHandle}: ${path} is still mounted after NodeUnstageVolume`);
    rmSync(path, { recursive: true, force: true });
  }
}

/**
 * upstream UnmapVolume then UnmapDevice for one of the pod's block volumes: UnmapBlockVolume (the fd lock,
 * the pod's link, the global map file: no driver needed), NodeUnpublishVolume of its publish path, and the
 * device torn down when no pod's publish path nor global map file is left.
 */
async function unmapCSIBlockVolume(d: CSIBlockDeps, podUid: string, specName: string, endpointOf: (driver: string) => string): Promise<void> {
  const blk = d.blkUtil ?? nodeBlockVolumePathHandler();
  const globalMapPath = blockGlobalMapPath(d.rootDir, specName);
  const podVolumeMapPath = podVolumeDeviceDir(d.rootDir, podUid, CSI_POD_PLUGIN_DIR);
  await unmapBlockVolume(blk, { globalMapPath, podVolumeMapPath, volumeMapName: specName, podUid });
  const data = loadVolumeData(blockVolumeDataDir(d.rootDir, specName));
  if (!data) throw new Error(`kubernetes.io/csi: no vol_data.json in ${blockVolumeDataDir(d.rootDir, specName)}`);
  const publish = blockPublishPath(d.rootDir, specName, podUid);
  const endpoint = endpointOf(data.driverName);
  if (existsSync(publish)) {
    await d.client.nodeUnpublishVolume(endpoint, data.volumeHandle, publish).catch((e: Error) => {
      throw new Error(`UnmapVolume.UnmapPodDevice failed: kubernetes.io/csi: blockMapper.unpublishVolumeForBlock failed: ${e.message}`);
    });
    if (mountPointsUnder(publish).length > 0) throw new Error(`CSI block volume ${data.volumeHandle}: ${publish} is still mounted after NodeUnpublishVolume`);
    rmSync(publish, { force: true });
    log.info(`CSI block volume unpublished ${kv({ driver: data.driverName, volumeHandle: data.volumeHandle, pod: podUid, publishPath: publish })}`);
  }
  if (publishedPods(d.rootDir, specName).length > 0) return;
  await checkNoDeviceRefs(blk, globalMapPath);
  await tearDownDevice(d, endpoint, data);
}

/** Unmaps every CSI block volume of the pod; the errors, one per volume that was not torn down. */
export async function unmapPodCSIBlockVolumes(d: CSIBlockDeps, podUid: string, endpointOf: (driver: string) => string): Promise<string[]> {
  const errors: string[] = [];
  for (const specName of podBlockVolumes(d.rootDir, podUid)) {
    await unmapCSIBlockVolume(d, podUid, specName, endpointOf).catch((e: Error) => errors.push(`${specName}: ${e.message}`));
  }
  const links = podVolumeDeviceDir(d.rootDir, podUid, CSI_POD_PLUGIN_DIR);
  if (errors.length === 0 && existsSync(links) && readdirSync(links).length === 0) rmSync(links, { recursive: true, force: true });
  return errors;
}
