// persistentVolumeClaim volumes against a real control plane (test/support/upstream): kube-controller-manager
// binds statically provisioned PVs to their claims, and bunlet — through the API server's Node authorizer —
// reads each claim and its PV. A local PV: a pod writes a file (its fsGroup applied, the PV bind-mounted in
// the pod's directory, nothing in the node's volumesInUse); deleted, its mount goes; a new pod reads the
// file back. A hostPath PV: written by one pod, read by another through a readOnly claim that refuses
// writes, and left without the pod's fsGroup. A claim with no PV: the pod waits Pending with upstream's
// FailedMount event until the claim is bound, then runs. A claim bound to an nfs PV: the pod waits, the
// event naming the PV and its source. A local Block PV on a loop device the test makes: the container
// gets the device at its volumeDevices path and writes through it, and the summary has the device's size;
// while the pod runs the device is bound on its global map file with a loop device on it, both gone with
// the pod; the same claim in volumeMounts, or a Filesystem claim in volumeDevices, waits with upstream's volumeMode
// error.
// Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  statfsSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { localGlobalMapPath } from "../../../src/pod/volumes/block-volume.ts";
import { execCommand } from "../../../src/pod/volumes/exec.ts";
import { mountPointsUnder } from "../../../src/pod/volumes/mount-points.ts";
import { loopDevicesUnder } from "../../../src/pod/volumes/volume-path-handler.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { appPod, NODE_NAME, startUpstreamCluster, summaryVolume, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the persistent volume tests: ${bin.why}`);

const DATA = `/tmp/bunlet-pv-data-${process.pid}`;
const FS_GROUP = 2345;

/** A PV of `source` (no storage class, 1Gi, RWO); `local` PVs need node affinity (API validation). */
const pv = (name: string, source: object) => ({
  apiVersion: "v1",
  kind: "PersistentVolume",
  metadata: { name },
  spec: {
    capacity: { storage: "1Gi" },
    accessModes: ["ReadWriteOnce"],
    persistentVolumeReclaimPolicy: "Retain",
    storageClassName: "",
    ...source,
    ...("local" in source
      ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [NODE_NAME] }] }] } } }
      : {}),
  },
});
/** A claim of the default namespace bound to the PV `volumeName` (none: any PV of no class). */
const pvc = (name: string, volumeName?: string) => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name, namespace: "default" },
  spec: { accessModes: ["ReadWriteOnce"], storageClassName: "", resources: { requests: { storage: "1Gi" } }, ...(volumeName ? { volumeName } : {}) },
});

describe.skipIf(!canRunContainerd() || !bin.dir)("persistentVolumeClaim volumes", () => {
  let c: UpstreamCluster;
  const kubectl = (...args: string[]) => c.cp.kubectl(...args);
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  /** A pod whose container runs `script` with the claim `claim` at /data (then sleeps); restartPolicy Never. */
  const claimPod = (name: string, claim: string, script: string, o: { readOnly?: boolean; fsGroup?: number } = {}) =>
    appPod(
      name,
      c.n.ctd.images.busybox,
      { command: ["sh", "-c", `${script} && exec sleep 3600`], volumeMounts: [{ name: "data", mountPath: "/data" }] },
      {
        restartPolicy: "Never",
        automountServiceAccountToken: false,
        ...(o.fsGroup !== undefined ? { securityContext: { fsGroup: o.fsGroup } } : {}),
        volumes: [{ name: "data", persistentVolumeClaim: { claimName: claim, ...(o.readOnly ? { readOnly: true } : {}) } }],
      },
    );
  const claimBound = (name: string) =>
    until(`claim ${name} Bound`, async () => (await c.json("get", "pvc", name)).status?.phase === "Bound", 90_000, { intervalMs: 500 });
  const failedMount = (pod: string, text: string) =>
    until(
      `${pod}'s FailedMount event: ${text}`,
      async () =>
        (await c.json("get", "events")).items.find((e: any) => e.reason === "FailedMount" && e.involvedObject?.name === pod && e.message.includes(text)),
      60_000,
      { intervalMs: 500 },
    );
  const deletePod = (name: string) => kubectl("delete", "pod", name, "--wait=true", "--timeout=60s");
  const podsDir = () => join(c.n.rootDir, "pods");

  beforeAll(async () => {
    mkdirSync(join(DATA, "local"), { recursive: true });
    c = await startUpstreamCluster({ name: "pv", binDir: bin.dir!, config: ["syncFrequency: 5s", "volumeStatsAggPeriod: 5s"] });
  }, 240_000);
  let loopDevice: string | undefined;
  const detachLoop = () => {
    if (loopDevice) Bun.spawnSync(["losetup", "-d", loopDevice], { stdout: "ignore", stderr: "ignore" });
    loopDevice = undefined;
  };
  afterAll(async () => {
    const rootDir = c?.n.rootDir;
    // A fd lock the teardown left (a failed test) is detached, its global map file unmounted.
    if (rootDir) for (const loop of await loopDevicesUnder(rootDir)) await execCommand("losetup", ["-d", loop]);
    if (rootDir) for (const mp of mountPointsUnder(join(rootDir, "plugins"))) Bun.spawnSync(["umount", "-l", mp]);
    await c?.stop();
    detachLoop();
    rmSync(DATA, { recursive: true, force: true });
  }, 120_000);

  test("a local PV: written by one pod with its fsGroup, read back by the next", async () => {
    await apply(pv("local-pv", { local: { path: join(DATA, "local") } }));
    await apply(pvc("local-claim"));
    await claimBound("local-claim");
    await apply(claimPod("local-writer", "local-claim", "echo kept > /data/f", { fsGroup: FS_GROUP }));
    const writer = await c.podInPhase("local-writer", "Running", 120_000);
    expect(readFileSync(join(DATA, "local", "f"), "utf8")).toBe("kept\n");
    // upstream's local plugin: the volume gets the pod's fsGroup, setgid, on its first mount.
    const st = statSync(join(DATA, "local"));
    expect(st.gid).toBe(FS_GROUP);
    expect(st.mode & 0o2000).toBe(0o2000);
    const target = join(podsDir(), writer.metadata.uid, "volumes", "kubernetes.io~local-volume", "local-pv");
    expect(mountPointsUnder(target)).toEqual([target]);
    // local and hostPath are not attachable plugins: upstream reports neither in volumesInUse.
    expect((await c.json("get", "node", NODE_NAME)).status.volumesInUse).toBeUndefined();
    // The local PV's statfs in the Summary API, with its claim (upstream MetricsStatFS).
    const vol = await summaryVolume(c, writer.metadata.uid, "data");
    expect(vol).toMatchObject({ pvcRef: { name: "local-claim", namespace: "default" } });
    expect(vol.capacityBytes).toBe(statfsSync(target).blocks * statfsSync(target).bsize);

    await deletePod("local-writer");
    await until("the writer's bind mount gone", () => mountPointsUnder(target).length === 0, 30_000);
    await apply(claimPod("local-reader", "local-claim", 'test "$(cat /data/f)" = kept'));
    await c.podInPhase("local-reader", "Running", 120_000);
    await deletePod("local-reader");
  }, 300_000);

  test("a hostPath PV: created for DirectoryOrCreate, no fsGroup; a readOnly claim reads and cannot write", async () => {
    const dir = join(DATA, "hostpath", "made");
    await apply(pv("host-pv", { hostPath: { path: dir, type: "DirectoryOrCreate" } }));
    await apply(pvc("host-claim", "host-pv"));
    await claimBound("host-claim");
    await apply(claimPod("host-writer", "host-claim", "echo kept > /data/f", { fsGroup: FS_GROUP }));
    await c.podInPhase("host-writer", "Running", 120_000);
    expect(readFileSync(join(dir, "f"), "utf8")).toBe("kept\n");
    expect(statSync(dir).gid).not.toBe(FS_GROUP);
    await deletePod("host-writer");

    await apply(claimPod("host-reader", "host-claim", 'test "$(cat /data/f)" = kept && ! touch /data/g 2>/dev/null', { readOnly: true }));
    await c.podInPhase("host-reader", "Running", 120_000);
    await deletePod("host-reader");
  }, 300_000);

  test("a claim not bound: the pod waits Pending with upstream's event, then runs once the claim is bound", async () => {
    await apply(pvc("late-claim"));
    await apply(claimPod("late", "late-claim", "echo ok > /data/f"));
    await failedMount(
      "late",
      "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/late-claim: PVC is not bound",
    );
    const waiting = await c.json("get", "pod", "late");
    expect(waiting.status.phase).toBe("Pending");
    expect(waiting.status.containerStatuses?.[0]?.state?.waiting?.reason ?? "ContainerCreating").toBe("ContainerCreating");

    mkdirSync(join(DATA, "late"), { recursive: true });
    await apply(pv("late-pv", { local: { path: join(DATA, "late") } }));
    await claimBound("late-claim");
    await c.podInPhase("late", "Running", 120_000);
    expect(readFileSync(join(DATA, "late", "f"), "utf8")).toBe("ok\n");
    await deletePod("late");
  }, 300_000);

  test("a local Block PV: the device at the container's devicePath; a Block claim mounted or a Filesystem claim as a device waits", async () => {
    const image = join(DATA, "block.img");
    writeFileSync(image, "");
    truncateSync(image, 8 << 20);
    const attach = Bun.spawnSync(["losetup", "--find", "--show", image]);
    expect(attach.exitCode).toBe(0);
    loopDevice = attach.stdout.toString().trim();
    try {
      await apply(pv("block-pv", { local: { path: loopDevice }, volumeMode: "Block" }));
      const blockClaim = pvc("block-claim", "block-pv");
      await apply({ ...blockClaim, spec: { ...blockClaim.spec, volumeMode: "Block" } });
      await claimBound("block-claim");
      const devicePod = (name: string, claim: string, script: string) =>
        appPod(
          name,
          c.n.ctd.images.busybox,
          { command: ["sh", "-c", `${script} && exec sleep 3600`], volumeDevices: [{ name: "data", devicePath: "/dev/xvda" }] },
          { restartPolicy: "Never", automountServiceAccountToken: false, volumes: [{ name: "data", persistentVolumeClaim: { claimName: claim } }] },
        );
      await apply(devicePod("block-user", "block-claim", "test -b /dev/xvda && printf block-ok | dd of=/dev/xvda conv=notrunc 2>/dev/null"));
      const user = await c.podInPhase("block-user", "Running", 120_000);
      const link = join(podsDir(), user.metadata.uid, "volumeDevices", "kubernetes.io~local-volume", "block-pv");
      // upstream MapBlockVolume: the device bound on <globalMapPath>/<pod UID>, a loop device on it (the fd lock).
      const globalMapPath = localGlobalMapPath(c.n.rootDir, "block-pv");
      const globalMapFile = join(globalMapPath, user.metadata.uid);
      expect(lstatSync(globalMapFile).isBlockDevice()).toBe(true);
      expect(mountPointsUnder(globalMapPath)).toEqual([globalMapFile]);
      expect((await execCommand("losetup", ["-j", globalMapFile])).output.trim()).toMatch(/^\/dev\/loop\d+: .*/);
      const written = () => {
        const fd = openSync(loopDevice!, "r");
        try {
          const buf = Buffer.alloc(8);
          readSync(fd, buf, 0, 8, 0);
          return buf.toString();
        } finally {
          closeSync(fd);
        }
      };
      await until("the container's write on the device", () => written() === "block-ok", 30_000, { intervalMs: 300 });
      // upstream MetricsBlock: the device's size and nothing else, with the claim.
      const vol = await summaryVolume(c, user.metadata.uid, "data");
      expect(vol).toMatchObject({ pvcRef: { name: "block-claim", namespace: "default" }, capacityBytes: 8 << 20, usedBytes: 0, inodes: 0 });
      await deletePod("block-user");
      await until("the pod's device link gone", () => !existsSync(link), 30_000);
      // UnmapVolume and UnmapDevice: the loop device detached, the global map file unmounted and removed.
      await until("the global map path gone", () => !existsSync(globalMapPath), 30_000);
      expect(mountPointsUnder(join(c.n.rootDir, "plugins"))).toEqual([]);
      expect(await loopDevicesUnder(c.n.rootDir)).toEqual([]);

      await apply(claimPod("block-mounted", "block-claim", "true"));
      await failedMount("block-mounted", "failed to process volumes=[data]: volume data has volumeMode Block, but is specified in volumeMounts");
      await kubectl("delete", "pod", "block-mounted", "--wait=true", "--timeout=60s");
      mkdirSync(join(DATA, "fs"), { recursive: true });
      await apply(pv("fs-pv", { hostPath: { path: join(DATA, "fs") } }));
      await apply(pvc("fs-claim", "fs-pv"));
      await claimBound("fs-claim");
      await apply(devicePod("fs-device", "fs-claim", "true"));
      await failedMount("fs-device", "volume data has volumeMode Filesystem, but is specified in volumeDevices");
      await kubectl("delete", "pod", "fs-device", "--wait=true", "--timeout=60s");
    } finally {
      for (const p of ["block-user", "block-mounted", "fs-device"])
        await kubectl("delete", "pod", p, "--ignore-not-found", "--force", "--grace-period=0").catch(() => {});
      detachLoop();
    }
  }, 300_000);

  test("a claim bound to an nfs PV: the pod waits, the event naming the PV and its source", async () => {
    await apply(pv("nfs-pv", { nfs: { server: "192.0.2.1", path: "/export" } }));
    await apply(pvc("nfs-claim", "nfs-pv"));
    await claimBound("nfs-claim");
    await apply(claimPod("on-nfs", "nfs-claim", "true"));
    await failedMount("on-nfs", 'failed to get Plugin from volumeSpec for volume "nfs-pv" err=no volume plugin matched: PV nfs-pv has a nfs volume source');
    expect((await c.json("get", "pod", "on-nfs")).status.phase).toBe("Pending");
    await kubectl("delete", "pod", "on-nfs", "--wait=true", "--timeout=60s");
  }, 180_000);
});
