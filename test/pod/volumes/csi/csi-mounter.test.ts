import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { attachmentName, deviceMountPath, podMountPath, saveVolumeData } from "../../../../src/pod/volumes/csi/csi-util.ts";
import { MountDeviceError } from "../../../../src/pod/volumes/operation-error.ts";
import { READ_WRITE_ONCE_POD_IN_USE, VOLUME_NOT_REPORTED_IN_USE } from "../../../../src/pod/volumes/csi/csi-mounter.ts";
import { ephemeralCSIVolumeSpec, persistentCSIVolumeSpec } from "../../../../src/pod/volumes/csi/volume-spec.ts";
import { recordingCSIVolumeManager } from "../../../support/fake-csi-node-client.ts";

const pod = (uid: string) => ({ metadata: { name: `p-${uid}`, namespace: "ns", uid }, spec: { serviceAccountName: "default" } });
const pvSpec = persistentCSIVolumeSpec("pv-a", { driver: "drv", volumeHandle: "vol-1" }, { accessModes: ["ReadWriteOnce"], mountOptions: [] }, false);

describe("the CSI volume manager (upstream csi_attacher MountDevice, csi_mounter SetUpAt/TearDownAt)", () => {
  let root = "";
  let objects: Record<string, unknown> = {};
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "csi-mounter-"));
    objects = { "/apis/storage.k8s.io/v1/csidrivers/drv": { metadata: { name: "drv" }, spec: { attachRequired: false } } };
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const manager = (caps: string[], registered = true) => recordingCSIVolumeManager({ rootDir: root, caps, registered, objects: () => objects });

  test("a PV: staged at the global mount path, published into the pod, vol_data.json beside each", async () => {
    const { calls, m } = manager(["STAGE_UNSTAGE_VOLUME"]);
    const target = await m.setUp({ pod: pod("u1"), spec: pvSpec });
    const staging = deviceMountPath(root, "drv", "vol-1");
    expect(target).toBe(podMountPath(root, "u1", "pv-a"));
    expect(calls.map((c) => c.method)).toEqual(["stage", "publish"]);
    const capability = { mount: { fsType: "", mountFlags: [], volumeMountGroup: "" }, accessMode: { mode: "SINGLE_NODE_WRITER" } };
    expect(calls[0]!.req).toEqual({ volumeId: "vol-1", publishContext: {}, stagingTargetPath: staging, volumeCapability: capability, volumeContext: {} });
    expect(calls[1]!.req).toEqual({
      volumeId: "vol-1",
      publishContext: {},
      stagingTargetPath: staging,
      targetPath: target,
      volumeCapability: capability,
      readonly: false,
      volumeContext: {},
    });
    expect(JSON.parse(readFileSync(join(dirname(staging), "vol_data.json"), "utf8"))).toEqual({
      specVolumeID: "pv-a",
      volumeHandle: "vol-1",
      driverName: "drv",
    });
    expect(JSON.parse(readFileSync(join(dirname(target), "vol_data.json"), "utf8"))).toEqual({
      specVolumeID: "pv-a",
      volumeHandle: "vol-1",
      driverName: "drv",
      nodeName: "n1",
      attachmentID: attachmentName("vol-1", "drv", "n1"),
      volumeLifecycleMode: "Persistent",
    });
  });

  test("teardown: unpublished for each pod, unstaged only after the last pod that uses it", async () => {
    const { calls, m } = manager(["STAGE_UNSTAGE_VOLUME"]);
    await m.setUp({ pod: pod("u1"), spec: pvSpec });
    await m.setUp({ pod: pod("u2"), spec: pvSpec });
    calls.length = 0;
    await m.tearDownPod("u1");
    expect(calls.map((c) => c.method)).toEqual(["unpublish"]);
    expect(existsSync(dirname(podMountPath(root, "u1", "pv-a")))).toBe(false);
    await m.tearDownPod("u2");
    expect(calls.map((c) => c.method)).toEqual(["unpublish", "unpublish", "unstage"]);
    expect(calls[2]!.req).toEqual({ volumeId: "vol-1", stagingTargetPath: deviceMountPath(root, "drv", "vol-1") });
    expect(existsSync(dirname(deviceMountPath(root, "drv", "vol-1")))).toBe(false);
  });

  test("a stage or publish that fails leaves no directory behind", async () => {
    const f = manager(["STAGE_UNSTAGE_VOLUME"]);
    f.client.nodeStageVolume = async () => {
      throw new Error("NodeStageVolume: grpc code 13: no disk");
    };
    await expect(f.m.setUp({ pod: pod("u1"), spec: pvSpec })).rejects.toThrow("no disk");
    expect(existsSync(dirname(deviceMountPath(root, "drv", "vol-1")))).toBe(false);
    const g = manager([]);
    g.client.nodePublishVolume = async () => {
      throw new Error("NodePublishVolume: grpc code 13: busy");
    };
    await expect(g.m.setUp({ pod: pod("u1"), spec: pvSpec })).rejects.toThrow("busy");
    expect(existsSync(dirname(podMountPath(root, "u1", "pv-a")))).toBe(false);
  });

  test("secrets: the NodeStageSecretRef's data to NodeStageVolume, the NodePublishSecretRef's to NodePublishVolume", async () => {
    const b64 = (v: string) => Buffer.from(v).toString("base64");
    objects["/api/v1/namespaces/sec/secrets/stage"] = { data: { user: b64("admin"), key: b64("s3cr3t") } };
    objects["/api/v1/namespaces/sec/secrets/publish"] = { data: { token: b64("t0k") } };
    const refs = { nodeStageSecretRef: { namespace: "sec", name: "stage" }, nodePublishSecretRef: { namespace: "sec", name: "publish" } };
    const { calls, m } = manager(["STAGE_UNSTAGE_VOLUME"]);
    await m.setUp({ pod: pod("u1"), spec: { ...pvSpec, ...refs } });
    expect(calls.map((c) => [c.method, c.req.secrets])).toEqual([
      ["stage", { user: "admin", key: "s3cr3t" }],
      ["publish", { token: "t0k" }],
    ]);
  });

  test("a secret that cannot be read fails the set-up with upstream's texts (a stage's as MountDevice's), nothing called", async () => {
    const { calls, m } = manager(["STAGE_UNSTAGE_VOLUME"]);
    const staged = { ...pvSpec, nodeStageSecretRef: { namespace: "sec", name: "gone" } };
    const err = await m.setUp({ pod: pod("u1"), spec: staged }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(MountDeviceError);
    expect((err as Error).message).toBe(
      'fetching NodeStageSecretRef sec/gone failed: kubernetes.io/csi: failed to find the secret gone in the namespace sec with error: secrets "gone" not found',
    );
    expect(existsSync(dirname(deviceMountPath(root, "drv", "vol-1")))).toBe(false);
    const published = { ...pvSpec, nodePublishSecretRef: { namespace: "sec", name: "gone" } };
    await expect(m.setUp({ pod: pod("u1"), spec: published })).rejects.toThrow("fetching NodePublishSecretRef sec/gone failed: kubernetes.io/csi: failed");
    expect(calls.map((c) => c.method)).toEqual(["stage"]);
    expect(existsSync(dirname(podMountPath(root, "u1", "pv-a")))).toBe(false);
  });

  test.each([
    [["ReadWriteOncePod"], true],
    [["ReadWriteOnce"], false],
    [["ReadWriteOncePod", "ReadWriteOnce"], false],
  ])("accessModes %j: a second pod's set-up refused while the first has it published: %p", async (accessModes, refused) => {
    const { calls, m } = manager(["STAGE_UNSTAGE_VOLUME"]);
    const spec = persistentCSIVolumeSpec("pv-a", { driver: "drv", volumeHandle: "vol-1" }, { accessModes, mountOptions: [] }, false);
    await m.setUp({ pod: pod("u1"), spec });
    const second = m.setUp({ pod: pod("u2"), spec });
    if (refused) {
      await expect(second).rejects.toThrow(READ_WRITE_ONCE_POD_IN_USE);
      expect(calls.map((c) => c.method)).toEqual(["stage", "publish"]);
      expect(existsSync(dirname(podMountPath(root, "u2", "pv-a")))).toBe(false);
      // The same pod again, and another once the first is gone: set up.
      await m.setUp({ pod: pod("u1"), spec });
      await m.tearDownPod("u1");
      await m.setUp({ pod: pod("u2"), spec });
    } else await second;
    expect(existsSync(podMountPath(root, "u2", "pv-a"))).toBe(true);
  });

  test("a driver without STAGE_UNSTAGE_VOLUME: published only, with no staging path", async () => {
    const { calls, m } = manager([]);
    await m.setUp({ pod: pod("u1"), spec: pvSpec });
    expect(calls.map((c) => [c.method, c.req.stagingTargetPath])).toEqual([["publish", ""]]);
    await m.tearDownPod("u1");
    expect(calls.map((c) => c.method)).toEqual(["publish", "unpublish"]);
  });

  test("attach required: no attachment is an error naming it; an attached one gives the publish context", async () => {
    objects = {};
    const { calls, m } = manager(["STAGE_UNSTAGE_VOLUME"]);
    const name = attachmentName("vol-1", "drv", "n1");
    await expect(m.setUp({ pod: pod("u1"), spec: pvSpec })).rejects.toThrow(`volume attachment ${name} for volume vol-1 of CSI driver drv not found`);
    expect(calls).toEqual([]);
    objects[`/apis/storage.k8s.io/v1/volumeattachments/${name}`] = { metadata: { name }, status: { attached: true, attachmentMetadata: { lun: "3" } } };
    await m.setUp({ pod: pod("u1"), spec: pvSpec });
    expect(calls.map((c) => c.req.publishContext)).toEqual([{ lun: "3" }, { lun: "3" }]);
  });

  test("volumes in use: an attach-required PV's unique name from its set-up (even waiting for the attachment) to its pods' teardown", async () => {
    const { m } = manager([]);
    await m.setUp({ pod: pod("u1"), spec: pvSpec }); // attachRequired: false → not attachable
    expect(m.volumesInUse()).toEqual([]);
    await m.tearDownPod("u1");
    objects = {};
    await expect(m.setUp({ pod: pod("u2"), spec: pvSpec })).rejects.toThrow("not found");
    expect(m.volumesInUse()).toEqual(["kubernetes.io/csi/drv^vol-1"]);
    const name = attachmentName("vol-1", "drv", "n1");
    objects[`/apis/storage.k8s.io/v1/volumeattachments/${name}`] = { metadata: { name }, status: { attached: true } };
    const other = persistentCSIVolumeSpec("pv-b", { driver: "drv", volumeHandle: "vol-0" }, { accessModes: ["ReadWriteOnce"], mountOptions: [] }, false);
    objects[`/apis/storage.k8s.io/v1/volumeattachments/${attachmentName("vol-0", "drv", "n1")}`] = { metadata: { name }, status: { attached: true } };
    await m.setUp({ pod: pod("u2"), spec: pvSpec });
    await m.setUp({ pod: pod("u3"), spec: pvSpec });
    await m.setUp({ pod: pod("u3"), spec: other });
    expect(m.volumesInUse()).toEqual(["kubernetes.io/csi/drv^vol-0", "kubernetes.io/csi/drv^vol-1"]);
    await m.tearDownPod("u3");
    expect(m.volumesInUse()).toEqual(["kubernetes.io/csi/drv^vol-1"]);
    await m.tearDownPod("u2");
    expect(m.volumesInUse()).toEqual([]);
  });

  test("reported in use: an attachable volume is refused until a node status lists it, then set up; the reported set follows the list", async () => {
    objects = {};
    let nudges = 0;
    const { calls, m } = recordingCSIVolumeManager({
      rootDir: root,
      caps: [],
      objects: () => objects,
      controllerAttachDetach: true,
      onVolumesInUseChange: () => nudges++,
    });
    const unique = "kubernetes.io/csi/drv^vol-1";
    const name = attachmentName("vol-1", "drv", "n1");
    objects[`/apis/storage.k8s.io/v1/volumeattachments/${name}`] = { metadata: { name }, status: { attached: true } };
    await expect(m.setUp({ pod: pod("u1"), spec: pvSpec })).rejects.toThrow(`${VOLUME_NOT_REPORTED_IN_USE} (${unique})`);
    expect(calls).toEqual([]);
    expect(m.volumesInUse()).toEqual([unique]);
    expect(nudges).toBe(1); // the volumes in use changed: a node status update is asked for
    await expect(m.setUp({ pod: pod("u1"), spec: pvSpec })).rejects.toThrow(VOLUME_NOT_REPORTED_IN_USE);
    expect(nudges).toBe(1); // no change, no request
    m.markVolumesReportedInUse([unique]);
    await m.setUp({ pod: pod("u1"), spec: pvSpec });
    expect(calls.map((c) => c.method)).toEqual(["publish"]);
    m.markVolumesReportedInUse([]); // the list no longer names it: another pod's set-up waits again
    await expect(m.setUp({ pod: pod("u2"), spec: pvSpec })).rejects.toThrow(VOLUME_NOT_REPORTED_IN_USE);
    expect(nudges).toBe(1);
    await m.tearDownPod("u2");
    expect(nudges).toBe(1); // u1 still uses it
    await m.tearDownPod("u1");
    expect(m.volumesInUse()).toEqual([]);
    expect(nudges).toBe(2);
  });

  test("reported in use: the pods a newly listed volume refused are handed over once, a torn-down one not", async () => {
    objects = {};
    const woken: string[][] = [];
    const { m } = recordingCSIVolumeManager({
      rootDir: root,
      caps: [],
      objects: () => objects,
      controllerAttachDetach: true,
      onVolumesReportedInUse: (uids) => void woken.push([...uids].sort()),
    });
    const unique = "kubernetes.io/csi/drv^vol-1";
    const name = attachmentName("vol-1", "drv", "n1");
    objects[`/apis/storage.k8s.io/v1/volumeattachments/${name}`] = { metadata: { name }, status: { attached: true } };
    for (const uid of ["u1", "u2", "u3"]) await expect(m.setUp({ pod: pod(uid), spec: pvSpec })).rejects.toThrow(VOLUME_NOT_REPORTED_IN_USE);
    await m.tearDownPod("u3");
    m.markVolumesReportedInUse(["kubernetes.io/csi/drv^other"]);
    expect(woken).toEqual([]);
    m.markVolumesReportedInUse([unique]);
    expect(woken).toEqual([["u1", "u2"]]);
    m.markVolumesReportedInUse([unique]); // listed again: nobody waits
    expect(woken).toHaveLength(1);
  });

  test("reported in use: a pod volume set up before a restart (its vol_data.json left, its mount gone) is not held", async () => {
    objects = {};
    const name = attachmentName("vol-1", "drv", "n1");
    objects[`/apis/storage.k8s.io/v1/volumeattachments/${name}`] = { metadata: { name }, status: { attached: true } };
    const volData = {
      specVolumeID: "pv-a",
      volumeHandle: "vol-1",
      driverName: "drv",
      nodeName: "n1",
      attachmentID: name,
      volumeLifecycleMode: "Persistent" as const,
    };
    saveVolumeData(dirname(podMountPath(root, "u1", "pv-a")), volData);
    const { calls, m } = recordingCSIVolumeManager({ rootDir: root, caps: [], objects: () => objects, controllerAttachDetach: true });
    await m.setUp({ pod: pod("u1"), spec: pvSpec });
    expect(calls.map((c) => c.method)).toEqual(["publish"]);
    await expect(m.setUp({ pod: pod("u2"), spec: pvSpec })).rejects.toThrow(VOLUME_NOT_REPORTED_IN_USE);
  });

  test("reported in use: a driver that needs no attach, or no attach/detach controller (standalone), is not held", async () => {
    let nudges = 0;
    const f = recordingCSIVolumeManager({
      rootDir: root,
      caps: [],
      objects: () => objects,
      controllerAttachDetach: true,
      onVolumesInUseChange: () => nudges++,
    });
    await f.m.setUp({ pod: pod("u1"), spec: pvSpec }); // attachRequired: false
    expect(nudges).toBe(0);
    objects = {};
    const name = attachmentName("vol-1", "drv", "n1");
    objects[`/apis/storage.k8s.io/v1/volumeattachments/${name}`] = { metadata: { name }, status: { attached: true } };
    const g = manager([]);
    await g.m.setUp({ pod: pod("u2"), spec: pvSpec });
    expect(g.calls.map((c) => c.method)).toEqual(["publish"]);
  });

  test("an inline volume: refused unless the CSIDriver lists Ephemeral; then published with the pod's info, never staged", async () => {
    const { calls, m } = manager(["STAGE_UNSTAGE_VOLUME"]);
    const spec = ephemeralCSIVolumeSpec("u1", "scratch", { driver: "drv", volumeAttributes: { a: "b" } });
    await expect(m.setUp({ pod: pod("u1"), spec })).rejects.toThrow('volume mode "Ephemeral" not supported by driver drv (only supports ["Persistent"])');
    objects["/apis/storage.k8s.io/v1/csidrivers/drv"] = { metadata: { name: "drv" }, spec: { podInfoOnMount: true, volumeLifecycleModes: ["Ephemeral"] } };
    await m.setUp({ pod: pod("u1"), spec });
    expect(calls.map((c) => c.method)).toEqual(["publish"]);
    expect(calls[0]!.req.volumeContext).toEqual({
      a: "b",
      "csi.storage.k8s.io/pod.name": "p-u1",
      "csi.storage.k8s.io/pod.namespace": "ns",
      "csi.storage.k8s.io/pod.uid": "u1",
      "csi.storage.k8s.io/serviceAccount.name": "default",
      "csi.storage.k8s.io/ephemeral": "true",
    });
    await m.tearDownPod("u1");
    expect(calls.map((c) => c.method)).toEqual(["publish", "unpublish"]);
  });

  test("a driver not registered: upstream's error; teardown keeps the volume for a later try", async () => {
    const reg = manager([]);
    await reg.m.setUp({ pod: pod("u1"), spec: pvSpec });
    const { m } = manager([], false);
    await expect(m.setUp({ pod: pod("u2"), spec: pvSpec })).rejects.toThrow("driver name drv not found in the list of registered CSI drivers");
    await expect(m.tearDownPod("u1")).rejects.toThrow("pod u1: CSI volumes not torn down: pv-a: driver name drv not found");
    expect(existsSync(join(dirname(podMountPath(root, "u1", "pv-a")), "vol_data.json"))).toBe(true);
  });
});
