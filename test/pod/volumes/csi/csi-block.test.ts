import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCSIVolumeManager } from "../../../../src/pod/volumes/csi/csi-mounter.ts";
import {
  blockGlobalMapPath,
  blockPublishDir,
  blockPublishPath,
  blockStagingPath,
  blockVolumeDataDir,
  podBlockVolumes,
  podDeviceMapPath,
  volumeDevicePluginDir,
} from "../../../../src/pod/volumes/csi/csi-block.ts";
import { attachmentName } from "../../../../src/pod/volumes/csi/csi-util.ts";
import { blockVolumeCapability, persistentCSIVolumeSpec } from "../../../../src/pod/volumes/csi/volume-spec.ts";
import { MapVolumeError, volumeOperationStep } from "../../../../src/pod/volumes/operation-error.ts";
import { recordingNodeClient } from "../../../support/fake-csi-node-client.ts";
import { fakeBlockVolumePathHandler } from "../fake-volume-path-handler.ts";

const pod = (uid: string) => ({ metadata: { name: `p-${uid}`, namespace: "ns", uid }, spec: { serviceAccountName: "default" } });
const spec = persistentCSIVolumeSpec("pv-b", { driver: "drv", volumeHandle: "vol-b" }, { accessModes: ["ReadWriteOnce"], mountOptions: [] }, false);

/** A block device of this machine for the fake driver to "publish" (a symlink to it stats as one). */
const someBlockDevice = (() => {
  try {
    return readdirSync("/dev")
      .map((n) => join("/dev", n))
      .find((p) => statSync(p).isBlockDevice());
  } catch {
    return undefined;
  }
})();

/** A driver that makes each publish path a link to a block device. */
const blockTargets = { publish: (p: string) => symlinkSync(someBlockDevice!, p), unpublish: (p: string) => rmSync(p, { force: true }) };

describe("CSI raw block volume paths (upstream csi_block.go, csi_util.go)", () => {
  test.each([
    ["volumeDevicePluginDir", volumeDevicePluginDir("/k"), "/k/plugins/kubernetes.io/csi/volumeDevices"],
    ["staging", blockStagingPath("/k", "pv-b"), "/k/plugins/kubernetes.io/csi/volumeDevices/staging/pv-b"],
    ["publish dir", blockPublishDir("/k", "pv-b"), "/k/plugins/kubernetes.io/csi/volumeDevices/publish/pv-b"],
    ["publish", blockPublishPath("/k", "pv-b", "u1"), "/k/plugins/kubernetes.io/csi/volumeDevices/publish/pv-b/u1"],
    ["data", blockVolumeDataDir("/k", "pv-b"), "/k/plugins/kubernetes.io/csi/volumeDevices/pv-b/data"],
    ["global map path", blockGlobalMapPath("/k", "pv-b"), "/k/plugins/kubernetes.io/csi/volumeDevices/pv-b/dev"],
    ["pod device map path", podDeviceMapPath("/k", "u1", "pv-b"), "/k/pods/u1/volumeDevices/kubernetes.io~csi/pv-b"],
  ])("%s", (_name, got, want) => expect(got).toBe(want));

  test.each([
    [["ReadWriteOnce"], false, "SINGLE_NODE_WRITER"],
    [["ReadWriteOnce"], true, "SINGLE_NODE_MULTI_WRITER"],
    [["ReadWriteMany"], false, "MULTI_NODE_MULTI_WRITER"],
  ])("block capability of %p (SINGLE_NODE_MULTI_WRITER %p): %s", (accessModes, snmw, mode) => {
    expect(blockVolumeCapability({ ...spec, accessModes }, snmw) as object).toEqual({ block: {}, accessMode: { mode } });
  });
});

describe.skipIf(someBlockDevice === undefined)(
  "the CSI block mapper (upstream csiBlockMapper SetUpDevice, MapPodDevice, UnmapPodDevice, TearDownDevice)",
  () => {
    let root = "";
    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), "csi-block-"));
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));
    /** The manager over a recording driver `drv` (at /run/drv.sock when registered) and a fake path handler. */
    const manager = (caps: string[], registered = true) => {
      const objects: Record<string, unknown> = { "/apis/storage.k8s.io/v1/csidrivers/drv": { metadata: { name: "drv" }, spec: { attachRequired: false } } };
      const f = recordingNodeClient(caps, blockTargets);
      const blk = fakeBlockVolumePathHandler(root);
      const m = createCSIVolumeManager({
        rootDir: root,
        nodeName: () => "n1",
        driverEndpoint: (d) => (registered && d === "drv" ? "/run/drv.sock" : undefined),
        getObject: async (path) => objects[path],
        client: f.client,
        blkUtil: blk.blk,
      });
      return { ...f, m, blk };
    };

    test("staged once with the block access type, published per pod at a file, linked from the pod, bound and locked; torn down in upstream's order", async () => {
      const { calls, m, blk } = manager(["STAGE_UNSTAGE_VOLUME"]);
      const link = await m.mapBlock({ pod: pod("u1"), spec });
      const staging = blockStagingPath(root, "pv-b");
      const publish = blockPublishPath(root, "pv-b", "u1");
      expect(link).toBe(podDeviceMapPath(root, "u1", "pv-b"));
      expect(lstatSync(link).isSymbolicLink() && readlinkSync(link)).toBe(publish);
      expect(statSync(link).isBlockDevice()).toBe(true);
      const capability = { block: {}, accessMode: { mode: "SINGLE_NODE_WRITER" } };
      expect(calls.map((c) => c.method)).toEqual(["stage", "publish"]);
      // upstream MapBlockVolume of the publish path: the pod's link, the global map file, its loop device.
      const global = "plugins/kubernetes.io/csi/volumeDevices/pv-b/dev/u1";
      expect(blk.calls).toEqual(["link pods/u1/volumeDevices/kubernetes.io~csi/pv-b", `bind ${global}`, `attach ${global}`]);
      expect(readlinkSync(join(blockGlobalMapPath(root, "pv-b"), "u1"))).toBe(publish);
      expect(calls[0]!.req).toEqual({ volumeId: "vol-b", publishContext: {}, stagingTargetPath: staging, volumeCapability: capability, volumeContext: {} });
      expect(calls[1]!.req).toEqual({
        volumeId: "vol-b",
        publishContext: {},
        stagingTargetPath: staging,
        targetPath: publish,
        volumeCapability: capability,
        readonly: false,
        volumeContext: {},
      });
      expect(JSON.parse(readFileSync(join(blockVolumeDataDir(root, "pv-b"), "vol_data.json"), "utf8"))).toEqual({
        specVolumeID: "pv-b",
        volumeHandle: "vol-b",
        driverName: "drv",
        nodeName: "n1",
        attachmentID: attachmentName("vol-b", "drv", "n1"),
      });
      // Mapped again (a later sync, a restart): nothing called.
      expect(await m.mapBlock({ pod: pod("u1"), spec })).toBe(link);
      // A second pod: published, not staged again.
      await m.mapBlock({ pod: pod("u2"), spec: { ...spec, readOnly: true } });
      expect(calls.map((c) => c.method)).toEqual(["stage", "publish", "publish"]);
      expect(calls[2]!.req.readonly).toBe(true);
      expect(podBlockVolumes(root, "u2")).toEqual(["pv-b"]);

      calls.length = 0;
      blk.calls.length = 0;
      await m.tearDownPod("u1");
      expect(calls).toEqual([{ method: "unpublish", req: { volumeId: "vol-b", targetPath: publish } }]);
      // upstream UnmapBlockVolume before UnmapPodDevice: the fd lock, the link, the global map file.
      expect(blk.calls).toEqual([`detach ${global}`, "unlink pods/u1/volumeDevices/kubernetes.io~csi/pv-b", `unbind ${global}`]);
      expect([...blk.loops.keys()]).toEqual(["plugins/kubernetes.io/csi/volumeDevices/pv-b/dev/u2"]);
      expect(existsSync(join(root, "pods", "u1", "volumeDevices", "kubernetes.io~csi"))).toBe(false);
      await m.tearDownPod("u2");
      expect(calls.map((c) => c.method)).toEqual(["unpublish", "unpublish", "unstage"]);
      expect(calls[2]!.req).toEqual({ volumeId: "vol-b", stagingTargetPath: staging });
      expect(blk.loops.size).toBe(0);
      const left = [staging, blockPublishDir(root, "pv-b"), blockVolumeDataDir(root, "pv-b"), blockGlobalMapPath(root, "pv-b")];
      expect(left.filter((p) => existsSync(p))).toEqual([]);
    });

    test("a driver without STAGE_UNSTAGE_VOLUME: published only (the staging path still named), never unstaged", async () => {
      const { calls, m } = manager([]);
      await m.mapBlock({ pod: pod("u1"), spec });
      expect(calls.map((c) => c.method)).toEqual(["publish"]);
      expect(calls[0]!.req.stagingTargetPath).toBe(blockStagingPath(root, "pv-b"));
      await m.tearDownPod("u1");
      expect(calls.map((c) => c.method)).toEqual(["publish", "unpublish"]);
      expect(existsSync(blockVolumeDataDir(root, "pv-b"))).toBe(false);
    });

    test("failures name upstream's step: SetUpDevice for the stage or an unregistered driver, MapPodDevice for the publish", async () => {
      const f = manager(["STAGE_UNSTAGE_VOLUME"]);
      f.client.nodeStageVolume = async () => {
        throw new Error("NodeStageVolume: grpc code 13: no disk");
      };
      const staged = await f.m.mapBlock({ pod: pod("u1"), spec }).catch((e: Error) => e);
      expect(staged).toBeInstanceOf(MapVolumeError);
      expect(volumeOperationStep(staged as Error)).toBe("MapVolume.SetUpDevice");
      expect((staged as Error).message).toBe("NodeStageVolume: grpc code 13: no disk");
      expect(existsSync(blockStagingPath(root, "pv-b"))).toBe(false);

      const g = manager([]);
      g.client.nodePublishVolume = async () => {
        throw new Error("NodePublishVolume: grpc code 13: busy");
      };
      const published = await g.m.mapBlock({ pod: pod("u1"), spec }).catch((e: Error) => e);
      expect(volumeOperationStep(published as Error)).toBe("MapVolume.MapPodDevice");
      expect(existsSync(blockPublishPath(root, "pv-b", "u1"))).toBe(false);

      const h = manager([], false);
      const unregistered = await h.m.mapBlock({ pod: pod("u1"), spec }).catch((e: Error) => e);
      expect(volumeOperationStep(unregistered as Error)).toBe("MapVolume.SetUpDevice");
      expect((unregistered as Error).message).toBe(
        "kubernetes.io/csi: blockMapper.SetUpDevice failed to get CSI client: driver name drv not found in the list of registered CSI drivers",
      );
    });

    test("volume stats: NodeGetVolumeStats at the pod's global map file, with the staging path when the driver stages", async () => {
      const asked: string[][] = [];
      const usage = [{ unit: "BYTES" as const, total: 1 << 20, available: 0, used: 0 }];
      const stats = (caps: string[]) => {
        const f = manager(caps);
        f.client.nodeGetVolumeStats = async (...args) => (asked.push(args), usage);
        return f.m;
      };
      const staged = stats(["STAGE_UNSTAGE_VOLUME", "GET_VOLUME_STATS"]);
      expect(await staged.blockVolumeStats("u1", "pv-b")).toBeUndefined(); // not mapped
      await staged.mapBlock({ pod: pod("u1"), spec });
      expect(await staged.blockVolumeStats("u1", "pv-b")).toEqual(usage);
      expect(await staged.blockVolumeStats("u2", "pv-b")).toBeUndefined(); // not published for that pod
      expect(asked).toEqual([["/run/drv.sock", "vol-b", join(blockGlobalMapPath(root, "pv-b"), "u1"), blockStagingPath(root, "pv-b")]]);
      await staged.tearDownPod("u1");
      const unstaged = stats(["GET_VOLUME_STATS"]);
      await unstaged.mapBlock({ pod: pod("u1"), spec });
      expect(await unstaged.blockVolumeStats("u1", "pv-b")).toEqual(usage);
      expect(asked[1]![3]).toBe("");
      await unstaged.tearDownPod("u1");
      const without = stats([]);
      await without.mapBlock({ pod: pod("u1"), spec });
      expect(await without.blockVolumeStats("u1", "pv-b")).toBeUndefined(); // no GET_VOLUME_STATS
      expect(asked.length).toBe(2);
      await without.tearDownPod("u1");
    });

    test("a publish path the driver did not make a block device fails MapPodDevice", async () => {
      const f = manager([]);
      f.client.nodePublishVolume = async () => {};
      const err = await f.m.mapBlock({ pod: pod("u1"), spec }).catch((e: Error) => e);
      expect(volumeOperationStep(err as Error)).toBe("MapVolume.MapPodDevice");
      expect((err as Error).message).toContain("is not a block device");
    });
  },
);
