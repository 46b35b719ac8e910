// Node autonomy against a real control plane (test/support/upstream): bunlet joined with `autonomy: true`
// runs an API pod with a secret volume, a configMap volume and the service account token; restarted while
// kube-apiserver is stopped it runs that pod again from its cache — the containers it finds are adopted
// (same IDs, no restart), and after a simulated reboot (the pod's containers removed through the CRI) they
// are made again from the cached pod, secret, configMap and token. With the API server back, an unchanged
// pod keeps its containers (restartCount 0, same container ID) and a pod deleted meanwhile is stopped. A
// corrupt cache file is reported (file and reason) and the rest of the cache still runs.
// Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canRunContainerd, testRuntimeCriName } from "../../support/containerd.ts";
import { appPod, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the node autonomy tests: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("node autonomy", () => {
  let c: UpstreamCluster;
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
    await c?.stop();
  }, 120_000);

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
      const cri = c.n.ctd.cri;
      for (const x of await cri.listContainers({ labelSelector: { "io.kubernetes.pod.uid": uid } })) {
        await cri.stopContainer(x.id, 0).catch(() => {});
        await cri.removeContainer(x.id);
      }
      for (const s of await cri.listPodSandbox({ labelSelector: { "io.kubernetes.pod.uid": uid } })) {
        await cri.stopPodSandbox(s.id).catch(() => {});
        await cri.removePodSandbox(s.id);
      }
    });
    const again = await until(
      "the pod's container made again from the cache",
      async () => {
        const ids = await running(uid);
        return ids.length === 1 ? ids[0] : undefined;
      },
      90_000,
    );
    expect(again).not.toBe(containerId);
    expect(logged("object=configmap/default/offline-config")).toBe(true);

    await c.cp.startApiServer();
    await waitLog("the reconcile", `uid=${uid} decision=stop`, 90_000);
    await until("the deleted pod's containers stopped", async () => (await running(uid)).length === 0, 60_000);
  }, 240_000);
});
