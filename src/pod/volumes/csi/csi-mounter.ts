// The kubelet's csi volume plugin on the node (upstream pkg/volume/csi csi_attacher.go WaitForAttach,
// MountDevice, UnmountDevice; csi_mounter.go SetUpAt, TearDownAt): a pod's CSI volume is staged once per
// node (NodeStageVolume, when the driver has STAGE_UNSTAGE_VOLUME) at its global mount path and
// published into the pod (NodePublishVolume), each call with the data of the Secret the volume names for
// it (credentials.ts); the pod's removal unpublishes it, and unstages it when no other pod's volume names
// the same driver and handle. Every step leaves a vol_data.json, so teardown works from the disk alone,
// also for a pod left behind by an earlier bunlet. An attachable volume is staged only once a node status
// the API server accepted lists it in volumesInUse (upstream VerifyControllerAttachedVolume), so the
// attach/detach controller does not detach a volume the node is about to mount; the pods that wait for
// it are synced again as soon as one does (upstream's reconciler looks again every 100 ms), not at their
// volume back-off.
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { kv, log } from "../../../log.ts";
import { mountPointsUnder } from "../mount-points.ts";
import { MapVolumeError, MountDeviceError } from "../operation-error.ts";
import { setVolumeOwnership } from "../ownership.ts";
import {
  attachedMetadata,
  checkVolumeLifecycleMode,
  csiDriverObjectSchema,
  csiDriverPath,
  csiDriverPolicy,
  volumeAttachmentPath,
  volumeAttachmentSchema,
  type CSIDriverPolicy,
} from "./csi-driver-object.ts";
import type { BlockVolumePathHandler } from "../volume-path-handler.ts";
import { blockVolumeStats, isBlockVolumeMapped, mapCSIBlockVolume, podDeviceMapPath, unmapPodCSIBlockVolumes } from "./csi-block.ts";
import { volumeSecrets } from "./credentials.ts";
import { attachmentName, deviceMountPath, loadVolumeData, podCSIVolumesDir, podMountPath, saveVolumeData, type VolumeData } from "./csi-util.ts";
import { expandIfDue } from "./expander.ts";
import type { ExpandableClaim } from "../resize-util.ts";
import type { CSINodeClient, NodeStageVolumeRequest, VolumeUsage } from "./node-client.ts";
import { mountVolumeCapability, publishVolumeContext, supportsFSGroup, type CSIVolumeSpec, type PodIdentity } from "./volume-spec.ts";

export interface CSIVolumeManagerDeps {
  rootDir: string;
  nodeName: () => string;
  /** The endpoint of a registered driver (the registration handler's drivers). */
  driverEndpoint: (driver: string) => string | undefined;
  /** A GET of an API object: undefined when it does not exist; absent when bunlet runs without an API server. */
  getObject?: (path: string) => Promise<unknown>;
  client: CSINodeClient;
  /** The bind mounts, links and loop devices of raw block volumes (csi-block.ts; the node's when absent). */
  blkUtil?: BlockVolumePathHandler;
  /**
   * The attach/detach controller attaches this node's volumes (bunlet runs with an API server):
   * an attachable volume is set up only once the node status has reported it in use.
   */
  controllerAttachDetach?: boolean;
  /** The volumes in use changed: a node status update is due (upstream waits for the next period). */
  onVolumesInUseChange?: () => void;
  /** A node status now lists volumes these pods use that none listed before: their set-up can go on now. */
  onVolumesReportedInUse?: (podUids: ReadonlySet<string>) => void;
  /** A JSON merge patch of an API object (a claim's status, after a node expansion); absent without an API server. */
  patchObject?: (path: string, body: object) => Promise<unknown>;
}

export interface CSIVolumeSetUp {
  pod: PodIdentity;
  spec: CSIVolumeSpec;
  fsGroup?: number;
  /** A claim's volume: the claim and its PV's capacity as this sync read them (a node expansion's input). */
  claim?: { claim: ExpandableClaim; capacity: string | undefined };
}

export interface CSIVolumeManager {
  /** Stages and publishes the volume for the pod; the directory its containers mount. */
  setUp(req: CSIVolumeSetUp): Promise<string>;
  /** Stages and publishes a Block PV for the pod (csi-block.ts); the pod's link to the device, a CRI Device's host path. */
  mapBlock(req: CSIVolumeSetUp): Promise<string>;
  /** Grows a claim's published volume (a mapped one with `block`) when the claim's expansion is due on the node (expander.ts); true when it did. */
  expand(req: CSIVolumeSetUp, block?: boolean): Promise<boolean>;
  /** Unpublishes the pod's CSI volumes (block ones too) and unstages those no other pod uses, from their vol_data.json. */
  tearDownPod(podUid: string): Promise<void>;
  /**
   * upstream GetVolumesInUse: the unique names (`kubernetes.io/csi/<driver>^<handle>`) of the attachable
   * volumes — persistent ones whose driver requires attach — that pods use or are being set up with,
   * sorted: the node status's `volumesInUse`, which keeps the attach/detach controller from detaching them.
   */
  volumesInUse(): string[];
  /**
   * upstream MarkVolumesAsReportedInUse: the unique names a node status the API server accepted lists in
   * `volumesInUse`; a volume not among them is no longer reported. The pods using a volume newly listed
   * are handed to onVolumesReportedInUse.
   */
  markVolumesReportedInUse(names: readonly string[]): void;
  /**
   * upstream metrics_csi GetMetrics: NodeGetVolumeStats of the pod's published volume `specVolID` (the PV's
   * name, or an inline volume's); undefined when it is not published or its driver lacks GET_VOLUME_STATS.
   */
  volumeStats(podUid: string, specVolID: string): Promise<VolumeUsage[] | undefined>;
  /** The same for the pod's Block PV `specVolID` (csi-block.ts blockVolumeStats). */
  blockVolumeStats(podUid: string, specVolID: string): Promise<VolumeUsage[] | undefined>;
}

/** upstream GenerateVerifyControllerAttachedVolumeFunc's refusal of a volume the node status has not listed yet. */
export const VOLUME_NOT_REPORTED_IN_USE = "Volume has not been added to the list of VolumesInUse in the node's volume status";

/** upstream GetUniqueVolumeNameFromSpec for the csi plugin: its name, then `<driver>^<volume handle>`. */
export function uniqueVolumeName(driver: string, volumeHandle: string): string {
  return `kubernetes.io/csi/${driver}^${volumeHandle}`;
}

/** The fields NodeStageVolume and NodePublishVolume share (the publish's volume context and secrets are its own). */
function stageRequest(
  spec: CSIVolumeSpec,
  publishContext: Record<string, string>,
  staging: string,
  capability: object,
  secrets: Record<string, string> | undefined,
): NodeStageVolumeRequest {
  const req = { volumeId: spec.volumeHandle, publishContext, stagingTargetPath: staging, volumeCapability: capability, volumeContext: spec.volumeAttributes };
  return secrets ? { ...req, secrets } : req;
}

const isMounted = (dir: string) => existsSync(dir) && mountPointsUnder(dir).includes(dir);

/**
 * upstream reconstructVolumes: a pod volume whose vol_data.json is left from an earlier set-up (its mount
 * gone with a reboot) was reported in use then, and is set up again without waiting for the node status.
 */
function setUpBefore(volumeDir: string): boolean {
  try {
    return loadVolumeData(volumeDir) !== undefined;
  } catch {
    return false;
  }
}

/** The volume data of every published CSI volume on the node: pod UID, volume directory, data. */
function publishedVolumes(rootDir: string): { podUid: string; dir: string; data: VolumeData }[] {
  const podsDir = join(rootDir, "pods");
  const out: { podUid: string; dir: string; data: VolumeData }[] = [];
  for (const podUid of existsSync(podsDir) ? readdirSync(podsDir) : []) {
    const csiDir = podCSIVolumesDir(rootDir, podUid);
    if (!existsSync(csiDir)) continue;
    for (const name of readdirSync(csiDir)) {
      try {
        const data = loadVolumeData(join(csiDir, name));
        if (data) out.push({ podUid, dir: join(csiDir, name), data });
      } catch (e) {
        log.warn(`CSI volume data unreadable ${kv({ dir: join(csiDir, name), error: (e as Error).message })}`);
      }
    }
  }
  return out;
}

/** The published volumes that name the driver's volume handle (the pods using a staged volume). */
function volumeUsers(rootDir: string, driver: string, volumeHandle: string) {
  return publishedVolumes(rootDir).filter((v) => v.data.driverName === driver && v.data.volumeHandle === volumeHandle);
}

export function createCSIVolumeManager(d: CSIVolumeManagerDeps): CSIVolumeManager {
  /** Pod UID → its CSI volumes (spec volume ID) → unique name when attachable, else "". */
  const inUse = new Map<string, Map<string, string>>();
  /** The unique names the node status last written lists (upstream's desired state's reportedInUse). */
  let reportedInUse = new Set<string>();
  /** Unique name → the pods whose set-up it refused because no node status listed it yet. */
  const waitingForReport = new Map<string, Set<string>>();
  const volumesInUse = () => [...new Set([...inUse.values()].flatMap((vols) => [...vols.values()]).filter((n) => n !== ""))].sort();
  /** Runs `change` on the volumes in use, and asks for a node status update when their unique names changed. */
  function changeInUse(change: () => void): void {
    const before = volumesInUse().join("\n");
    change();
    if (volumesInUse().join("\n") !== before) d.onVolumesInUseChange?.();
  }
  function noteInUse(podUid: string, spec: CSIVolumeSpec, policy: CSIDriverPolicy): void {
    const attachable = spec.lifecycle === "Persistent" && policy.attachRequired;
    changeInUse(() => {
      let vols = inUse.get(podUid);
      if (!vols) inUse.set(podUid, (vols = new Map()));
      vols.set(spec.specVolID, attachable ? uniqueVolumeName(spec.driver, spec.volumeHandle) : "");
    });
  }
  /** upstream VerifyControllerAttachedVolume: an attachable volume waits until the node status lists it in use. */
  function verifyReportedInUse(spec: CSIVolumeSpec, podUid: string): void {
    const name = uniqueVolumeName(spec.driver, spec.volumeHandle);
    if (!d.controllerAttachDetach || reportedInUse.has(name)) return;
    let waiting = waitingForReport.get(name);
    if (!waiting) waitingForReport.set(name, (waiting = new Set()));
    waiting.add(podUid);
    throw new Error(`${VOLUME_NOT_REPORTED_IN_USE} (${name})`);
  }
  const endpointOf = (driver: string) => {
    const e = d.driverEndpoint(driver);
    if (!e) throw new Error(`driver name ${driver} not found in the list of registered CSI drivers`);
    return e;
  };

  async function driverPolicy(driver: string): Promise<CSIDriverPolicy> {
    const obj = d.getObject ? await d.getObject(csiDriverPath(driver)) : undefined;
    return csiDriverPolicy(obj === undefined ? undefined : csiDriverObjectSchema.parse(obj));
  }

  /** upstream WaitForAttach, one read: the publish context of an attached volume. */
  async function waitForAttach(spec: CSIVolumeSpec): Promise<Record<string, string>> {
    const name = attachmentName(spec.volumeHandle, spec.driver, d.nodeName());
    if (!d.getObject) throw new Error(`volume attachment ${name} cannot be read: no kubeClient defined`);
    const obj = await d.getObject(volumeAttachmentPath(name));
    return attachedMetadata(obj === undefined ? undefined : volumeAttachmentSchema.parse(obj), name, spec.driver, spec.volumeHandle);
  }

  /**
   * upstream MountDevice: NodeStageVolume at the global mount path (with the NodeStageSecretRef's data),
   * its vol_data.json beside it. Its failures are MountDevice's.
   */
  async function stage(endpoint: string, spec: CSIVolumeSpec, publishContext: Record<string, string>, capability: object): Promise<string> {
    const staging = deviceMountPath(d.rootDir, spec.driver, spec.volumeHandle);
    if (isMounted(staging)) return staging;
    const secrets = await volumeSecrets(d.getObject, "NodeStageSecretRef", spec.nodeStageSecretRef).catch((e: Error) => {
      throw new MountDeviceError(e.message);
    });
    saveVolumeData(dirname(staging), { specVolumeID: spec.specVolID, volumeHandle: spec.volumeHandle, driverName: spec.driver });
    mkdirSync(staging, { recursive: true, mode: 0o750 });
    try {
      await d.client.nodeStageVolume(endpoint, stageRequest(spec, publishContext, staging, capability, secrets));
    } catch (e) {
      // upstream MountDevice's clean-up: a stage that failed leaves no directory unless it is in use.
      const inUse = volumeUsers(d.rootDir, spec.driver, spec.volumeHandle).length > 0;
      if (!inUse && mountPointsUnder(dirname(staging)).length === 0) rmSync(dirname(staging), { recursive: true, force: true });
      throw new MountDeviceError((e as Error).message);
    }
    log.info(`CSI volume staged ${kv({ driver: spec.driver, volumeHandle: spec.volumeHandle, stagingTargetPath: staging })}`);
    return staging;
  }

  /**
   * A volume set up by an earlier bunlet: reported in use again once its driver's policy can be read (a
   * set-up volume never waits for the API server).
   */
  async function noteInUseAgain(podUid: string, spec: CSIVolumeSpec): Promise<void> {
    if (inUse.get(podUid)?.has(spec.specVolID)) return;
    const policy = await driverPolicy(spec.driver).catch(() => undefined);
    if (policy) noteInUse(podUid, spec, policy);
  }

  /** What a set-up needs first: the driver's endpoint, policy (the lifecycle mode checked) and capabilities, the attachment's context. */
  async function prepare(spec: CSIVolumeSpec, podUid: string, reconstructed = false) {
    const endpoint = endpointOf(spec.driver);
    const policy = await driverPolicy(spec.driver);
    checkVolumeLifecycleMode(spec.driver, spec.lifecycle, policy);
    noteInUse(podUid, spec, policy); // in use from the moment the pod wants it (upstream's desired state)
    const caps = await d.client.nodeGetCapabilities(endpoint);
    const attachable = spec.lifecycle === "Persistent" && policy.attachRequired;
    if (attachable && !reconstructed) verifyReportedInUse(spec, podUid);
    const publishContext = attachable ? await waitForAttach(spec) : {};
    return { endpoint, policy, caps, publishContext };
  }

  async function setUp(req: CSIVolumeSetUp): Promise<string> {
    const { spec, pod } = req;
    const podUid = pod.metadata.uid ?? "";
    const target = podMountPath(d.rootDir, podUid, spec.specVolID);
    if (isMounted(target)) {
      await noteInUseAgain(podUid, spec);
      await expand(req);
      return target;
    }
    const { endpoint, policy, caps, publishContext } = await prepare(spec, podUid, setUpBefore(dirname(target)));
    const persistent = spec.lifecycle === "Persistent";
    const fsGroupApplies = supportsFSGroup(spec, req.fsGroup, policy.fsGroupPolicy);
    const mountGroup = caps.includes("VOLUME_MOUNT_GROUP") && fsGroupApplies ? String(req.fsGroup) : undefined;
    const capability = mountVolumeCapability(spec, caps.includes("SINGLE_NODE_MULTI_WRITER"), mountGroup);
    const staging = persistent && caps.includes("STAGE_UNSTAGE_VOLUME") ? await stage(endpoint, spec, publishContext, capability) : "";
    const secrets = await volumeSecrets(d.getObject, "NodePublishSecretRef", spec.nodePublishSecretRef);
    const nodeName = d.nodeName();
    saveVolumeData(dirname(target), {
      specVolumeID: spec.specVolID,
      volumeHandle: spec.volumeHandle,
      driverName: spec.driver,
      nodeName,
      attachmentID: attachmentName(spec.volumeHandle, spec.driver, nodeName),
      volumeLifecycleMode: spec.lifecycle,
    });
    try {
      await d.client.nodePublishVolume(endpoint, {
        ...stageRequest(spec, publishContext, staging, capability, secrets),
        targetPath: target,
        readonly: spec.readOnly,
        volumeContext: publishVolumeContext(spec, pod, policy.podInfoOnMount),
      });
    } catch (e) {
      // upstream removeMountDir: nothing of a publish that failed stays, unless the driver mounted it.
      if (!isMounted(target)) rmSync(dirname(target), { recursive: true, force: true });
      throw e;
    }
    // The driver applies the group itself when it takes volume_mount_group (VOLUME_MOUNT_GROUP).
    if (fsGroupApplies && mountGroup === undefined) setVolumeOwnership(target, req.fsGroup!);
    log.info(`CSI volume published ${kv({ driver: spec.driver, volumeHandle: spec.volumeHandle, pod: podUid, targetPath: target, readOnly: spec.readOnly })}`);
    await expand(req); // upstream expandVolumeDuringMount: a claim grown while no pod used it
    return target;
  }

  async function expand(req: CSIVolumeSetUp, block = false): Promise<boolean> {
    if (!req.claim || !d.patchObject) return false;
    const podUid = req.pod.metadata.uid ?? "";
    const deps = { rootDir: d.rootDir, client: d.client, patch: d.patchObject };
    return expandIfDue(deps, { podUid, spec: req.spec, endpoint: () => endpointOf(req.spec.driver), ...req.claim, block });
  }

  /** upstream GenerateMapVolumeFunc for a CSI Block PV (csi-block.ts); its failures are MapVolumeErrors. */
  async function mapBlock(req: CSIVolumeSetUp): Promise<string> {
    const { spec, pod } = req;
    const podUid = pod.metadata.uid ?? "";
    if (isBlockVolumeMapped(d.rootDir, podUid, spec.specVolID)) {
      await noteInUseAgain(podUid, spec);
      await expand(req, true);
      return podDeviceMapPath(d.rootDir, podUid, spec.specVolID);
    }
    if (!d.driverEndpoint(spec.driver))
      throw new MapVolumeError(
        "SetUpDevice",
        `kubernetes.io/csi: blockMapper.SetUpDevice failed to get CSI client: driver name ${spec.driver} not found in the list of registered CSI drivers`,
      );
    const { endpoint, policy, caps, publishContext } = await prepare(spec, podUid).catch((e: Error) => {
      throw new MapVolumeError("SetUpDevice", e.message);
    });
    const nodeName = d.nodeName();
    const attachmentID = attachmentName(spec.volumeHandle, spec.driver, nodeName);
    const map = { pod, spec, endpoint, capabilities: caps, podInfoOnMount: policy.podInfoOnMount, publishContext, nodeName, attachmentID };
    const link = await mapCSIBlockVolume({ rootDir: d.rootDir, client: d.client, getObject: d.getObject, blkUtil: d.blkUtil }, map);
    await expand(req, true).catch((e: Error) => {
      throw new MapVolumeError("MarkVolumeAsMounted", e.message); // upstream: a raw block volume grown at its mapping
    });
    return link;
  }

  /** upstream UnmountDevice: NodeUnstageVolume when no published volume names the driver and handle any more. */
  async function unstageIfUnused(data: VolumeData): Promise<void> {
    const staging = deviceMountPath(d.rootDir, data.driverName, data.volumeHandle);
    if (!existsSync(dirname(staging))) return;
    if (volumeUsers(d.rootDir, data.driverName, data.volumeHandle).length > 0) return;
    const endpoint = endpointOf(data.driverName);
    if ((await d.client.nodeGetCapabilities(endpoint)).includes("STAGE_UNSTAGE_VOLUME")) {
      await d.client.nodeUnstageVolume(endpoint, data.volumeHandle, staging);
      log.info(`CSI volume unstaged ${kv({ driver: data.driverName, volumeHandle: data.volumeHandle, stagingTargetPath: staging })}`);
    }
    if (mountPointsUnder(dirname(staging)).length > 0) throw new Error(`CSI volume ${data.volumeHandle}: ${staging} is still mounted after NodeUnstageVolume`);
    rmSync(dirname(staging), { recursive: true, force: true });
  }

  /** upstream TearDownAt: NodeUnpublishVolume, then the volume's directory and vol_data.json go. */
  async function tearDown(dir: string, data: VolumeData): Promise<void> {
    const target = join(dir, "mount");
    await d.client.nodeUnpublishVolume(endpointOf(data.driverName), data.volumeHandle, target);
    if (mountPointsUnder(dir).length > 0) throw new Error(`CSI volume ${data.volumeHandle}: ${target} is still mounted after NodeUnpublishVolume`);
    rmSync(dir, { recursive: true, force: true });
    log.info(`CSI volume unpublished ${kv({ driver: data.driverName, volumeHandle: data.volumeHandle, targetPath: target })}`);
    if (data.volumeLifecycleMode !== "Ephemeral") await unstageIfUnused(data);
  }

  return {
    setUp,
    mapBlock,
    expand,
    async tearDownPod(podUid) {
      const errors = await unmapPodCSIBlockVolumes({ rootDir: d.rootDir, client: d.client, getObject: d.getObject, blkUtil: d.blkUtil }, podUid, endpointOf);
      for (const v of publishedVolumes(d.rootDir).filter((x) => x.podUid === podUid)) {
        await tearDown(v.dir, v.data).catch((e) => errors.push(`${v.data.specVolumeID}: ${(e as Error).message}`));
      }
      if (errors.length > 0) throw new Error(`pod ${podUid}: CSI volumes not torn down: ${errors.join("; ")}`);
      changeInUse(() => inUse.delete(podUid));
      for (const [name, waiting] of waitingForReport) if (waiting.delete(podUid) && waiting.size === 0) waitingForReport.delete(name);
    },
    async volumeStats(podUid, specVolID) {
      const dir = join(podCSIVolumesDir(d.rootDir, podUid), specVolID);
      const data = loadVolumeData(dir);
      const endpoint = data && d.driverEndpoint(data.driverName);
      if (!data || !endpoint || !d.client.nodeGetVolumeStats) return undefined;
      const caps = await d.client.nodeGetCapabilities(endpoint);
      if (!caps.includes("GET_VOLUME_STATS")) return undefined;
      const staged = data.volumeLifecycleMode !== "Ephemeral" && caps.includes("STAGE_UNSTAGE_VOLUME");
      const staging = staged ? deviceMountPath(d.rootDir, data.driverName, data.volumeHandle) : "";
      return d.client.nodeGetVolumeStats(endpoint, data.volumeHandle, join(dir, "mount"), staging);
    },
    blockVolumeStats: (podUid, specVolID) =>
      blockVolumeStats({ rootDir: d.rootDir, client: d.client, blkUtil: d.blkUtil }, podUid, specVolID, d.driverEndpoint),
    volumesInUse,
    markVolumesReportedInUse(names) {
      reportedInUse = new Set(names);
      const waking = new Set(names.flatMap((n) => [...(waitingForReport.get(n) ?? [])]));
      for (const n of names) waitingForReport.delete(n);
      if (waking.size > 0) d.onVolumesReportedInUse?.(waking);
    },
  };
}
