// RuntimeClass against a real control plane (test/support/upstream) and a containerd with two runtime
// handlers, runc (the default) and crun (scripts/host/containerd.sh adds it when crun is installed): a pod
// of a RuntimeClass whose handler is crun runs in a crun sandbox (the CRI's runtimeHandler, crun's state
// directory), the class's overhead — set on the pod by the API server's RuntimeClass admission — is in
// the pod cgroup's memory limit; a pod without a class runs with runc; a static pod naming a class the
// cluster does not have gets no sandbox, upstream's FailedCreatePodSandBox event on its mirror pod.
// Needs root, containerd, crun and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canRunContainerd } from "../../support/containerd.ts";
import { appPod, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
const hasCrun = spawnSync("sh", ["-c", "command -v crun"]).status === 0;
if (!bin.dir) console.warn(`skipping the RuntimeClass tests: ${bin.why}`);
else if (!hasCrun) console.warn("skipping the RuntimeClass tests: crun is not installed (scripts/host/setup.sh installs it)");

describe.skipIf(!canRunContainerd() || !bin.dir || !hasCrun)("RuntimeClass", () => {
  let c: UpstreamCluster;
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  /** The pod's sandbox as the CRI reports it. */
  const sandboxOf = async (uid: string) => {
    const [s] = await c.n.ctd.cri.listPodSandbox({ labelSelector: { "io.kubernetes.pod.uid": uid } });
    return (await c.n.ctd.cri.podSandboxStatus(s!.id)).status!;
  };

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "runtimeclass", binDir: bin.dir! });
    await apply({
      apiVersion: "node.k8s.io/v1",
      kind: "RuntimeClass",
      metadata: { name: "crun" },
      handler: "crun",
      overhead: { podFixed: { cpu: "100m", memory: "32Mi" } },
    });
  }, 240_000);
  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("a pod of a crun RuntimeClass runs in a crun sandbox, its overhead in the pod cgroup's limit", async () => {
    const limits = { cpu: "200m", memory: "64Mi" };
    await apply(appPod("in-crun", c.n.ctd.images.busybox, { resources: { requests: limits, limits } }, { runtimeClassName: "crun" }));
    const p = await c.podInPhase("in-crun", "Running", 120_000);
    expect(p.spec.overhead).toEqual({ cpu: "100m", memory: "32Mi" });
    const uid = p.metadata.uid as string;
    const sandbox = await sandboxOf(uid);
    expect(sandbox.runtimeHandler).toBe("crun");
    const containerId = (p.status.containerStatuses[0].containerID as string).replace("containerd://", "");
    expect(existsSync(join(c.n.ctd.dir, "state/crun/k8s.io", containerId))).toBe(true);
    const podLimit = Number(readFileSync(join("/sys/fs/cgroup/memory", c.n.cgroupRoot, `kubepods/pod${uid}/memory.limit_in_bytes`), "utf8"));
    expect(podLimit).toBe((64 + 32) * 1024 * 1024);
  }, 180_000);

  test("a pod without a class runs with the default handler (runc)", async () => {
    await apply(appPod("in-runc", c.n.ctd.images.busybox, {}));
    const p = await c.podInPhase("in-runc", "Running", 120_000);
    expect((await sandboxOf(p.metadata.uid)).runtimeHandler).toBe("");
    const containerId = (p.status.containerStatuses[0].containerID as string).replace("containerd://", "");
    expect(existsSync(join(c.n.ctd.dir, "state/runc/k8s.io", containerId))).toBe(true);
  }, 180_000);

  test("a static pod naming an unknown RuntimeClass: no sandbox, FailedCreatePodSandBox with upstream's NotFound", async () => {
    const pod = appPod("no-class", c.n.ctd.images.busybox, {}, { runtimeClassName: "missing" }) as { metadata: object };
    writeFileSync(join(c.n.manifests, "no-class.json"), JSON.stringify(pod));
    const mirror = `no-class-${c.n.node}`;
    const event = await until(
      "FailedCreatePodSandBox on the mirror pod",
      async () => {
        const list = await c.json("get", "events", "--field-selector", `involvedObject.name=${mirror},reason=FailedCreatePodSandBox`).catch(() => undefined);
        return list?.items?.[0];
      },
      60_000,
      { intervalMs: 500 },
    );
    expect(event.message).toBe('Failed to create pod sandbox: runtimeclass.node.k8s.io "missing" not found');
    expect((await c.json("get", "pod", mirror)).status.phase).toBe("Pending");
  }, 120_000);
});
