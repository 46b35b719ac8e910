// CSI volumes against a real control plane (test/support/upstream): the test's CSI driver
// (test/support/fake-csi-driver.ts, bind mounts of a directory per volume) registers with bunlet; its
// CSIDriver says attachRequired false, podInfoOnMount true, Persistent and Ephemeral. A pod whose claim
// is bound to the driver's PV gets the volume staged at the global mount path and published into the
// pod, and writes through it into the driver's data; the pod deleted, the volume is unpublished and
// unstaged and nothing stays mounted. A pod with an inline csi volume gets it published (never staged)
// with the pod's identity in the volume context. A pod deleted while bunlet is down is torn down by the
// next bunlet from the volume's vol_data.json once the driver has registered again. A second driver's
// CSIDriver requires attach: kube-controller-manager's attach/detach controller makes the VolumeAttachment,
// the test marks it attached as an external attacher would, and bunlet publishes only then, reporting the
// volume in the Node's volumesInUse until the pod is gone, when the controller detaches it. A PV naming
// a NodeStage and a NodePublish Secret: the pod waits with upstream's FailedMount while one is missing,
// then the driver gets each Secret's data with its call. Needs root,
// containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { deviceMountPath, podMountPath, uniqueVolumeName } from "../../../src/pod/volumes/csi/index.ts";
import { attachmentName, ephemeralVolumeHandle } from "../../../src/pod/volumes/csi/csi-util.ts";
import { mountPointsUnder } from "../../../src/pod/volumes/mount-points.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { createFakeCSIDriver, type FakeCSIDriver } from "../../support/fake-csi-driver.ts";
import { appPod, startUpstreamCluster, summaryVolume, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the CSI volume tests: ${bin.why}`);

const DRIVER = "volumes.csi.bunlet.test";
const HANDLE = "vol-0001";
const ATTACHED_DRIVER = "attached.csi.bunlet.test";

describe.skipIf(!canRunContainerd() || !bin.dir)("CSI volumes", () => {
  let c: UpstreamCluster;
  let driver: FakeCSIDriver | undefined;
  let attached: FakeCSIDriver | undefined;
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  const deletePod = (name: string) => c.cp.kubectl("delete", "pod", name, "--wait=true", "--timeout=60s");
  const called = (method: string) => driver!.nodeCalls.filter((x) => x.method === method);
  const pod = (name: string, script: string, volume: object) =>
    appPod(
      name,
      c.n.ctd.images.busybox,
      { command: ["sh", "-c", `${script} && exec sleep 3600`], volumeMounts: [{ name: "data", mountPath: "/data" }] },
      { restartPolicy: "Never", automountServiceAccountToken: false, volumes: [{ name: "data", ...volume }] },
    );

  /** A Retain PV of `csi` and a claim pre-bound to it, once the claim is Bound. */
  async function boundClaim(pvName: string, claimName: string, csi: object): Promise<void> {
    await apply({
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name: pvName },
      spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], persistentVolumeReclaimPolicy: "Retain", storageClassName: "", csi },
    });
    await apply({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: claimName, namespace: "default" },
      spec: { accessModes: ["ReadWriteOnce"], storageClassName: "", resources: { requests: { storage: "1Gi" } }, volumeName: pvName },
    });
    await until("the claim Bound", async () => (await c.json("get", "pvc", claimName)).status?.phase === "Bound", 90_000, { intervalMs: 500 });
  }

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "csivol", binDir: bin.dir!, config: ["syncFrequency: 5s"] });
    driver = createFakeCSIDriver({
      name: DRIVER,
      registrationSocket: join(c.n.rootDir, "plugins_registry", `${DRIVER}-reg.sock`),
      csiSocket: join(c.n.rootDir, "plugins", DRIVER, "csi.sock"),
      nodeId: "node-1",
      capabilities: ["STAGE_UNSTAGE_VOLUME", "GET_VOLUME_STATS"],
    });
    await driver.start();
    await until("the driver registered", () => driver!.statuses.some((s) => s.pluginRegistered), 30_000, { intervalMs: 200 });
    await apply({
      apiVersion: "storage.k8s.io/v1",
      kind: "CSIDriver",
      metadata: { name: DRIVER },
      spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ["Persistent", "Ephemeral"] },
    });
  }, 240_000);
  afterAll(async () => {
    await driver?.stop().catch(() => {});
    await attached?.stop().catch(() => {});
    const rootDir = c?.n.rootDir;
    await c?.stop();
    // Whatever a failed test left mounted under the node's directory (all of it the test's own).
    if (rootDir) for (const mp of mountPointsUnder(rootDir)) Bun.spawnSync(["umount", "-l", mp]);
  }, 120_000);

  test("a PV of the driver: staged, published, written through; the pod deleted, unpublished and unstaged", async () => {
    await boundClaim("csi-pv", "csi-claim", { driver: DRIVER, volumeHandle: HANDLE, volumeAttributes: { tier: "fast" } });
    await apply(pod("csi-writer", "echo through-csi > /data/f", { persistentVolumeClaim: { claimName: "csi-claim" } }));
    const running = await c.podInPhase("csi-writer", "Running", 120_000);
    const uid = running.metadata.uid as string;
    const staging = deviceMountPath(c.n.rootDir, DRIVER, HANDLE);
    const target = podMountPath(c.n.rootDir, uid, "csi-pv");
    expect(called("NodeStageVolume").map((x) => x.request.stagingTargetPath)).toContain(staging);
    const publish = called("NodePublishVolume").at(-1)!.request;
    expect(publish).toMatchObject({ volumeId: HANDLE, stagingTargetPath: staging, targetPath: target, readonly: false });
    expect(publish.volumeContext).toMatchObject({ tier: "fast", "csi.storage.k8s.io/pod.name": "csi-writer", "csi.storage.k8s.io/ephemeral": "false" });
    expect(JSON.parse(readFileSync(join(target, "..", "vol_data.json"), "utf8"))).toMatchObject({
      specVolumeID: "csi-pv",
      volumeHandle: HANDLE,
      driverName: DRIVER,
      volumeLifecycleMode: "Persistent",
    });
    await until("the file in the driver's volume", () => existsSync(join(driver!.volumes.dataDir(HANDLE), "f")), 30_000);
    expect(readFileSync(join(driver!.volumes.dataDir(HANDLE), "f"), "utf8")).toBe("through-csi\n");
    // The driver's NodeGetVolumeStats in the Summary API, with the claim, and in kubelet_volume_stats_*.
    const vol = await summaryVolume(c, uid, "data");
    expect(vol).toMatchObject({ pvcRef: { name: "csi-claim", namespace: "default" } });
    expect(vol.capacityBytes).toBeGreaterThan(0);
    expect(vol.inodes).toBe(vol.inodesUsed! + vol.inodesFree!);
    const metrics = await (await c.nodeRequest("/metrics")).text();
    expect(metrics).toContain(`kubelet_volume_stats_capacity_bytes{namespace="default",persistentvolumeclaim="csi-claim"} ${vol.capacityBytes}`);

    await deletePod("csi-writer");
    await until("unpublished and unstaged", () => called("NodeUnpublishVolume").length > 0 && called("NodeUnstageVolume").length > 0, 60_000, {
      intervalMs: 200,
    });
    const order = driver!.nodeCalls.map((x) => x.method).filter((m) => m.startsWith("NodeUn"));
    expect(order).toEqual(["NodeUnpublishVolume", "NodeUnstageVolume"]);
    expect(called("NodeUnstageVolume")[0]!.request).toMatchObject({ volumeId: HANDLE, stagingTargetPath: staging });
    expect(driver!.volumes.mounted()).toEqual([]);
    expect(mountPointsUnder(join(c.n.rootDir, "plugins", "kubernetes.io", "csi"))).toEqual([]);
    expect(mountPointsUnder(join(c.n.rootDir, "pods", uid))).toEqual([]);
    expect(existsSync(join(staging, ".."))).toBe(false);
  }, 300_000);

  test("secret references: the pod waits for a missing Secret; then NodeStage and NodePublish get the Secrets' data", async () => {
    const handle = "vol-secret";
    const secret = (name: string, data: Record<string, string>) =>
      apply({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "default" }, stringData: data });
    await secret("csi-publish-secret", { token: "publish-t0ken" });
    await boundClaim("csi-secret-pv", "csi-secret-claim", {
      driver: DRIVER,
      volumeHandle: handle,
      nodeStageSecretRef: { name: "csi-stage-secret", namespace: "default" },
      nodePublishSecretRef: { name: "csi-publish-secret", namespace: "default" },
    });
    await apply(pod("csi-secrets", "true", { persistentVolumeClaim: { claimName: "csi-secret-claim" } }));
    const text =
      'MountVolume.MountDevice failed for volume "csi-secret-pv" : fetching NodeStageSecretRef default/csi-stage-secret failed: kubernetes.io/csi: failed to find the secret csi-stage-secret in the namespace default with error: secrets "csi-stage-secret" not found';
    await until(
      "the FailedMount event of the missing Secret",
      async () => (await c.json("get", "events")).items.some((e: any) => e.involvedObject?.name === "csi-secrets" && String(e.message).includes(text)),
      60_000,
      { intervalMs: 500 },
    );
    expect((await c.json("get", "pod", "csi-secrets")).status.phase).toBe("Pending");
    expect(driver!.nodeCalls.some((x) => x.request.volumeId === handle)).toBe(false);

    await secret("csi-stage-secret", { user: "admin", password: "stage-s3cret" });
    await c.podInPhase("csi-secrets", "Running", 120_000);
    const forHandle = (method: string) => called(method).filter((x) => x.request.volumeId === handle);
    expect(forHandle("NodeStageVolume").at(-1)!.request.secrets).toEqual({ user: "admin", password: "stage-s3cret" });
    expect(forHandle("NodePublishVolume").at(-1)!.request.secrets).toEqual({ token: "publish-t0ken" });
    // The values reach the driver only: bunlet's log names the references, never the data.
    for (const value of ["stage-s3cret", "publish-t0ken"]) expect(`${c.n.proc.stdout()}${c.n.proc.stderr()}`).not.toContain(value);

    await deletePod("csi-secrets");
    await until("unstaged", () => forHandle("NodeUnstageVolume").length > 0, 60_000, { intervalMs: 200 });
  }, 300_000);

  test("an inline csi volume: published with the pod's identity, never staged; gone with the pod", async () => {
    const stagedBefore = called("NodeStageVolume").length;
    await apply(pod("csi-inline", "echo inline > /data/g", { csi: { driver: DRIVER, volumeAttributes: { size: "1Mi" } } }));
    const running = await c.podInPhase("csi-inline", "Running", 120_000);
    const uid = running.metadata.uid as string;
    const handle = ephemeralVolumeHandle(uid, "data");
    const publish = called("NodePublishVolume").find((x) => x.request.volumeId === handle)!.request;
    expect(publish).toMatchObject({ stagingTargetPath: "", targetPath: podMountPath(c.n.rootDir, uid, "data") });
    expect(publish.volumeContext).toEqual({
      size: "1Mi",
      "csi.storage.k8s.io/pod.name": "csi-inline",
      "csi.storage.k8s.io/pod.namespace": "default",
      "csi.storage.k8s.io/pod.uid": uid,
      "csi.storage.k8s.io/serviceAccount.name": "default",
      "csi.storage.k8s.io/ephemeral": "true",
    });
    expect(called("NodeStageVolume").length).toBe(stagedBefore);
    await until("the file in the driver's volume", () => existsSync(join(driver!.volumes.dataDir(handle), "g")), 30_000);

    await deletePod("csi-inline");
    await until("unpublished", () => called("NodeUnpublishVolume").some((x) => x.request.volumeId === handle), 60_000, { intervalMs: 200 });
    expect(driver!.volumes.mounted()).toEqual([]);
    expect(mountPointsUnder(join(c.n.rootDir, "pods", uid))).toEqual([]);
  }, 240_000);

  test("attach required: published once the attach/detach controller's VolumeAttachment is attached; in volumesInUse until the pod goes", async () => {
    attached = createFakeCSIDriver({
      name: ATTACHED_DRIVER,
      registrationSocket: join(c.n.rootDir, "plugins_registry", `${ATTACHED_DRIVER}-reg.sock`),
      csiSocket: join(c.n.rootDir, "plugins", ATTACHED_DRIVER, "csi.sock"),
      nodeId: "node-1",
    });
    await attached.start();
    await until("the second driver registered", () => attached!.statuses.some((s) => s.pluginRegistered), 30_000, { intervalMs: 200 });
    await apply({ apiVersion: "storage.k8s.io/v1", kind: "CSIDriver", metadata: { name: ATTACHED_DRIVER }, spec: { attachRequired: true } });
    const handle = "vol-attached";
    await boundClaim("csi-attached-pv", "csi-attached-claim", { driver: ATTACHED_DRIVER, volumeHandle: handle });
    await apply(pod("csi-attached", "echo attached > /data/h", { persistentVolumeClaim: { claimName: "csi-attached-claim" } }));
    const va = attachmentName(handle, ATTACHED_DRIVER, c.n.node);
    const inUse = async () => ((await c.json("get", "node", c.n.node)).status?.volumesInUse ?? []) as string[];
    // The controller makes the attachment; until it is attached the pod waits and the volume is in use.
    await until("the controller's VolumeAttachment", async () => (await c.cp.kubectl("get", "volumeattachments", "-o", "name")).includes(va), 60_000, {
      intervalMs: 500,
    });
    await until("the volume in the Node's volumesInUse", async () => (await inUse()).includes(uniqueVolumeName(ATTACHED_DRIVER, handle)), 60_000, {
      intervalMs: 500,
    });
    expect(attached.nodeCalls.filter((x) => x.method === "NodePublishVolume")).toEqual([]);
    await c.cp.kubectl(
      "patch",
      "volumeattachment",
      va,
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({ status: { attached: true, attachmentMetadata: { lun: "7" } } }),
    );
    await c.podInPhase("csi-attached", "Running", 120_000);
    expect(attached.nodeCalls.find((x) => x.method === "NodePublishVolume")!.request.publishContext).toEqual({ lun: "7" });

    await deletePod("csi-attached");
    await until("volumesInUse emptied", async () => (await inUse()).length === 0, 60_000, { intervalMs: 500 });
    await until("the controller detached it", async () => !(await c.cp.kubectl("get", "volumeattachments", "-o", "name")).includes(va), 90_000, {
      intervalMs: 500,
    });
    expect(attached.volumes.mounted()).toEqual([]);
  }, 300_000);

  test("after a restart, a pod deleted while bunlet was down: its volume unpublished and unstaged from vol_data.json", async () => {
    await apply(pod("csi-orphan", "true", { persistentVolumeClaim: { claimName: "csi-claim" } }));
    const running = await c.podInPhase("csi-orphan", "Running", 120_000);
    const target = podMountPath(c.n.rootDir, running.metadata.uid as string, "csi-pv");
    expect(mountPointsUnder(target)).toEqual([target]);
    const unstaged = called("NodeUnstageVolume").length;
    await c.n.restart(async () => {
      await c.cp.kubectl("delete", "pod", "csi-orphan", "--force", "--grace-period=0", "--wait=false");
    });
    await until("the orphan's volume unpublished and unstaged", () => called("NodeUnstageVolume").length > unstaged, 90_000, { intervalMs: 300 });
    expect(called("NodeUnpublishVolume").some((x) => x.request.targetPath === target)).toBe(true);
    expect(driver!.volumes.mounted()).toEqual([]);
    expect(mountPointsUnder(join(c.n.rootDir, "plugins", "kubernetes.io", "csi"))).toEqual([]);
  }, 240_000);
});
