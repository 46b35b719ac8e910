// Dynamic provisioning and attachment of CSI volumes on bunlet with upstream's own controller sidecars
// against a real control plane (test/support/upstream): external-provisioner and external-attacher
// (scripts/upstream/build.sh, BUNLET_UPSTREAM_TARGETS="csi-provisioner csi-attacher") run on the host on
// the test CSI driver's controller socket (test/support/fake-csi-controller.ts: CreateVolume makes a
// backing directory, ControllerPublishVolume answers a publish context); its node side
// (fake-csi-driver.ts) registers with bunlet and bind-mounts those directories. Its CSIDriver requires
// attach. A StatefulSet of two replicas with a volumeClaimTemplate of the driver's StorageClass: the
// provisioner creates each claim's PV, kube-controller-manager's attach/detach controller the
// VolumeAttachments, the attacher attaches them, and bunlet stages and publishes each volume with the
// attacher's publish context; each pod writes its name. The StatefulSet deleted, the volumes are
// unpublished, unstaged and detached; recreated, each pod finds its own data on its own claim. The
// claims deleted, the provisioner deletes the volumes. Nothing stays mounted under bunlet's root
// directory. Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { mountPointsUnder } from "../../../src/pod/volumes/mount-points.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { createFakeCSIController, type FakeCSIController } from "../../support/fake-csi-controller.ts";
import { createFakeCSIDriver, type FakeCSIDriver } from "../../support/fake-csi-driver.ts";
import { CSI_SIDECARS, type CSISidecars, startCSISidecars } from "../../support/csi-sidecars.ts";
import { startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir(`kube-apiserver kube-controller-manager kube-scheduler kubectl ${CSI_SIDECARS.join(" ")}`);
if (!bin.dir) console.warn(`skipping the CSI provisioning test: ${bin.why}`);

const DRIVER = "provisioned.csi.bunlet.test";
const CLASS = "bunlet-csi";
const DATA = `/tmp/bunlet-csi-provisioned-${process.pid}`;
const CONTROLLER = `/tmp/bunlet-csi-controller-${process.pid}`;
const PODS = ["web-0", "web-1"];

/** The fields of a VolumeAttachment the test reads. */
interface VolumeAttachment {
  spec: { attacher: string; source: { persistentVolumeName: string } };
  status?: { attached: boolean; attachmentMetadata?: Record<string, string> };
}

/**
 * Two replicas, each claiming 64Mi of CLASS: a pod records its name in `owner` on first start, refuses
 * a volume owned by another pod, and appends its name to `starts` on every start.
 */
const statefulSet = (image: string) => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "web", namespace: "default" },
  spec: {
    serviceName: "web",
    replicas: 2,
    podManagementPolicy: "Parallel",
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        terminationGracePeriodSeconds: 1,
        automountServiceAccountToken: false,
        containers: [
          {
            name: "app",
            image,
            env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
            command: [
              "sh",
              "-c",
              'test -f /data/owner || echo "$POD_NAME" > /data/owner; test "$(cat /data/owner)" = "$POD_NAME" && echo "$POD_NAME" >> /data/starts && exec sleep 3600',
            ],
            volumeMounts: [{ name: "data", mountPath: "/data" }],
          },
        ],
      },
    },
    volumeClaimTemplates: [
      { metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"], storageClassName: CLASS, resources: { requests: { storage: "64Mi" } } } },
    ],
  },
});

describe.skipIf(!canRunContainerd() || !bin.dir)("CSI provisioning with external-provisioner and external-attacher", () => {
  let c: UpstreamCluster;
  let driver: FakeCSIDriver | undefined;
  let controller: FakeCSIController | undefined;
  let sidecars: CSISidecars | undefined;
  let passed = false;
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  const controllerCalls = (method: string) => controller!.calls.filter((x) => x.method === method);
  const nodeCalls = (method: string) => driver!.nodeCalls.filter((x) => x.method === method);
  /** The volumes a method was called for, each once (a sidecar may retry a call), sorted. */
  const calledFor = (calls: { request: Record<string, unknown> }[], field = "volumeId") => [...new Set(calls.map((x) => String(x.request[field])))].sort();
  const attachments = async (): Promise<VolumeAttachment[]> =>
    ((await c.json("get", "volumeattachments")).items as VolumeAttachment[]).filter((va) => va.spec.attacher === DRIVER);
  const podsGone = () =>
    until("the StatefulSet's pods gone", async () => (await c.cp.kubectl("get", "pods", "-l", "app=web", "-o", "name")).trim() === "", 120_000, {
      intervalMs: 500,
    });

  /** Each replica's claim, Bound, and its PV. */
  async function volumes(): Promise<{ pod: string; pv: string; handle: string }[]> {
    return Promise.all(
      PODS.map(async (pod) => {
        const claim = await until(
          `data-${pod} Bound`,
          async () => {
            const o = await c.json("get", "pvc", `data-${pod}`).catch(() => undefined);
            return o?.status?.phase === "Bound" ? o : undefined;
          },
          120_000,
          { intervalMs: 500 },
        );
        const pv = await c.json("get", "pv", claim.spec.volumeName);
        return { pod, pv: pv.metadata.name as string, handle: pv.spec.csi.volumeHandle as string };
      }),
    );
  }

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "csiprov", binDir: bin.dir!, config: ["syncFrequency: 5s"] });
    driver = createFakeCSIDriver({
      name: DRIVER,
      registrationSocket: join(c.n.rootDir, "plugins_registry", `${DRIVER}-reg.sock`),
      csiSocket: join(c.n.rootDir, "plugins", DRIVER, "csi.sock"),
      nodeId: c.n.node,
      dataDir: DATA,
    });
    await driver.start();
    await until("the driver registered", () => driver!.statuses.some((s) => s.pluginRegistered), 30_000, { intervalMs: 200 });
    controller = createFakeCSIController({ name: DRIVER, socket: join(CONTROLLER, "csi.sock"), volumeDir: (id) => driver!.volumes.dataDir(id) });
    await controller.start();
    await apply({ apiVersion: "storage.k8s.io/v1", kind: "CSIDriver", metadata: { name: DRIVER }, spec: { attachRequired: true, podInfoOnMount: false } });
    await apply({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: CLASS },
      provisioner: DRIVER,
      parameters: { tier: "test" },
      reclaimPolicy: "Delete",
      volumeBindingMode: "Immediate",
    });
    sidecars = startCSISidecars({ binDir: bin.dir!, csiAddress: join(CONTROLLER, "csi.sock"), kubeconfig: c.cp.admin, logDir: join(c.cp.dir, "logs") });
  }, 240_000);
  afterAll(async () => {
    if (!passed && sidecars)
      for (const s of CSI_SIDECARS) console.error(`--- ${s} (last lines)\n${(await sidecars.log(s).catch(() => "")).split("\n").slice(-30).join("\n")}`);
    await sidecars?.stop().catch(() => {});
    await controller?.stop().catch(() => {});
    await driver?.stop().catch(() => {});
    const rootDir = c?.n.rootDir;
    await c?.stop();
    // Whatever a failed test left mounted under the node's directory (all of it the test's own).
    if (rootDir) for (const mp of mountPointsUnder(rootDir)) Bun.spawnSync(["umount", "-l", mp]);
    rmSync(CONTROLLER, { recursive: true, force: true });
    rmSync(DATA, { recursive: true, force: true });
  }, 120_000);

  test("a StatefulSet's claims provisioned and attached by the sidecars, mounted by bunlet, kept across a recreation, deleted with the claims", async () => {
    const sts = statefulSet(c.n.ctd.images.busybox);
    await apply(sts);
    const vols = await volumes();
    for (const pod of PODS) await c.podInPhase(pod, "Running", 180_000);

    // Both sidecars asked what they ask at start-up before any volume call.
    for (const m of ["Probe", "GetPluginInfo", "GetPluginCapabilities", "ControllerGetCapabilities"])
      expect(controllerCalls(m).length).toBeGreaterThanOrEqual(2);
    // external-provisioner: one CreateVolume per claim, named after the claim's PV, with the class's parameters.
    const handles = vols.map((v) => v.handle).sort();
    expect(calledFor(controllerCalls("CreateVolume"), "name")).toEqual(vols.map((v) => v.pv).sort());
    expect(controllerCalls("CreateVolume")[0]!.request.parameters).toEqual({ tier: "test" });
    for (const v of vols) {
      const pv = await c.json("get", "pv", v.pv);
      expect(pv.spec.csi).toMatchObject({ driver: DRIVER, volumeHandle: v.pv, volumeAttributes: { tier: "test" } });
      expect(pv.metadata.annotations["pv.kubernetes.io/provisioned-by"]).toBe(DRIVER);
    }
    // external-attacher: each VolumeAttachment attached with the driver's publish context, which bunlet staged with.
    const vas = await attachments();
    expect(vas.map((va) => va.spec.source.persistentVolumeName).sort()).toEqual(vols.map((v) => v.pv).sort());
    for (const v of vols) {
      const context = controller!.publishContext(v.handle, c.n.node);
      const va = vas.find((x) => x.spec.source.persistentVolumeName === v.pv);
      expect(va?.status).toMatchObject({ attached: true, attachmentMetadata: context });
      expect(controller!.attached.get(v.handle)).toEqual(new Set([c.n.node]));
      expect(nodeCalls("NodeStageVolume").find((x) => x.request.volumeId === v.handle)!.request.publishContext).toEqual(context);
      await until(`${v.pod}'s file in its volume`, () => existsSync(join(driver!.volumes.dataDir(v.handle), "starts")), 30_000);
      expect(readFileSync(join(driver!.volumes.dataDir(v.handle), "owner"), "utf8")).toBe(`${v.pod}\n`);
    }

    // Deleted: every volume unpublished, unstaged and detached (ControllerUnpublishVolume), nothing mounted.
    await c.cp.kubectl("delete", "statefulset", "web", "--wait=true", "--timeout=60s");
    await podsGone();
    await until("the VolumeAttachments detached and gone", async () => (await attachments()).length === 0, 120_000, { intervalMs: 500 });
    expect(calledFor(controllerCalls("ControllerUnpublishVolume"))).toEqual(handles);
    expect(calledFor(nodeCalls("NodeUnstageVolume"))).toEqual(handles);
    expect(driver!.volumes.mounted()).toEqual([]);
    expect(mountPointsUnder(c.n.rootDir)).toEqual([]);

    // Recreated: the same claims, attached again, each pod finds the data it wrote.
    await apply(sts);
    for (const pod of PODS) await c.podInPhase(pod, "Running", 180_000);
    expect(await volumes()).toEqual(vols);
    expect(calledFor(controllerCalls("CreateVolume"), "name")).toEqual(vols.map((v) => v.pv).sort());
    expect(controllerCalls("ControllerPublishVolume").length).toBeGreaterThanOrEqual(4);
    for (const v of vols) {
      const starts = join(driver!.volumes.dataDir(v.handle), "starts");
      await until(`${v.pod} started twice on its volume`, () => readFileSync(starts, "utf8") === `${v.pod}\n${v.pod}\n`, 30_000, { intervalMs: 200 });
    }

    // The StatefulSet and its claims deleted: detached, then the volumes deleted by the provisioner.
    await c.cp.kubectl("delete", "statefulset", "web", "--wait=true", "--timeout=60s");
    await podsGone();
    await c.cp.kubectl("delete", "pvc", ...PODS.map((p) => `data-${p}`), "--wait=true", "--timeout=120s");
    await until("the PVs deleted", async () => !(await c.cp.kubectl("get", "pv", "-o", "name")).includes("pvc-"), 120_000, { intervalMs: 500 });
    expect(calledFor(controllerCalls("DeleteVolume"))).toEqual(handles);
    for (const v of vols) expect(existsSync(driver!.volumes.dataDir(v.handle))).toBe(false);
    expect(await attachments()).toEqual([]);
    expect(driver!.volumes.mounted()).toEqual([]);
    expect(mountPointsUnder(c.n.rootDir)).toEqual([]);
    passed = true;
  }, 600_000);
});
