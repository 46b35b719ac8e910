// Scenario (h): node autonomy through a partition and a reboot, on the real control plane
// (test/support/upstream). bunlet, joined with `autonomy: true`, reaches kube-apiserver through a TCP
// proxy the scenario cuts and restores (./lib/tcp-proxy.ts); kubectl talks to kube-apiserver directly.
// Three API pods run — a secret volume, configMap env, a plain one. The link is cut, bunlet SIGKILLed,
// every container and sandbox of its pods removed through the CRI and their volume mounts unmounted (a
// reboot); bunlet starts again → all three run from the autonomy cache, the secret file and the env as
// before. Meanwhile the configMap-env pod is deleted and the plain one edited (an annotation, and its
// image: upstream restarts that container) with kubectl. The link restored → the deleted pod stops, the
// edited one runs its new image, the secret pod keeps the container started offline (restartCount 0),
// and the node renews its lease and writes its Node status (Ready).
// Prints the time from bunlet's start to all three running, and from the restore to the lease renewed
// and to the Node status written. `--blackhole`: the cut drops packets instead of refusing connections.
//   bun scripts/chaos/api-partition-reboot.ts [--blackhole]
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { testRuntimeCriName } from "../../test/support/containerd.ts";
import { appPod, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../test/support/upstream/index.ts";
import { cli, type Harness, type Scenario } from "./lib.ts";
import { startTcpProxy, type CutMode, type TcpProxy } from "./lib/tcp-proxy.ts";

const SECRET = { name: "partition-secret", key: "password", value: "s3cret" };
const CONFIG = { name: "partition-config", key: "mode", value: "edge" };
/** The pods by the part they play once the link is cut. */
const KEPT = "with-secret";
const DELETED = "with-env";
const EDITED = "plain";
const EDIT_ANNOTATION = "bunlet.dev/edited-offline";

const UID_LABEL = "io.kubernetes.pod.uid";

interface Ctx {
  h: Harness;
  c: UpstreamCluster;
  proxy: TcpProxy;
  uids: Record<string, string>;
}

const podsWanted = (image: string) => [
  appPod(KEPT, image, { volumeMounts: [{ name: "s", mountPath: "/etc/s" }] }, { volumes: [{ name: "s", secret: { secretName: SECRET.name } }] }),
  appPod(DELETED, image, { env: [{ name: "MODE", valueFrom: { configMapKeyRef: { name: CONFIG.name, key: CONFIG.key } } }] }),
  appPod(EDITED, image, {}),
];

/** The running containers of a pod, by UID (the CRI's view: no API server needed). */
async function running(c: UpstreamCluster, uid: string): Promise<string[]> {
  const all = await c.n.ctd.cri.listContainers({ labelSelector: { [UID_LABEL]: uid } });
  return all.filter((x) => x.state === "CONTAINER_RUNNING").map((x) => x.id);
}

async function exec(c: UpstreamCluster, id: string, cmd: string[]): Promise<string> {
  const r = await c.n.ctd.cri.execSync(id, cmd, 10);
  return new TextDecoder().decode(r.stdout).trim();
}

/** Runs the three pods and waits until the cache holds each pod, its token, the secret and the configMap. */
async function setUp(x: Ctx): Promise<void> {
  const { c, h } = x;
  await c.cp.kubectl("create", "secret", "generic", SECRET.name, `--from-literal=${SECRET.key}=${SECRET.value}`);
  await c.cp.kubectl("create", "configmap", CONFIG.name, `--from-literal=${CONFIG.key}=${CONFIG.value}`);
  for (const p of podsWanted(c.n.ctd.images.busybox)) await c.cp.kubectlIn(JSON.stringify(p), "apply", "-f", "-");
  for (const name of [KEPT, DELETED, EDITED]) x.uids[name] = (await c.podInPhase(name, "Running", 120_000)).metadata.uid;
  const dir = join(c.n.rootDir, "autonomy");
  await h.waitFor(
    "the pods, their tokens, the secret and the configMap in the autonomy cache",
    () => {
      const files = spawnSync("ls", [dir], { encoding: "utf8" }).stdout.split("\n");
      const has = (f: string) => files.includes(f);
      return (
        Object.values(x.uids).every((u) => has(`pod_${u}.json`) && files.some((f) => f.startsWith(`token_${u}_`))) &&
        has(`secret_default_${SECRET.name}.json`) &&
        has(`configmap_default_${CONFIG.name}.json`)
      );
    },
    60_000,
    200,
  );
  h.say(
    `3 pods Running and cached: ${Object.entries(x.uids)
      .map(([n, u]) => `${n}=${u}`)
      .join(" ")}`,
  );
}

/** A reboot of the node: its pods' containers and sandboxes removed, their volume mounts (tmpfs) gone. */
async function reboot(x: Ctx): Promise<number> {
  const cri = x.c.n.ctd.cri;
  for (const uid of Object.values(x.uids)) {
    for (const ctr of await cri.listContainers({ labelSelector: { [UID_LABEL]: uid } })) {
      await cri.stopContainer(ctr.id, 0).catch(() => {});
      await cri.removeContainer(ctr.id);
    }
    for (const s of await cri.listPodSandbox({ labelSelector: { [UID_LABEL]: uid } })) {
      await cri.stopPodSandbox(s.id).catch(() => {});
      await cri.removePodSandbox(s.id);
    }
  }
  const mounts = podMounts(x);
  for (const m of mounts) spawnSync("umount", [m], { encoding: "utf8" });
  const left = podMounts(x);
  if (left.length) throw new Error(`still mounted after umount: ${left.join(", ")}`);
  return mounts.length;
}

/** The mount points under the node's pods directory (its pods' volumes), deepest first. */
function podMounts(x: Ctx): string[] {
  const podsDir = `${join(x.c.n.rootDir, "pods")}/`;
  const points = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4] ?? "")
    .filter((m) => m.startsWith(podsDir));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Cut, crash, reboot, start: returns the new containers by pod name once all three run. */
async function offlineRestart(x: Ctx, mode: CutMode): Promise<Record<string, string>> {
  const { h, c } = x;
  x.proxy.cut(mode);
  h.say(`link cut (${mode})`);
  let startedAt = 0;
  await c.n.restart(async () => {
    const unmounted = await reboot(x);
    h.say(`bunlet SIGKILLed; reboot: every container and sandbox of its pods removed, ${unmounted} volume mounts unmounted`);
    startedAt = performance.now();
  }, "SIGKILL");
  const ids = await h.waitFor(
    "all three pods running again from the cache",
    async () => {
      const out: Record<string, string> = {};
      for (const [name, uid] of Object.entries(x.uids)) {
        const [id] = await running(c, uid);
        if (!id) return undefined;
        out[name] = id;
      }
      return out;
    },
    60_000,
    50,
  );
  h.note(`all 3 pods running ${(performance.now() - startedAt).toFixed(0)} ms after bunlet started, API server unreachable (goal ≤ 5000 ms)`);
  h.check("bunlet ran the pods of its autonomy cache", c.n.proc.stderr().includes("running the pods of the autonomy cache"));
  const secret = await exec(c, ids[KEPT]!, ["cat", `/etc/s/${SECRET.key}`]);
  h.check("the secret volume made again from the cache", secret === SECRET.value, `/etc/s/${SECRET.key}=${JSON.stringify(secret)}`);
  const env = await exec(c, ids[DELETED]!, ["sh", "-c", "echo $MODE"]);
  h.check("the configMap env made again from the cache", env === CONFIG.value, `MODE=${JSON.stringify(env)}`);
  return ids;
}

/** While the node is cut off: one pod deleted, one edited (an annotation and its image). */
async function editOffline(x: Ctx): Promise<string> {
  const { c, h } = x;
  const busybox = c.n.ctd.images.busybox;
  // The same image by its ID: another image for the API (upstream restarts the container), and present.
  const byId = (await c.n.ctd.cri.imageStatus(busybox))?.id;
  if (!byId) throw new Error(`${busybox} is not on the node`);
  await c.cp.kubectl("delete", "pod", DELETED, "--wait=false");
  const patch = { metadata: { annotations: { [EDIT_ANNOTATION]: "yes" } }, spec: { containers: [{ name: "app", image: byId }] } };
  await c.cp.kubectl("patch", "pod", EDITED, "--type=strategic", "-p", JSON.stringify(patch));
  h.say(`while cut off: ${DELETED} deleted; ${EDITED} annotated and its image set to ${byId}`);
  return byId;
}

/** The link back: the node's lease and Node status written again; returns when both are seen. */
async function nodeBack(x: Ctx, restoredAtMs: number, t0: number): Promise<void> {
  const { c, h } = x;
  let leaseMs: number | undefined;
  let statusMs: number | undefined;
  await h.waitFor(
    "the node's lease renewed and its Node status written after the restore",
    async () => {
      const [lease, node] = await Promise.all([c.json("get", "lease", "-n", "kube-node-lease", c.n.node), c.json("get", "node", c.n.node)]);
      const renewed = Date.parse(lease.spec.renewTime);
      if (leaseMs === undefined && renewed >= restoredAtMs) leaseMs = renewed - restoredAtMs;
      const ready = node.status.conditions.find((k: { type: string }) => k.type === "Ready");
      // lastHeartbeatTime has whole seconds: written after the restore, it is ≥ the restore's second.
      if (statusMs === undefined && ready?.status === "True" && Date.parse(ready.lastHeartbeatTime) >= Math.floor(restoredAtMs / 1000) * 1000)
        statusMs = performance.now() - t0;
      return leaseMs !== undefined && statusMs !== undefined;
    },
    60_000,
    100,
  );
  h.note(`lease renewed ${leaseMs} ms after the link was restored (its renewTime)`);
  h.note(`Node status written (Ready) ${statusMs!.toFixed(0)} ms after the link was restored, as seen by polling (goal ≤ 2000 ms)`);
  h.check("the Node is Ready after the link is back", true);
}

/** The link back: the deleted pod stops, the edited one runs its new image, the kept one is adopted. */
async function reconciled(x: Ctx, offline: Record<string, string>, image: string, t0: number): Promise<void> {
  const { c, h } = x;
  await h.waitFor(
    "the deleted pod stopped and gone from the API",
    async () => {
      const names = (await c.json("get", "pods")).items.map((p: { metadata: { name: string } }) => p.metadata.name);
      return !names.includes(DELETED) && (await running(c, x.uids[DELETED]!)).length === 0;
    },
    60_000,
    100,
  );
  h.check("the pod deleted while cut off was stopped", true);
  const edited = await h.waitFor(
    "the edited pod running its new image",
    async () => {
      const p = await c.json("get", "pod", EDITED);
      const s = p.status.containerStatuses?.[0];
      return s?.state?.running && s.containerID !== `${testRuntimeCriName}://${offline[EDITED]}` ? p : undefined;
    },
    60_000,
    100,
  );
  h.note(`deleted pod stopped and edited pod running its new image ${(performance.now() - t0).toFixed(0)} ms after the link was restored`);
  const es = edited.status.containerStatuses[0];
  h.check(
    "the edited pod's container was made again with its new image",
    edited.spec.containers[0].image === image && edited.metadata.annotations?.[EDIT_ANNOTATION] === "yes",
    `status image=${es.image} imageID=${es.imageID} restartCount=${es.restartCount}`,
  );
  const kept = await h.waitFor(
    "the kept pod's status from the node",
    async () => {
      const p = await c.json("get", "pod", KEPT);
      return p.status.containerStatuses?.[0]?.containerID === `${testRuntimeCriName}://${offline[KEPT]}` ? p : undefined;
    },
    30_000,
    100,
  );
  const s = kept.status.containerStatuses[0];
  h.check(
    "the unchanged pod keeps the container started offline (no restart)",
    s.restartCount === 0 && (await running(c, x.uids[KEPT]!)).join() === offline[KEPT],
    `containerID=${s.containerID} restartCount=${s.restartCount}`,
  );
}

async function run(h: Harness, mode: CutMode): Promise<void> {
  const bin = upstreamBinDir();
  if (!bin.dir) throw new Error(bin.why);
  let target = 0;
  const proxy = await startTcpProxy(() => ({ host: "127.0.0.1", port: target }));
  h.defer(() => proxy.stop());
  const c = await startUpstreamCluster({
    name: "partition",
    binDir: bin.dir,
    config: ["autonomy: true", "nodeStatusUpdateFrequency: 2s"],
    nodeServer: (cp) => {
      target = Number(new URL(cp.server).port);
      return `https://127.0.0.1:${proxy.port}`;
    },
  });
  h.defer(() => c.stop());
  const x: Ctx = { h, c, proxy, uids: {} };
  try {
    await setUp(x);
    const offline = await offlineRestart(x, mode);
    const image = await editOffline(x);
    const restoredAtMs = Date.now();
    const t0 = performance.now();
    proxy.restore();
    h.say("link restored");
    await Promise.all([nodeBack(x, restoredAtMs, t0), reconciled(x, offline, image, t0)]);
  } catch (e) {
    h.say(`bunlet's log (last 60 lines):\n${c.n.proc.stderr().split("\n").slice(-60).join("\n")}`);
    throw e;
  } finally {
    proxy.restore();
  }
}

export const apiPartitionReboot: Scenario = {
  name: "api-partition-reboot",
  description:
    "autonomy: link to the API server cut, bunlet crashed and the node rebooted → the cached pods run; link back → deleted stops, edited updates, the rest is adopted, Node Ready",
  timeoutMs: 300_000,
  // The cgroup v2 guest (one emulated CPU) runs the eviction scenarios only; this one runs on the host.
  unavailable: () =>
    process.env.BUNLET_CHAOS_NO_CONTROL_PLANE === "1" ? "BUNLET_CHAOS_NO_CONTROL_PLANE=1: the real control plane is not started here" : upstreamBinDir().why,
  run: (h) => run(h, "reset"),
};

if (import.meta.main) await cli(process.argv.includes("--blackhole") ? { ...apiPartitionReboot, run: (h) => run(h, "blackhole") } : apiPartitionReboot);
