// Raw block CSI volumes against a real control plane (test/support/upstream): the test's CSI driver
// (test/support/fake-csi-driver.ts) makes a Block volume a loop device over a sparse file, staged with the
// `block` access type and published by bind-mounting the device on the file at the target path. A pod
// whose Block claim is bound to the driver's Block PV gets the device at its volumeDevices path, writes
// it and reads it back; on the host the loop device holds the bytes; the summary has the volume's size
// from the driver's NodeGetVolumeStats (GET_VOLUME_STATS) on the pod's global map file. While the pod runs,
// the device is bound on <globalMapPath>/<pod UID> with a loop device on it (the fd lock); the pod deleted,
// the loop device is detached, the volume unpublished, then unstaged, and nothing stays mounted, linked or
// attached. Needs root, containerd, losetup and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, lstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { blockGlobalMapPath, blockPublishPath, blockStagingPath, blockVolumeDataDir, podDeviceMapPath } from "../../../src/pod/volumes/csi/csi-block.ts";
import { execCommand } from "../../../src/pod/volumes/exec.ts";
import { mountPointsUnder } from "../../../src/pod/volumes/mount-points.ts";
import { loopDevicesUnder } from "../../../src/pod/volumes/volume-path-handler.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { startRegisteredCSIDriver, type FakeCSIDriver } from "../../support/fake-csi-driver.ts";
import { BLOCK_BYTES } from "../../support/fake-csi-node-volumes.ts";
import { persistentVolume, persistentVolumeClaim } from "../../support/persistent-volumes.ts";
import { appPod, startUpstreamCluster, summaryVolume, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the CSI block volume tests: ${bin.why}`);

const DRIVER = "block.csi.bunlet.test";
const HANDLE = "blk-0001";
const WORD = "csi-block-ok";

/** Whether a path exists, a dangling link included. */
const present = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** The loop devices attached to `path`, as `losetup -j` lists them. */
const loopsOf = async (path: string) => (await execCommand("losetup", ["-j", path])).output.trim();

/** The first bytes of a device, read on the host. */
function head(device: string, bytes: number): string {
  const fd = openSync(device, "r");
  try {
    const buf = Buffer.alloc(bytes);
    readSync(fd, buf, 0, bytes, 0);
    return buf.toString();
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(!canRunContainerd() || !bin.dir)("CSI raw block volumes", () => {
  let c: UpstreamCluster;
  let driver: FakeCSIDriver | undefined;
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  const called = (method: string) => driver!.nodeCalls.filter((x) => x.method === method);

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "csiblk", binDir: bin.dir!, config: ["syncFrequency: 5s", "volumeStatsAggPeriod: 5s"] });
    driver = await startRegisteredCSIDriver(c.n.rootDir, DRIVER, { capabilities: ["STAGE_UNSTAGE_VOLUME", "GET_VOLUME_STATS"] });
    await apply({
      apiVersion: "storage.k8s.io/v1",
      kind: "CSIDriver",
      metadata: { name: DRIVER },
      spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ["Persistent"] },
    });
  }, 240_000);
  afterAll(async () => {
    await c?.cp.kubectl("delete", "pod", "csi-block-user", "--ignore-not-found", "--force", "--grace-period=0").catch(() => {});
    // The driver unmounts what it mounted and detaches its loop devices.
    await driver?.stop().catch(() => {});
    const rootDir = c?.n.rootDir;
    await c?.stop();
    // A fd lock the teardown left (a failed test) is detached before its global map file is unmounted.
    if (rootDir) for (const loop of await loopDevicesUnder(rootDir)) await execCommand("losetup", ["-d", loop]);
    if (rootDir) for (const mp of mountPointsUnder(rootDir)) Bun.spawnSync(["umount", "-l", mp]);
  }, 120_000);

  test("a Block PV of the driver: the device at the container's devicePath, written and read; the pod deleted, unpublished, unstaged, nothing left", async () => {
    await apply(persistentVolume("csi-block-pv", { csi: { driver: DRIVER, volumeHandle: HANDLE } }, { storage: "16Mi", volumeMode: "Block" }));
    await apply(persistentVolumeClaim("csi-block-claim", { volumeName: "csi-block-pv", storage: "16Mi", volumeMode: "Block" }));
    await until("the claim Bound", async () => (await c.json("get", "pvc", "csi-block-claim")).status?.phase === "Bound", 90_000, { intervalMs: 500 });
    const script = `test -b /dev/xvda && printf ${WORD} | dd of=/dev/xvda conv=notrunc,fsync 2>/dev/null && test "$(dd if=/dev/xvda bs=${WORD.length} count=1 2>/dev/null)" = ${WORD}`;
    await apply(
      appPod(
        "csi-block-user",
        c.n.ctd.images.busybox,
        { command: ["sh", "-c", `${script} && exec sleep 3600`], volumeDevices: [{ name: "data", devicePath: "/dev/xvda" }] },
        { restartPolicy: "Never", automountServiceAccountToken: false, volumes: [{ name: "data", persistentVolumeClaim: { claimName: "csi-block-claim" } }] },
      ),
    );
    const running = await c.podInPhase("csi-block-user", "Running", 120_000);
    const uid = running.metadata.uid as string;
    const root = c.n.rootDir;
    const staging = blockStagingPath(root, "csi-block-pv");
    const publish = blockPublishPath(root, "csi-block-pv", uid);
    const block = { accessMode: { mode: "SINGLE_NODE_WRITER" }, block: {} };
    expect(called("NodeStageVolume").at(-1)!.request).toMatchObject({ volumeId: HANDLE, stagingTargetPath: staging, volumeCapability: block });
    const published = called("NodePublishVolume").at(-1)!.request;
    expect(published).toMatchObject({ volumeId: HANDLE, stagingTargetPath: staging, targetPath: publish, readonly: false, volumeCapability: block });
    expect(published.volumeContext).toMatchObject({ "csi.storage.k8s.io/pod.name": "csi-block-user", "csi.storage.k8s.io/ephemeral": "false" });
    const link = podDeviceMapPath(root, uid, "csi-block-pv");
    expect(present(link)).toBe(true);
    // upstream MapBlockVolume: the device bound on the global map file, a loop device on it (the fd lock).
    const globalMapFile = join(blockGlobalMapPath(root, "csi-block-pv"), uid);
    expect(lstatSync(globalMapFile).isBlockDevice()).toBe(true);
    expect(mountPointsUnder(blockGlobalMapPath(root, "csi-block-pv"))).toEqual([globalMapFile]);
    expect(await loopsOf(globalMapFile)).toMatch(/^\/dev\/loop\d+: .*/);
    const loop = driver!.volumes.loopDevices().get(HANDLE)!;
    await until("the container's write on the device", () => head(loop, WORD.length) === WORD, 30_000, { intervalMs: 300 });
    // upstream csiBlockMapper's metrics: the driver's figures, with the claim.
    const vol = await summaryVolume(c, uid, "data");
    expect(vol).toMatchObject({ pvcRef: { name: "csi-block-claim", namespace: "default" }, capacityBytes: BLOCK_BYTES });

    await c.cp.kubectl("delete", "pod", "csi-block-user", "--wait=true", "--timeout=60s");
    await until("unpublished and unstaged", () => called("NodeUnstageVolume").length > 0, 60_000, { intervalMs: 200 });
    const order = driver!.nodeCalls.map((x) => x.method).filter((m) => m.startsWith("NodeUn"));
    expect(order).toEqual(["NodeUnpublishVolume", "NodeUnstageVolume"]);
    expect(called("NodeUnpublishVolume")[0]!.request).toMatchObject({ volumeId: HANDLE, targetPath: publish });
    expect(called("NodeUnstageVolume")[0]!.request).toMatchObject({ volumeId: HANDLE, stagingTargetPath: staging });
    expect(driver!.volumes.mounted()).toEqual([]);
    expect(driver!.volumes.loopDevices().size).toBe(0);
    expect(mountPointsUnder(join(root, "plugins", "kubernetes.io", "csi"))).toEqual([]);
    expect(mountPointsUnder(join(root, "pods", uid))).toEqual([]);
    for (const p of [link, publish, staging, blockVolumeDataDir(root, "csi-block-pv"), globalMapFile]) expect(present(p)).toBe(false);
    expect(await loopDevicesUnder(root)).toEqual([]);
  }, 300_000);
});
