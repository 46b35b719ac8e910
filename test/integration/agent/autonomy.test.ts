// Node autonomy against a real control plane (test/support/upstream): bunlet joined with `autonomy: true`
// runs an API pod with a secret volume, a configMap volume and the service account token; restarted while
// kube-apiserver is stopped it runs that pod again from its cache — the containers it finds are adopted
// (same IDs, no restart), and after a simulated reboot (the pod's containers removed through the CRI) they
// are made again from the cached pod, secret, configMap and token. With the API server back, an unchanged
// pod keeps its containers (restartCount 0, same container ID) and a pod deleted meanwhile is stopped. A
// corrupt cache file is reported (file and reason) and the rest of the cache still runs. A pod with a
// local PV's claim is made again after a reboot from the cached claim and PV, and finds its data. So is
// a pod whose claim is bound to a PV of the test's CSI driver (test/support/fake-csi-driver.ts), whose
// CSIDriver requires attach: the driver registers with the restarted bunlet though its node info cannot
// be published, and the volume is staged and published again with the cached CSIDriver, the cached,
// attached VolumeAttachment's publish context and the cached node-publish Secret's data. Needs root,
// containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { attachmentName, deviceMountPath, podMountPath } from "../../../src/pod/volumes/csi/csi-util.ts";
import { mountPointsUnder } from "../../../src/pod/volumes/mount-points.ts";
import { canRunContainerd, testRuntimeCriName } from "../../support/containerd.ts";
import { startRegisteredCSIDriver, type FakeCSIDriver } from "../../support/fake-csi-driver.ts";
import { persistentVolume, persistentVolumeClaim, type PersistentVolumeOptions, type PersistentVolumeSource } from "../../support/persistent-volumes.ts";
import { appPod, NODE_NAME, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the node autonomy tests: ${bin.why}`);

const PV_DATA = `/tmp/bunlet-autonomy-pv-${process.pid}`;
const CSI_DRIVER = "offline.csi.bunlet.test";
const CSI_HANDLE = "vol-offline";

describe.skipIf(!canRunContainerd() || !bin.dir)("node autonomy", () => {
  let c: UpstreamCluster;
  let driver: FakeCSIDriver | undefined;
  const kubectl = (...args: string[]) => c.cp.kubectl(...args);
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  const cacheDir = () => join(c.n.rootDir, "autonomy");
  /** The running containers of a pod, by UID (the CRI's view: no API server needed). */
  const running = async (uid: string) =>
    (await c.n.ctd.cri.listContainers({ labelSelector: { "io.kubernetes.pod.uid": uid } })).filter((x) => x.state === "CONTAINER_RUNNING").map((x) => x.id);
  const logged = (text: string) => c.n.proc.stderr().includes(text) || c.n.proc.stdout().includes(text);
  const waitLog = (what: string, text: string, ms = 60_000) => until(what, () => logged(text), ms, { intervalMs: 200 });

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "autonomy", binDir: bin.dir!, config: ["autonomy: true", "syncFrequency: 2s", "nodeStatusUpdateFrequency: 2s"] });
    await kubectl("create", "secret", "generic", "offline-secret", "--from-literal=password=s3cret");
    await kubectl("create", "configmap", "offline-config", "--from-literal=mode=edge");
  }, 240_000);
  afterAll(async () => {
    await c?.cp.startApiServer().catch(() => {});
    await driver?.stop().catch(() => {});
    const rootDir = c?.n.rootDir;
    await c?.stop();
    // Whatever a failed test left mounted under the node's directory (all of it the test driver's).
    if (rootDir) for (const mp of mountPointsUnder(rootDir)) Bun.spawnSync(["umount", "-l", mp]);
    rmSync(PV_DATA, { recursive: true, force: true });
  }, 120_000);

  /** A reboot as the pod sees it: its containers and sandbox gone (through the CRI). */
  async function removePodContainers(uid: string): Promise<void> {
    const cri = c.n.ctd.cri;
    for (const x of await cri.listContainers({ labelSelector: { "io.kubernetes.pod.uid": uid } })) {
      await cri.stopContainer(x.id, 0).catch(() => {});
      await cri.removeContainer(x.id);
    }
    for (const s of await cri.listPodSandbox({ labelSelector: { "io.kubernetes.pod.uid": uid } })) {
      await cri.stopPodSandbox(s.id).catch(() => {});
      await cri.removePodSandbox(s.id);
    }
  }
  /** The pod's one running container once it is made again. */
  const remade = (uid: string) =>
    until(
      "the pod's container made again from the cache",
      async () => {
        const ids = await running(uid);
        return ids.length === 1 ? ids[0] : undefined;
      },
      90_000,
    );

  /** A PV of `source`, a claim pre-bound to it (once Bound) and a pod appending "boot" to /data/boots on it. */
  async function bootingPodOfClaim(pod: string, claim: string, pv: string, source: PersistentVolumeSource, o: PersistentVolumeOptions = {}): Promise<void> {
    await apply(persistentVolume(pv, source, o));
    await apply(persistentVolumeClaim(claim, { volumeName: pv }));
    await until(`${claim} Bound`, async () => (await c.json("get", "pvc", claim)).status?.phase === "Bound", 90_000, { intervalMs: 500 });
    await apply(
      appPod(
        pod,
        c.n.ctd.images.busybox,
        { command: ["sh", "-c", "echo boot >> /data/boots && exec sleep 3600"], volumeMounts: [{ name: "data", mountPath: "/data" }] },
        { automountServiceAccountToken: false, volumes: [{ name: "data", persistentVolumeClaim: { claimName: claim } }] },
      ),
    );
  }

  /** With the API server back, the pod adopted; then it, its claim and PV deleted. */
  async function adoptThenDelete(uid: string, pod: string, claim: string, pv: string): Promise<void> {
    await c.cp.startApiServer();
    await waitLog("the reconcile", `uid=${uid} decision=adopt`, 90_000);
    await kubectl("delete", "pod", pod, "--wait=true", "--timeout=60s");
    await kubectl("delete", "pvc", claim, "--wait=false");
    await kubectl("delete", "pv", pv, "--wait=false");
  }

  async function runPod(name: string): Promise<{ uid: string; containerId: string }> {
    await apply(
      appPod(
        name,
        c.n.ctd.images.busybox,
        {
          volumeMounts: [
            { name: "s", mountPath: "/etc/s" },
            { name: "c", mountPath: "/etc/c" },
          ],
        },
        {
          volumes: [
            { name: "s", secret: { secretName: "offline-secret" } },
            { name: "c", configMap: { name: "offline-config" } },
          ],
        },
      ),
    );
    const p = await c.podInPhase(name, "Running", 120_000);
    const uid = p.metadata.uid as string;
    // Stored: the pod, its secret and configMap, the kube-api-access token.
    await until(`${name} in the autonomy cache`, () => {
      const files = existsSync(cacheDir()) ? readdirSync(cacheDir()) : [];
      return files.includes(`pod_${uid}.json`) && files.includes("secret_default_offline-secret.json") && files.some((f) => f.startsWith(`token_${uid}_`));
    });
    return { uid, containerId: p.status.containerStatuses[0].containerID.replace(/^[a-z-]+:\/\//, "") };
  }

  test("restarted while the API server is down, the pod is adopted; with it back, nothing restarts", async () => {
    const { uid, containerId } = await runPod("adopted");
    const corrupt = join(cacheDir(), "pod_corrupt.json");
    await c.n.restart(async () => {
      await c.cp.stopApiServer();
      writeFileSync(corrupt, "{ not json");
    });
    // The bad file is reported, named, with the reason; the rest of the cache runs.
    await waitLog("the corrupt cache file reported", `autonomy cache file pod_corrupt.json: not JSON; skipping it file=${corrupt}`);
    await waitLog("the cached pods run", "running the pods of the autonomy cache");
    await waitLog("the secret served from the cache", "object=secret/default/offline-secret");
    expect(await running(uid)).toEqual([containerId]);

    await c.cp.startApiServer();
    await waitLog("the reconcile", `uid=${uid} decision=adopt`, 90_000);
    const p = await c.podInPhase("adopted", "Running");
    expect(p.status.containerStatuses[0].restartCount).toBe(0);
    expect(p.status.containerStatuses[0].containerID).toBe(`${testRuntimeCriName}://${containerId}`);
    expect(await running(uid)).toEqual([containerId]);
    rmSync(corrupt, { force: true });
    await kubectl("delete", "pod", "adopted", "--wait=true");
  }, 240_000);

  test("after a reboot the pod is made again from the cache; deleted meanwhile, it stops once the API server is back", async () => {
    const { uid, containerId } = await runPod("rebooted");
    await c.n.restart(async () => {
      // The pod deleted in the API while the node is away, then the API server gone too.
      await kubectl("delete", "pod", "rebooted", "--grace-period=0", "--force", "--wait=false");
      await c.cp.stopApiServer();
      // A reboot: the pod's containers and sandbox gone.
      await removePodContainers(uid);
    });
    const again = await remade(uid);
    expect(again).not.toBe(containerId);
    expect(logged("object=configmap/default/offline-config")).toBe(true);

    await c.cp.startApiServer();
    await waitLog("the reconcile", `uid=${uid} decision=stop`, 90_000);
    await until("the deleted pod's containers stopped", async () => (await running(uid)).length === 0, 60_000);
  }, 240_000);

  test("after a reboot a pod with a local PV's claim is made again from the cached claim and PV, with its data", async () => {
    mkdirSync(PV_DATA, { recursive: true });
    await bootingPodOfClaim("claimed", "offline-claim", "offline-pv", { local: { path: PV_DATA } }, { node: NODE_NAME });
    const uid = (await c.podInPhase("claimed", "Running", 120_000)).metadata.uid as string;
    await until("the claim and its PV in the autonomy cache", () => {
      const files = existsSync(cacheDir()) ? readdirSync(cacheDir()) : [];
      return files.includes("persistentvolumeclaim_default_offline-claim.json") && files.includes("persistentvolume_offline-pv.json");
    });
    expect(readFileSync(join(PV_DATA, "boots"), "utf8")).toBe("boot\n");

    await c.n.restart(async () => {
      await c.cp.stopApiServer();
      await removePodContainers(uid);
    });
    await remade(uid);
    await waitLog("the claim served from the cache", "object=persistentvolumeclaim/default/offline-claim");
    expect(logged("object=persistentvolume/offline-pv")).toBe(true);
    // The new container appended to what the first one wrote: the same volume, its data kept.
    await until("the second boot written to the PV", () => readFileSync(join(PV_DATA, "boots"), "utf8") === "boot\nboot\n", 30_000);

    await adoptThenDelete(uid, "claimed", "offline-claim", "offline-pv");
  }, 300_000);

  test("after a reboot a pod with a CSI PV's claim is made again from the cached claim, PV, CSIDriver, VolumeAttachment and Secret", async () => {
    driver = await startRegisteredCSIDriver(c.n.rootDir, CSI_DRIVER);
    await apply({ apiVersion: "storage.k8s.io/v1", kind: "CSIDriver", metadata: { name: CSI_DRIVER }, spec: { attachRequired: true } });
    await kubectl("create", "secret", "generic", "offline-csi-publish", "--from-literal=token=publish-t0ken");
    const nodePublishSecretRef = { name: "offline-csi-publish", namespace: "default" };
    await bootingPodOfClaim("csi-claimed", "offline-csi-claim", "offline-csi-pv", {
      csi: { driver: CSI_DRIVER, volumeHandle: CSI_HANDLE, nodePublishSecretRef },
    });
    // The attach/detach controller makes the attachment; the test attaches it, as an external attacher would.
    const va = attachmentName(CSI_HANDLE, CSI_DRIVER, c.n.node);
    await until("the controller's VolumeAttachment", async () => (await kubectl("get", "volumeattachments", "-o", "name")).includes(va), 60_000, {
      intervalMs: 500,
    });
    const status = { status: { attached: true, attachmentMetadata: { lun: "7" } } };
    await kubectl("patch", "volumeattachment", va, "--subresource=status", "--type=merge", "-p", JSON.stringify(status));
    const uid = (await c.podInPhase("csi-claimed", "Running", 120_000)).metadata.uid as string;
    await until("the claim, PV, CSIDriver, attachment and Secret in the autonomy cache", () => {
      const files = existsSync(cacheDir()) ? readdirSync(cacheDir()) : [];
      const wanted = ["persistentvolumeclaim_default_offline-csi-claim.json", "persistentvolume_offline-csi-pv.json", `csidriver_${CSI_DRIVER}.json`];
      return [...wanted, `volumeattachment_${va}.json`, "secret_default_offline-csi-publish.json"].every((f) => files.includes(f));
    });
    const boots = join(driver.volumes.dataDir(CSI_HANDLE), "boots");
    expect(readFileSync(boots, "utf8")).toBe("boot\n");

    const published = driver.nodeCalls.length;
    await c.n.restart(async () => {
      await c.cp.stopApiServer();
      await removePodContainers(uid);
      // A reboot: the driver's mounts of the volume gone too.
      for (const mp of [podMountPath(c.n.rootDir, uid, "offline-csi-pv"), deviceMountPath(c.n.rootDir, CSI_DRIVER, CSI_HANDLE)]) Bun.spawnSync(["umount", mp]);
    });
    await remade(uid);
    await waitLog("the CSIDriver served from the cache", `object=csidriver/${CSI_DRIVER}`);
    expect(logged(`object=volumeattachment/${va}`)).toBe(true);
    const again = driver.nodeCalls.slice(published);
    expect(again.map((x) => x.method)).toEqual(["NodeStageVolume", "NodePublishVolume"]);
    expect(again[1]!.request.publishContext).toEqual({ lun: "7" });
    expect(again[1]!.request.secrets).toEqual({ token: "publish-t0ken" });
    expect(logged("object=secret/default/offline-csi-publish")).toBe(true);
    await until("the second boot written to the CSI volume", () => readFileSync(boots, "utf8") === "boot\nboot\n", 30_000);

    await adoptThenDelete(uid, "csi-claimed", "offline-csi-claim", "offline-csi-pv");
  }, 300_000);
});
