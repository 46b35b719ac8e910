// Volumes of a pod deleted while bunlet was down, reconstructed from the pod's directory and torn down
// by the next bunlet (a process of its own, killed with SIGKILL): a static pod runs with an emptyDir of
// medium Memory (a tmpfs), and a CSI volume of the test driver (test/support/fake-csi-driver.ts) is
// staged and published into its directory with the vol_data.json files bunlet writes, as an earlier
// bunlet would have left it. bunlet is killed, the manifest removed and the pod's sandbox removed from
// the runtime; the next bunlet unmounts the tmpfs at once, keeps the directory while the CSI driver is
// not registered, and once it is, calls NodeUnpublishVolume and NodeUnstageVolume and removes the
// pod's directory. Needs root and containerd.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, realpathSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { emptyDirPath } from "../../../src/pod/kuberuntime/empty-dir.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { createCSINodeClient, deviceMountPath, podMountPath } from "../../../src/pod/volumes/csi/index.ts";
import { attachmentName, saveVolumeData } from "../../../src/pod/volumes/csi/csi-util.ts";
import { mountPointsUnder } from "../../../src/pod/volumes/mount-points.ts";
import { staticPodFlags } from "../../support/agent.ts";
import { freePort, killAll, ROOT, spawnBunlet, waitForHealthz, type BunletProcess } from "../../support/binary.ts";
import { acquireContainerd, canRunContainerd, removeSandboxes, tearDownPods, type TestContainerd } from "../../support/containerd.ts";
import { createFakeCSIDriver, type FakeCSIDriver } from "../../support/fake-csi-driver.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const BASE = `/tmp/bunlet-volrec-${PID}`;
const NODE = `volrec-${PID}`;
const CGROUP_ROOT = `/bunlet-volrec-${PID}`;
const DRIVER = "volrec.csi.bunlet.test";
const HANDLE = "volrec-0001";

const manifest = (image: string) => `apiVersion: v1
kind: Pod
metadata:
  name: mem
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${image}
      command: ["sh", "-c", "echo kept >/cache/f && exec sleep 3600"]
      volumeMounts: [{ name: cache, mountPath: /cache }]
  volumes:
    - name: cache
      emptyDir: { medium: Memory, sizeLimit: 8Mi }
`;

describe.skipIf(!canRunContainerd())("volumes reconstructed after a restart", () => {
  let ctd: TestContainerd;
  let driver: FakeCSIDriver | undefined;
  let p: BunletProcess | undefined;
  let rootDir = "";
  const manifests = join(BASE, "manifests");
  const port = freePort();
  const start = async () => {
    p = spawnBunlet(
      [...staticPodFlags({ rootDir, manifests, cgroupRoot: CGROUP_ROOT, endpoint: ctd.endpoint, node: NODE, port }), "--file-check-frequency=1s"],
      {
        command: [process.execPath, join(ROOT, "src/main.ts")],
      },
    );
    await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`, 60_000);
  };
  const output = () => `${p?.stderr() ?? ""}${p?.stdout() ?? ""}`;
  const calls = (method: string) => driver!.nodeCalls.filter((c) => c.method === method);

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(join(BASE, "root", "plugins_registry"), { recursive: true });
    mkdirSync(join(BASE, "root", "plugins", DRIVER), { recursive: true });
    mkdirSync(manifests, { recursive: true });
    rootDir = realpathSync(join(BASE, "root"));
    driver = createFakeCSIDriver({
      name: DRIVER,
      registrationSocket: join(rootDir, "plugins_registry", `${DRIVER}-reg.sock`),
      csiSocket: join(rootDir, "plugins", DRIVER, "csi.sock"),
      nodeId: NODE,
      dataDir: join(BASE, "csi-data"),
    });
    await driver.start();
  }, 600_000);

  afterAll(async () => {
    await p?.stop("SIGTERM", 10_000);
    await killAll();
    await driver?.stop().catch(() => {});
    driver?.volumes.cleanUp();
    await tearDownPods(ctd, () => removeSandboxes(ctd.cri, NODE), CGROUP_ROOT, BASE);
  }, 120_000);

  test("SIGKILL, the pod gone with its containers: the tmpfs is unmounted, the CSI volume unpublished and unstaged once its driver registers, the directory removed", async () => {
    writeFileSync(join(manifests, "mem.yaml"), manifest(ctd.images.busybox));
    await start();
    const pod = await until(
      "mem Running",
      async () => {
        const items = ((await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Pod[] }).items;
        return items.find((x) => x.metadata.name === `mem-${NODE}` && x.status?.phase === "Running");
      },
      90_000,
      { intervalMs: 250 },
    );
    const uid = pod.metadata.uid!;
    const podDir = join(rootDir, "pods", uid);
    const cache = emptyDirPath(rootDir, uid, "cache");
    expect(mountPointsUnder(cache)).toEqual([cache]);

    // A CSI volume published for the pod as bunlet publishes one, with its vol_data.json files.
    const endpoint = join(rootDir, "plugins", DRIVER, "csi.sock");
    const staging = deviceMountPath(rootDir, DRIVER, HANDLE);
    const target = podMountPath(rootDir, uid, "csi-pv");
    const capability = { mount: { fsType: "", mountFlags: [] }, accessMode: { mode: "SINGLE_NODE_WRITER" } };
    saveVolumeData(dirname(staging), { specVolumeID: "csi-pv", volumeHandle: HANDLE, driverName: DRIVER });
    mkdirSync(staging, { recursive: true });
    const client = createCSINodeClient(10_000);
    await client.nodeStageVolume(endpoint, {
      volumeId: HANDLE,
      publishContext: {},
      stagingTargetPath: staging,
      volumeCapability: capability,
      volumeContext: {},
    });
    saveVolumeData(dirname(target), {
      specVolumeID: "csi-pv",
      volumeHandle: HANDLE,
      driverName: DRIVER,
      nodeName: NODE,
      attachmentID: attachmentName(HANDLE, DRIVER, NODE),
      volumeLifecycleMode: "Persistent",
    });
    await client.nodePublishVolume(endpoint, {
      volumeId: HANDLE,
      publishContext: {},
      stagingTargetPath: staging,
      targetPath: target,
      volumeCapability: capability,
      volumeContext: {},
      readonly: false,
    });
    expect(mountPointsUnder(podDir).sort()).toEqual([cache, target].sort());

    // bunlet dies; meanwhile the manifest goes and the runtime loses the pod.
    await p!.stop("SIGKILL");
    p = undefined;
    unlinkSync(join(manifests, "mem.yaml"));
    await removeSandboxes(ctd.cri, NODE);
    await driver!.stopRegistrar();

    await start();
    await until("the tmpfs unmounted", () => mountPointsUnder(cache).length === 0, 60_000, { intervalMs: 200 });
    await until(
      "the pod directory kept while the CSI driver is not registered",
      () => output().includes("orphaned pod found, but volumes are still mounted on disk") && output().includes(`podUID=${uid}`),
      30_000,
      { intervalMs: 200 },
    );
    expect(mountPointsUnder(target)).toEqual([target]);
    expect(calls("NodeUnpublishVolume")).toHaveLength(0);

    await driver!.startRegistrar();
    await until("the pod directory removed", () => !existsSync(podDir), 90_000, { intervalMs: 200 });
    expect(calls("NodeUnpublishVolume").map((c) => c.request.targetPath)).toEqual([target]);
    expect(calls("NodeUnstageVolume").map((c) => c.request.stagingTargetPath)).toEqual([staging]);
    expect(mountPointsUnder(join(rootDir, "plugins", "kubernetes.io", "csi"))).toEqual([]);
    expect(driver!.volumes.mounted()).toEqual([]);
    const err = output();
    expect(err).toContain("UnmountVolume.TearDown succeeded for volume");
    expect(err).toContain(`cleaned up orphaned pod directory podUID=${uid}`);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^reconstruct_volume_operations_total 2$/m);
    expect(metrics).toMatch(/^reconstruct_volume_operations_errors_total 0$/m);
  }, 300_000);
});
