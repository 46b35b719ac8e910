// Pods with hostUsers: false on a real node. On containerd 2 with runc ≥ 1.2 (built and cached by
// scripts/host/runtimes.sh, started here as a containerd of this file's own): the pod runs in its own
// user namespace — /proc/self/uid_map maps root to 65536 host ids from the pod's userns file, the
// container's process runs as that unprivileged host uid, an emptyDir is idmapped (root's file is
// root's on the host), a restarted agent keeps the pod's range, and the file goes with the pod. On
// the process's shared containerd (Debian's 1.6 with runc 1.1, which report no user namespace
// support) the same pod gets no sandbox: upstream's FailedCreatePodSandBox message — skipped when
// BUNLET_RUNC_BIN gives the shared containerd a runc that supports them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createNodeAgent, type NodeAgent } from "../../../src/agent.ts";
import { loadConfig } from "../../../src/config/load.ts";
import { POD_UID_LABEL } from "../../../src/pod/kuberuntime/labels.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { canRunContainerd, startOwnContainerd } from "../../support/containerd.ts";
import { captureLog, type LogCapture } from "../../support/log-capture.ts";
import { startStandaloneNode, type StandaloneNode } from "../../support/standalone.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const RUNTIMES = resolve(import.meta.dir, "../../../scripts/host/runtimes.sh");

/** A built runtime's directory (runtimes.sh <what> --path), undefined when not built. */
function built(what: "containerd" | "runc"): string | undefined {
  const r = spawnSync("bash", [RUNTIMES, what, "--path"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : undefined;
}
const containerd2 = canRunContainerd() ? built("containerd") : undefined;
const runc = canRunContainerd() ? built("runc") : undefined;
const userNamespacesRun = !!containerd2 && !!runc;
if (canRunContainerd() && !userNamespacesRun)
  console.warn("userns.test.ts: containerd 2 or runc ≥ 1.2 not built (bash scripts/host/runtimes.sh containerd; … runc): skipping the running pods");

/** A pod with its own user namespace, writing a file as root into an emptyDir, then sleeping. */
const usernsPod = (name: string, image: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  hostUsers: false
  terminationGracePeriodSeconds: 1
  volumes:
    - name: data
      emptyDir: {}
  containers:
    - name: main
      image: ${image}
      command: ["sh", "-c", "touch /data/by-root && exec sleep 3600"]
      volumeMounts:
        - { name: data, mountPath: /data }
`;

interface Mapping {
  hostId: number;
  containerId: number;
  length: number;
}

describe.skipIf(!userNamespacesRun)("hostUsers: false on containerd 2 with runc ≥ 1.2", () => {
  const NODE = "usernsnode";
  const BASE = `/tmp/bunlet-userns-${PID}`;
  const ROOT = join(BASE, "root");
  let node: StandaloneNode;
  let restarted: NodeAgent | undefined;

  const podsNow = async (url: string) => ((await (await fetch(`${url}/pods`)).json()) as { items: Pod[] }).items;
  const running = (url: string, name: string) =>
    until(`${name} Running`, async () => (await podsNow(url)).find((p) => p.metadata.name === `${name}-${NODE}` && p.status?.phase === "Running"), 120_000);
  const mappingOf = (uid: string): { uidMappings: Mapping[]; gidMappings: Mapping[] } => JSON.parse(readFileSync(join(ROOT, "pods", uid, "userns"), "utf8"));
  const containerOf = async (uid: string) => {
    const cs = await node.ctd.cri.listContainers({ labelSelector: { [POD_UID_LABEL]: uid } });
    return cs.find((c) => c.state === "CONTAINER_RUNNING")!;
  };

  beforeAll(async () => {
    node = await startStandaloneNode({
      base: BASE,
      cgroupRoot: `/bunlet-userns-${PID}`,
      node: NODE,
      containerd: () => startOwnContainerd({ name: "userns", containerdBin: containerd2, runcBin: runc }),
      prepare: ({ ctd, manifests }) => writeFileSync(join(manifests, "alone.yaml"), usernsPod("alone", ctd.images.busybox)),
    });
  }, 600_000);

  afterAll(async () => {
    await restarted?.stop();
    await node?.stop();
  }, 120_000);

  test("the runtime reports user namespace support for its default handler", async () => {
    const st = await node.ctd.cri.status(false);
    expect(st.runtimeHandlers?.find((h) => h.name === "")?.features?.userNamespaces).toBe(true);
  });

  test("root in the pod is 65536 unprivileged host ids, from the pod's userns file; volumes are idmapped", async () => {
    const pod = await running(node.url, "alone");
    const uid = pod.metadata.uid;
    const file = mappingOf(uid);
    const m = file.uidMappings[0]!;
    expect(file).toEqual({ uidMappings: [m], gidMappings: [m] });
    expect(m.containerId).toBe(0);
    expect(m.length).toBe(65536);
    expect(m.hostId).toBeGreaterThanOrEqual(65536);
    expect(m.hostId % 65536).toBe(0);

    const c = await containerOf(uid);
    const inside = await node.ctd.cri.execSync(c.id, ["cat", "/proc/self/uid_map"], 10);
    expect(new TextDecoder().decode(inside.stdout).trim().split(/\s+/).map(Number)).toEqual([0, m.hostId, 65536]);

    // On the host the container's process runs as the pod's first host uid, not root.
    const st = await node.ctd.cri.containerStatus(c.id, true);
    const pid = JSON.parse(st.info?.info ?? "{}").pid as number;
    expect(pid).toBeGreaterThan(0);
    const uids = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1];
    expect(Number(uids)).toBe(m.hostId);

    // The emptyDir is idmapped: the file root wrote in the pod is root's on the host.
    const written = join(ROOT, "pods", uid, "volumes", "kubernetes.io~empty-dir", "data", "by-root");
    await until("the pod's file in its emptyDir", async () => existsSync(written), 30_000);
    expect(statSync(written).uid).toBe(0);
  }, 180_000);

  test("a restarted agent keeps the pod's range and gives a new pod another one; the file goes with the pod", async () => {
    const before = await running(node.url, "alone");
    const uid = before.metadata.uid;
    const range = mappingOf(uid).uidMappings[0]!.hostId;
    const containerId = (await containerOf(uid)).id;

    await node.agent.stop();
    const loaded = await loadConfig(["--config", join(BASE, "kubelet.yaml"), `--hostname-override=${NODE}`, `--root-dir=${ROOT}`]);
    restarted = createNodeAgent(loaded, { protectSelf: false });
    await restarted.start();
    expect(await restarted.runtimeReady).toBe(true);
    const url = restarted.servers()!.get("main")!.url;
    await running(url, "alone");
    // The same container, the same range: nothing was recreated.
    expect((await containerOf(uid)).id).toBe(containerId);
    expect(mappingOf(uid).uidMappings[0]!.hostId).toBe(range);

    writeFileSync(join(node.manifests, "second.yaml"), usernsPod("second", node.ctd.images.busybox));
    const second = await running(url, "second");
    expect(mappingOf(second.metadata.uid).uidMappings[0]!.hostId).not.toBe(range);

    rmSync(join(node.manifests, "alone.yaml"));
    await until("alone's userns file removed", async () => !existsSync(join(ROOT, "pods", uid, "userns")), 60_000);
    expect((await podsNow(url)).some((p) => p.metadata.uid === uid)).toBe(false);
  }, 240_000);
});

describe.skipIf(!canRunContainerd() || !!process.env.BUNLET_RUNC_BIN)("hostUsers: false on a runtime without user namespace support", () => {
  const NODE = "nouserns";
  const BASE = `/tmp/bunlet-nouserns-${PID}`;
  let node: StandaloneNode;
  let logs: LogCapture;

  beforeAll(async () => {
    logs = captureLog();
    node = await startStandaloneNode({
      base: BASE,
      cgroupRoot: `/bunlet-nouserns-${PID}`,
      node: NODE,
      prepare: ({ ctd, manifests }) => writeFileSync(join(manifests, "refused.yaml"), usernsPod("refused", ctd.images.busybox)),
    });
  }, 600_000);

  afterAll(async () => {
    logs?.stop();
    await node?.stop();
  }, 120_000);

  test("no sandbox: upstream's FailedCreatePodSandBox message; the pod stays Pending and nothing else fails", async () => {
    const st = await node.ctd.cri.status(false);
    expect(st.runtimeHandlers?.find((h) => h.name === "")?.features?.userNamespaces ?? false).toBe(false);
    const want = "Failed to create pod sandbox: can't set `spec.hostUsers: false`, runtime does not support user namespaces";
    await until("FailedCreatePodSandBox event", async () => logs.lines.some((l) => l.includes("FailedCreatePodSandBox") && l.includes(want)), 60_000);
    const pods = ((await (await fetch(`${node.url}/pods`)).json()) as { items: Pod[] }).items;
    const pod = pods.find((p) => p.metadata.name === `refused-${NODE}`)!;
    expect(pod.status?.phase).toBe("Pending");
    const sandboxes = await node.ctd.cri.listPodSandbox({ labelSelector: { [POD_UID_LABEL]: pod.metadata.uid } });
    expect(sandboxes).toEqual([]);
    expect(existsSync(join(BASE, "root", "pods", pod.metadata.uid, "userns"))).toBe(false);
  }, 120_000);
});
