// persistentVolumeClaim volumes resolved to their PV as upstream's desired state of world populator
// does (getPVCExtractPV, getPVSpec, FindPluginBySpec), with its error texts; the local PV's pure checks
// (the path, the fsGroup root match, other pods' mounts); a claim's hostPath PV set up through
// setUpPodVolume.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkLocalPath, otherPodMounts, rootMatchesFsGroup } from "../../../src/pod/volumes/local-volume.ts";
import {
  boundVolumeName,
  claimedVolume,
  podVolumeNames,
  usedVolumeNames,
  persistentVolumeClaimSchema,
  persistentVolumeSchema,
  persistentVolumeSource,
  unmountedVolumesMessage,
  type PersistentVolumeObject,
} from "../../../src/pod/volumes/persistent-volume.ts";
import { setUpPodVolume, type VolumeSetUpContext } from "../../../src/pod/volumes/setup.ts";

const pvc = (o: { phase?: string; volumeName?: string; deleting?: boolean; finalizers?: string[]; uid?: string } = {}) =>
  persistentVolumeClaimSchema.parse({
    metadata: { name: "data", uid: o.uid ?? "claim-uid", ...(o.deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}), finalizers: o.finalizers },
    spec: { volumeName: o.volumeName },
    status: { phase: o.phase },
  });
const pv = (spec: Record<string, unknown>, name = "pv1"): PersistentVolumeObject =>
  persistentVolumeSchema.parse({ metadata: { name }, spec: { claimRef: { uid: "claim-uid" }, ...spec } });

describe("boundVolumeName (upstream getPVCExtractPV)", () => {
  test.each([
    ["bound", pvc({ phase: "Bound", volumeName: "pv1" }), "pv1"],
    ["pending", pvc({ phase: "Pending" }), "PVC is not bound"],
    ["no phase", pvc(), "PVC is not bound"],
    ["lost", pvc({ phase: "Lost", volumeName: "pv1" }), "PVC is not bound"],
    ["bound without a volume name", pvc({ phase: "Bound" }), "PVC has empty pvc.Spec.VolumeName"],
    ["being deleted, no protection", pvc({ phase: "Bound", volumeName: "pv1", deleting: true }), "PVC is being deleted"],
    ["being deleted, protected", pvc({ phase: "Bound", volumeName: "pv1", deleting: true, finalizers: ["kubernetes.io/pvc-protection"] }), "pv1"],
  ])("%s → %s", (_n, claim, want) => {
    let got: string;
    try {
      got = boundVolumeName(claim);
    } catch (e) {
      got = (e as Error).message;
    }
    expect(got).toBe(want);
  });
});

describe("persistentVolumeSource (upstream FindPluginBySpec)", () => {
  test("hostPath and local PVs are mounted by their plugins", () => {
    expect(persistentVolumeSource(pv({ hostPath: { path: "/srv/a", type: "DirectoryOrCreate" } }), "pv1")).toEqual({
      plugin: "kubernetes.io/host-path",
      hostPath: { path: "/srv/a", type: "DirectoryOrCreate" },
    });
    expect(persistentVolumeSource(pv({ local: { path: "/mnt/disk1" } }), "pv1")).toEqual({
      plugin: "kubernetes.io/local-volume",
      local: { path: "/mnt/disk1" },
    });
    const csi = pv({ csi: { driver: "ebs.csi.aws.com", volumeHandle: "vol-1" }, accessModes: ["ReadWriteOnce"] });
    expect(persistentVolumeSource(csi, "pv1")).toEqual({
      plugin: "kubernetes.io/csi",
      csi: { driver: "ebs.csi.aws.com", volumeHandle: "vol-1" },
      accessModes: ["ReadWriteOnce"],
    });
  });
  test.each([
    ["nfs", { nfs: { server: "10.0.0.1", path: "/export" } }],
    ["iscsi", { iscsi: { targetPortal: "10.0.0.1:3260", iqn: "iqn.x", lun: 0 } }],
    ["none", {}],
  ])("a %s PV is refused naming the PV and its source", (source, spec) => {
    expect(() => persistentVolumeSource(pv(spec, "pv-x"), "pv-x")).toThrow(
      `failed to get Plugin from volumeSpec for volume "pv-x" err=no volume plugin matched: PV pv-x has a ${source} volume source; bunlet mounts hostPath, local and csi persistent volumes`,
    );
  });
});

describe("claimedVolume (upstream createVolumeSpec)", () => {
  const bound = pvc({ phase: "Bound", volumeName: "pv1" });
  const resolve = (claim: ReturnType<typeof pvc> | Error, vol: PersistentVolumeObject | Error) => {
    try {
      return claimedVolume("data", "ns", "claim", claim, () => vol);
    } catch (e) {
      return (e as Error).message;
    }
  };
  test("a bound claim and its PV: the PV's name, plugin and mount options", () => {
    expect(resolve(bound, pv({ local: { path: "/mnt/d" } }, "pv1"))).toMatchObject({
      pvName: "pv1",
      source: { plugin: "kubernetes.io/local-volume", local: { path: "/mnt/d" } },
      mountOptions: [],
      volumeMode: "Filesystem",
    });
    expect(resolve(bound, pv({ hostPath: { path: "/srv" }, mountOptions: ["ro"] }))).toMatchObject({ mountOptions: ["ro"] });
  });
  test.each([
    [
      "the claim not read",
      new Error('persistentvolumeclaims "claim" not found'),
      pv({}),
      'failed to fetch PVC from API server: persistentvolumeclaims "claim" not found',
    ],
    ["the claim pending", pvc({ phase: "Pending" }), pv({}), "PVC is not bound"],
    ["the PV not read", bound, new Error("forbidden"), "failed to fetch PV pv1 from API server: forbidden"],
    [
      "the PV bound to nothing",
      bound,
      persistentVolumeSchema.parse({ metadata: { name: "pv1" }, spec: { local: { path: "/d" } } }),
      "found PV object pv1 but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim",
    ],
    [
      "the PV bound to another claim",
      pvc({ phase: "Bound", volumeName: "pv1", uid: "other" }),
      pv({ local: { path: "/d" } }),
      "found PV object pv1 but its pv.Spec.ClaimRef.UID claim-uid does not point to claim.UID other",
    ],
  ])("%s: upstream's error, for the claim", (_n, claim, vol, why) => {
    expect(resolve(claim, vol)).toBe(`error processing PVC ns/claim: ${why}`);
  });
  test("a Block PV cannot be in volumeMounts, a Filesystem one not in volumeDevices (upstream's texts)", () => {
    expect(resolve(bound, pv({ local: { path: "/dev/sdb" }, volumeMode: "Block" }))).toBe("volume data has volumeMode Block, but is specified in volumeMounts");
    const asDevice = (vol: PersistentVolumeObject) => {
      try {
        return claimedVolume("data", "ns", "claim", bound, () => vol, undefined, { mounted: false, device: true });
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(asDevice(pv({ local: { path: "/mnt/d" } }))).toBe("volume data has volumeMode Filesystem, but is specified in volumeDevices");
    expect(asDevice(pv({ local: { path: "/dev/sdb" }, volumeMode: "Block" }))).toMatchObject({ pvName: "pv1", volumeMode: "Block" });
  });
});

test("podVolumeNames / usedVolumeNames: every container kind's volumeMounts and volumeDevices", () => {
  const pod = {
    spec: {
      containers: [{ volumeMounts: [{ name: "a" }], volumeDevices: [{ name: "d" }] }],
      initContainers: [{ volumeMounts: [{ name: "b" }] }],
      ephemeralContainers: [{ volumeMounts: [{ name: "c" }] }, {}],
    },
  };
  const { mounts, devices } = podVolumeNames(pod);
  expect([...mounts].sort()).toEqual(["a", "b", "c"]);
  expect([...devices]).toEqual(["d"]);
  expect([...usedVolumeNames(pod)].sort()).toEqual(["a", "b", "c", "d"]);
});

test("unmountedVolumesMessage: upstream WaitForAttachAndMount's error", () => {
  expect(unmountedVolumesMessage(["kube-api-access", "data"], [{ volume: "data", error: "error processing PVC ns/data: PVC is not bound" }])).toBe(
    "unmounted volumes=[data kube-api-access], unattached volumes=[], failed to process volumes=[data]: error processing PVC ns/data: PVC is not bound",
  );
});

describe("local PV checks", () => {
  const dir = mkdtempSync(join(tmpdir(), "bunlet-local-pv-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  test("the path must be an existing directory (upstream MountDevice)", () => {
    expect(() => checkLocalPath(dir)).not.toThrow();
    expect(() => checkLocalPath(join(dir, "missing"))).toThrow(`path "${join(dir, "missing")}" does not exist`);
    writeFileSync(join(dir, "f"), "");
    expect(() => checkLocalPath(join(dir, "f"))).toThrow("only directory and block device are supported");
  });
  const st = (gid: number, mode: number, isDir = true) => ({ gid, mode, isDirectory: () => isDir });
  test.each([
    ["group, rw, x and setgid", true, st(2000, 0o42770), false],
    ["another group", false, st(1000, 0o42770), false],
    ["no setgid", false, st(2000, 0o40770), false],
    ["no group write", false, st(2000, 0o42750), false],
    ["no group write, read-only", true, st(2000, 0o42750), true],
    ["a file", false, st(2000, 0o102770, false), false],
  ])("rootMatchesFsGroup: %s → %p", (_n, want, s, ro) => expect(rootMatchesFsGroup(s, 2000, ro)).toBe(want));
  test("otherPodMounts: the PV's mounts of other pods only", () => {
    const mps = [
      "/var/lib/kubelet/pods/a/volumes/kubernetes.io~local-volume/pv1",
      "/var/lib/kubelet/pods/b/volumes/kubernetes.io~local-volume/pv1",
      "/var/lib/kubelet/pods/c/volumes/kubernetes.io~local-volume/pv2",
      "/mnt/elsewhere/volumes/kubernetes.io~local-volume/pv1",
    ];
    expect(otherPodMounts(mps, "/var/lib/kubelet/pods", "a", "pv1")).toEqual(["/var/lib/kubelet/pods/b/volumes/kubernetes.io~local-volume/pv1"]);
  });
});

describe("setUpPodVolume: a claim's hostPath PV", () => {
  const root = mkdtempSync(join(tmpdir(), "bunlet-pvc-hostpath-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const pod = { metadata: { name: "p", namespace: "ns", uid: "u1" }, spec: { containers: [] } };
  const ctx = (claim: unknown): VolumeSetUpContext =>
    ({
      pod,
      objects: { namespace: "ns", secrets: new Map(), configMaps: new Map(), tokens: new Map(), claims: new Map([["data", claim]]) },
      fsGroup: 4321,
    }) as unknown as VolumeSetUpContext;
  const volume = { name: "data", persistentVolumeClaim: { claimName: "claim" } };
  test("the PV's path, created for DirectoryOrCreate; no fsGroup ownership (upstream's hostPath plugin sets none)", () => {
    const path = join(root, "made");
    const claim = {
      pvName: "pv1",
      source: { plugin: "kubernetes.io/host-path", hostPath: { path, type: "DirectoryOrCreate" } },
      mountOptions: [],
      volumeMode: "Filesystem",
    };
    expect(setUpPodVolume(root, volume, ctx(claim))).toBe(path);
    expect(statSync(path).isDirectory()).toBe(true);
    expect(statSync(path).gid).not.toBe(4321);
  });
  test("the type is checked as a hostPath volume's", () => {
    const path = join(root, "file");
    writeFileSync(path, "");
    const claim = {
      pvName: "pv1",
      source: { plugin: "kubernetes.io/host-path", hostPath: { path, type: "Directory" } },
      mountOptions: [],
      volumeMode: "Filesystem",
    };
    expect(() => setUpPodVolume(root, volume, ctx(claim))).toThrow(`hostPath type check failed: ${path} is not a directory`);
  });
  test("a claim not resolved throws its processing error; none fetched is upstream's no-client error", () => {
    expect(() => setUpPodVolume(root, volume, ctx(new Error("error processing PVC ns/claim: PVC is not bound")))).toThrow("PVC is not bound");
    expect(() => setUpPodVolume(root, volume, { pod } as unknown as VolumeSetUpContext)).toThrow(
      "error processing PVC ns/claim: failed to fetch PVC from API server: no kubeClient defined",
    );
  });
});
