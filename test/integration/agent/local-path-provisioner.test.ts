// Dynamic provisioning on bunlet with rancher's local-path-provisioner (k3s' default storage class), run on
// the host against a real control plane (test/support/upstream; the provisioner built by
// scripts/upstream/build.sh, BUNLET_UPSTREAM_TARGETS=local-path-provisioner). A claim of its
// WaitForFirstConsumer class is provisioned once the scheduler places the pod on bunlet: the provisioner's
// helper pod (busybox with a hostPath volume and its scripts from a configMap) makes the directory on the
// node, its hostPath PV is bound, the pod writes a file; a second pod on the same claim reads it back.
// Deleting the claim runs the teardown helper pod, which removes the directory. A generic ephemeral
// volume of the class: kube-controller-manager's ephemeral volume controller makes the pod's claim
// (`<pod>-<volume>`, owned by the pod), the provisioner its PV, bunlet mounts it; the pod deleted, the
// garbage collector deletes the claim and the provisioner the directory. A bound claim of that name the
// pod does not own is refused with upstream's error, the pod left Pending.
// Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, openSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { canRunContainerd } from "../../support/containerd.ts";
import { persistentVolume, persistentVolumeClaim, persistentVolumeClaimSpec } from "../../support/persistent-volumes.ts";
import { appPod, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir("kube-apiserver kube-controller-manager kube-scheduler kubectl local-path-provisioner");
if (!bin.dir) console.warn(`skipping the local-path-provisioner test: ${bin.why}`);

const NS = "local-path-storage";
const SA = "local-path-provisioner-service-account";
const DATA = `/tmp/bunlet-lpp-data-${process.pid}`;
/** A generic ephemeral volume's claim template: 1Gi of the provisioner's class. */
const TEMPLATE = persistentVolumeClaimSpec({ storageClassName: "local-path" });

/** The provisioner's configMap (its deploy/local-path-storage.yaml, the path under DATA, no priority class). */
const config = (image: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "local-path-config", namespace: NS },
  data: {
    "config.json": JSON.stringify({ nodePathMap: [{ node: "DEFAULT_PATH_FOR_NON_LISTED_NODES", paths: [DATA] }] }),
    setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
    teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
    "helperPod.yaml": JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "helper-pod" },
      spec: { containers: [{ name: "helper-pod", image, imagePullPolicy: "IfNotPresent" }] },
    }),
  },
});

describe.skipIf(!canRunContainerd() || !bin.dir)("local-path-provisioner", () => {
  let c: UpstreamCluster;
  let provisioner: ReturnType<typeof Bun.spawn> | undefined;
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  /** A pod the scheduler places (no nodeName) running `script` with the claim at /data. */
  const claimPod = (name: string, script: string, volume: object = { persistentVolumeClaim: { claimName: "dyn" } }) =>
    appPod(
      name,
      c.n.ctd.images.busybox,
      { command: ["sh", "-c", `${script} && exec sleep 3600`], volumeMounts: [{ name: "data", mountPath: "/data" }] },
      {
        nodeName: undefined,
        restartPolicy: "Never",
        automountServiceAccountToken: false,
        volumes: [{ name: "data", ...volume }],
      },
    );

  beforeAll(async () => {
    mkdirSync(DATA, { recursive: true });
    c = await startUpstreamCluster({ name: "lpp", binDir: bin.dir!, config: ["syncFrequency: 5s"] });
    await c.cp.kubectl("create", "namespace", NS);
    await c.cp.kubectl("create", "serviceaccount", SA, "-n", NS);
    await apply(config(c.n.ctd.images.busybox));
    await apply({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: "local-path" },
      provisioner: "rancher.io/local-path",
      volumeBindingMode: "WaitForFirstConsumer",
      reclaimPolicy: "Delete",
    });
    const log = openSync(join(c.cp.dir, "logs", "local-path-provisioner.log"), "a");
    const args = [
      "--debug",
      "start",
      `--kubeconfig=${c.cp.admin}`,
      `--namespace=${NS}`,
      `--helper-image=${c.n.ctd.images.busybox}`,
      `--service-account-name=${SA}`,
    ];
    provisioner = Bun.spawn([join(bin.dir!, "local-path-provisioner"), ...args], { stdout: log, stderr: log });
  }, 240_000);
  afterAll(async () => {
    provisioner?.kill("SIGTERM");
    await provisioner?.exited;
    await c?.stop();
    rmSync(DATA, { recursive: true, force: true });
  }, 120_000);

  test("a dynamically provisioned claim: written by one pod, read back by the next, removed with the claim", async () => {
    await apply(persistentVolumeClaim("dyn", { storageClassName: "local-path" }));
    await apply(claimPod("dyn-writer", "echo kept > /data/f"));
    await c.podInPhase("dyn-writer", "Running", 180_000);
    const claim = await c.json("get", "pvc", "dyn");
    const pv = await c.json("get", "pv", claim.spec.volumeName);
    expect(pv.spec.hostPath.path.startsWith(`${DATA}/`)).toBe(true);
    expect(readdirSync(DATA)).toEqual([pv.spec.hostPath.path.slice(DATA.length + 1)]);
    await c.cp.kubectl("delete", "pod", "dyn-writer", "--wait=true", "--timeout=60s");

    await apply(claimPod("dyn-reader", 'test "$(cat /data/f)" = kept'));
    await c.podInPhase("dyn-reader", "Running", 120_000);
    await c.cp.kubectl("delete", "pod", "dyn-reader", "--wait=true", "--timeout=60s");

    await c.cp.kubectl("delete", "pvc", "dyn", "--wait=true", "--timeout=60s");
    await until("the teardown helper removed the directory", () => !existsSync(pv.spec.hostPath.path), 120_000, { intervalMs: 500 });
  }, 420_000);

  test("a generic ephemeral volume: its claim made for the pod, provisioned, mounted; gone with the pod", async () => {
    await apply(claimPod("eph", "echo scratch > /data/g", { ephemeral: { volumeClaimTemplate: { spec: TEMPLATE } } }));
    const running = await c.podInPhase("eph", "Running", 180_000);
    const claim = await c.json("get", "pvc", "eph-data");
    expect(claim.metadata.ownerReferences).toMatchObject([{ kind: "Pod", name: "eph", uid: running.metadata.uid, controller: true }]);
    const pv = await c.json("get", "pv", claim.spec.volumeName);
    await until("the pod's file in the provisioned directory", () => existsSync(join(pv.spec.hostPath.path, "g")), 30_000);

    await c.cp.kubectl("delete", "pod", "eph", "--wait=true", "--timeout=60s");
    await until("the claim garbage-collected", async () => !(await c.cp.kubectl("get", "pvc", "-o", "name")).includes("eph-data"), 120_000, {
      intervalMs: 500,
    });
    await until("the teardown helper removed the directory", () => !existsSync(pv.spec.hostPath.path), 120_000, { intervalMs: 500 });
  }, 420_000);

  test("a claim of the ephemeral volume's name not made for the pod: never used, upstream's error", async () => {
    // A claim of the volume's name, bound (a static PV): only the owner check stands in the way.
    await apply(persistentVolume("squat-pv", { hostPath: { path: join(DATA, "squat"), type: "DirectoryOrCreate" } }));
    await apply(persistentVolumeClaim("squat-data", { volumeName: "squat-pv" }));
    await until("the claim Bound", async () => (await c.json("get", "pvc", "squat-data")).status?.phase === "Bound", 90_000, { intervalMs: 500 });
    // Bound to the node directly (no scheduler to refuse it): bunlet itself must refuse the claim.
    const pod = appPod(
      "squat",
      c.n.ctd.images.busybox,
      { command: ["sh", "-c", "exec sleep 3600"], volumeMounts: [{ name: "data", mountPath: "/data" }] },
      { restartPolicy: "Never", automountServiceAccountToken: false, volumes: [{ name: "data", ephemeral: { volumeClaimTemplate: { spec: TEMPLATE } } }] },
    );
    await apply(pod);
    await until(
      "bunlet's FailedMount naming the claim",
      async () =>
        (await c.cp.kubectl("get", "events", "--field-selector", "involvedObject.name=squat,reason=FailedMount", "-o", "json")).includes(
          "PVC default/squat-data was not created for pod default/squat (pod is not owner)",
        ),
      90_000,
      { intervalMs: 500 },
    );
    expect((await c.json("get", "pod", "squat")).status.phase).toBe("Pending");
    await c.cp.kubectl("delete", "pod", "squat", "--wait=true", "--timeout=60s");
    await c.cp.kubectl("delete", "pvc", "squat-data", "--wait=true", "--timeout=60s");
    await c.cp.kubectl("delete", "pv", "squat-pv", "--wait=true", "--timeout=60s");
  }, 240_000);
});
