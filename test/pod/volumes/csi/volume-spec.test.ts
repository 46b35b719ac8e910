import { describe, expect, test } from "bun:test";
import { attachedMetadata, checkVolumeLifecycleMode, csiDriverPolicy, volumeAttachmentSchema } from "../../../../src/pod/volumes/csi/csi-driver-object.ts";
import { ephemeralVolumeHandle } from "../../../../src/pod/volumes/csi/csi-util.ts";
import {
  csiAccessMode,
  ephemeralCSIVolumeSpec,
  mountVolumeCapability,
  persistentCSIVolumeSpec,
  publishVolumeContext,
  supportsFSGroup,
  type CSIVolumeSpec,
} from "../../../../src/pod/volumes/csi/volume-spec.ts";

const pod = { metadata: { name: "web", namespace: "ns1", uid: "uid-1" }, spec: { serviceAccountName: "sa1" } };
const persistent = (o: Partial<CSIVolumeSpec> = {}): CSIVolumeSpec => ({
  ...persistentCSIVolumeSpec(
    "pv-a",
    { driver: "drv", volumeHandle: "vol-1", fsType: "ext4", volumeAttributes: { k: "v" } },
    { accessModes: ["ReadWriteOnce"], mountOptions: ["noatime"] },
    false,
  ),
  ...o,
});

describe("the CSI volume spec (upstream NewMounter)", () => {
  test("a PV: its name, handle, fsType, attributes, access modes and mountOptions; readOnly from the claim", () => {
    expect(persistent()).toEqual({
      specVolID: "pv-a",
      driver: "drv",
      volumeHandle: "vol-1",
      readOnly: false,
      fsType: "ext4",
      mountOptions: ["noatime"],
      accessModes: ["ReadWriteOnce"],
      volumeAttributes: { k: "v" },
      lifecycle: "Persistent",
    });
    const pv = { accessModes: [], mountOptions: [] };
    expect(persistentCSIVolumeSpec("p", { driver: "d", volumeHandle: "h" }, pv, true).readOnly).toBe(true);
    // The source's readOnly is the controller's (ControllerPublishVolume), not the node's.
    expect(persistentCSIVolumeSpec("p", { driver: "d", volumeHandle: "h", readOnly: true }, pv, false).readOnly).toBe(false);
  });
  test("an inline volume: ephemeral, named by the pod volume, its handle made from the pod UID", () => {
    expect(ephemeralCSIVolumeSpec("uid-1", "scratch", { driver: "drv", readOnly: true, volumeAttributes: { size: "1Mi" } })).toEqual({
      specVolID: "scratch",
      driver: "drv",
      volumeHandle: ephemeralVolumeHandle("uid-1", "scratch"),
      readOnly: true,
      fsType: "",
      mountOptions: [],
      accessModes: [],
      volumeAttributes: { size: "1Mi" },
      lifecycle: "Ephemeral",
    });
  });
  test("secret references: a PV's namespace and name; an inline volume's name in the pod's namespace", () => {
    const pv = { accessModes: [], mountOptions: [] };
    const src = {
      driver: "d",
      volumeHandle: "h",
      nodeStageSecretRef: { name: "s1", namespace: "ns1" },
      nodePublishSecretRef: { name: "s2", namespace: "ns2" },
    };
    expect(persistentCSIVolumeSpec("p", src, pv, false)).toMatchObject({
      nodeStageSecretRef: { namespace: "ns1", name: "s1" },
      nodePublishSecretRef: { namespace: "ns2", name: "s2" },
    });
    expect(persistentCSIVolumeSpec("p", { driver: "d", volumeHandle: "h", nodeStageSecretRef: null }, pv, false)).not.toHaveProperty("nodeStageSecretRef");
    expect(ephemeralCSIVolumeSpec("u", "v", { driver: "d", nodePublishSecretRef: { name: "s" } }, "web-ns").nodePublishSecretRef).toEqual({
      namespace: "web-ns",
      name: "s",
    });
    expect(ephemeralCSIVolumeSpec("u", "v", { driver: "d" }, "web-ns")).not.toHaveProperty("nodePublishSecretRef");
  });
});

describe("volume_context (upstream getPodInfoAttrs)", () => {
  test("the attributes alone without podInfoOnMount", () => {
    expect(publishVolumeContext(persistent(), pod, false)).toEqual({ k: "v" });
  });
  test("with podInfoOnMount: the pod's name, namespace, UID, service account and whether it is ephemeral", () => {
    expect(publishVolumeContext(persistent(), pod, true)).toEqual({
      k: "v",
      "csi.storage.k8s.io/pod.name": "web",
      "csi.storage.k8s.io/pod.namespace": "ns1",
      "csi.storage.k8s.io/pod.uid": "uid-1",
      "csi.storage.k8s.io/serviceAccount.name": "sa1",
      "csi.storage.k8s.io/ephemeral": "false",
    });
    const inline = ephemeralCSIVolumeSpec("uid-1", "s", { driver: "d" });
    expect(publishVolumeContext(inline, pod, true)["csi.storage.k8s.io/ephemeral"]).toBe("true");
  });
});

describe("the volume capability (upstream asCSIAccessModeV1)", () => {
  test.each([
    [["ReadWriteOnce"], false, "SINGLE_NODE_WRITER"],
    [["ReadWriteOnce"], true, "SINGLE_NODE_MULTI_WRITER"],
    [["ReadOnlyMany", "ReadWriteOnce"], false, "MULTI_NODE_READER_ONLY"],
    [["ReadWriteMany"], false, "MULTI_NODE_MULTI_WRITER"],
    [["ReadWriteOncePod"], false, "SINGLE_NODE_WRITER"],
    [["ReadWriteOncePod"], true, "SINGLE_NODE_SINGLE_WRITER"],
    [[], false, "SINGLE_NODE_WRITER"],
  ])("%j (SINGLE_NODE_MULTI_WRITER %p): %s", (modes, snmw, want) => {
    expect(csiAccessMode(modes, snmw)).toBe(want as ReturnType<typeof csiAccessMode>);
  });
  test("a mount volume: fsType, the PV's mountOptions as flags, the mount group", () => {
    expect(mountVolumeCapability(persistent(), false, "2000")).toEqual({
      mount: { fsType: "ext4", mountFlags: ["noatime"], volumeMountGroup: "2000" },
      accessMode: { mode: "SINGLE_NODE_WRITER" },
    });
  });
});

describe("supportsFSGroup (upstream csiMountMgr.supportsFSGroup)", () => {
  test.each([
    ["no fsGroup", persistent(), undefined, "File", false],
    ["policy None", persistent(), 5, "None", false],
    ["read-only", persistent({ readOnly: true }), 5, "File", false],
    ["policy File", persistent({ fsType: "" }), 5, "File", true],
    ["RWO with fsType", persistent(), 5, "ReadWriteOnceWithFSType", true],
    ["no fsType", persistent({ fsType: "" }), 5, "ReadWriteOnceWithFSType", false],
    ["RWX", persistent({ accessModes: ["ReadWriteMany"] }), 5, "ReadWriteOnceWithFSType", false],
    ["inline with fsType", ephemeralCSIVolumeSpec("u", "v", { driver: "d", fsType: "ext4" }), 5, "ReadWriteOnceWithFSType", true],
  ] as const)("%s", (_name, spec, fsGroup, policy, want) => {
    expect(supportsFSGroup(spec, fsGroup, policy)).toBe(want);
  });
});

describe("the CSIDriver and VolumeAttachment", () => {
  test("defaults without a CSIDriver: attach required, no pod info, ReadWriteOnceWithFSType, Persistent only", () => {
    expect(csiDriverPolicy(undefined)).toEqual({
      attachRequired: true,
      podInfoOnMount: false,
      fsGroupPolicy: "ReadWriteOnceWithFSType",
      volumeLifecycleModes: ["Persistent"],
    });
    expect(() => checkVolumeLifecycleMode("drv", "Ephemeral", csiDriverPolicy(undefined))).toThrow(
      'volume mode "Ephemeral" not supported by driver drv (only supports ["Persistent"])',
    );
  });
  test("the object's fields", () => {
    const p = csiDriverPolicy({
      metadata: { name: "d" },
      spec: { attachRequired: false, podInfoOnMount: true, fsGroupPolicy: "File", volumeLifecycleModes: ["Persistent", "Ephemeral"] },
    });
    expect(p).toEqual({ attachRequired: false, podInfoOnMount: true, fsGroupPolicy: "File", volumeLifecycleModes: ["Persistent", "Ephemeral"] });
    checkVolumeLifecycleMode("d", "Ephemeral", p);
  });
  test("an attachment: its metadata once attached; otherwise an error naming it", () => {
    const va = (status: object, meta: object = {}) => volumeAttachmentSchema.parse({ metadata: { name: "csi-x", ...meta }, status });
    expect(attachedMetadata(va({ attached: true, attachmentMetadata: { dev: "/dev/x" } }), "csi-x", "d", "h")).toEqual({ dev: "/dev/x" });
    expect(() => attachedMetadata(undefined, "csi-x", "d", "h")).toThrow("volume attachment csi-x for volume h of CSI driver d not found");
    expect(() => attachedMetadata(va({ attached: false }), "csi-x", "d", "h")).toThrow(
      "timed out waiting for external-attacher of d CSI driver to attach volume h (volume attachment csi-x not attached)",
    );
    expect(() => attachedMetadata(va({ attachError: { message: "boom" } }), "csi-x", "d", "h")).toThrow("attachment for h failed: boom");
    expect(() => attachedMetadata(va({ attached: true }, { deletionTimestamp: "2026-01-01T00:00:00Z" }), "csi-x", "d", "h")).toThrow(
      "volume attachment csi-x is being deleted",
    );
  });
});
