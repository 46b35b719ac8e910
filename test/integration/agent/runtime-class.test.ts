// RuntimeClass against a real control plane (test/support/upstream) and a containerd (or CRI-O) with two
// runtime handlers, runc (the default) and runc-alt (runc with a state directory of its own, configured
// by scripts/host/containerd.sh and crio.sh; their crun handler cannot run on this hybrid v1 + v2 host):
// a pod of a RuntimeClass whose handler is runc-alt runs in such a sandbox (the CRI's runtimeHandler, the
// handler's state directory), the class's overhead — set on the pod by the API server's RuntimeClass
// admission — is in the pod cgroup's memory limit; a pod without a class runs with runc; a static pod
// naming a class the cluster does not have gets no sandbox and upstream's FailedCreatePodSandBox event
// (the API server's RuntimeClass admission refuses its mirror pod).
// Needs root, containerd or CRI-O and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canRunContainerd } from "../../support/containerd.ts";
import { appPod, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the RuntimeClass tests: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("RuntimeClass", () => {
  let c: UpstreamCluster;
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  /** The pod's sandbox as the CRI reports it. */
  const sandboxOf = async (uid: string) => {
    const [s] = await c.n.ctd.cri.listPodSandbox({ labelSelector: { "io.kubernetes.pod.uid": uid } });
    return (await c.n.ctd.cri.podSandboxStatus(s!.id)).status!;
  };
  /** A container's runc state directory under its handler's root: containerd adds its namespace (k8s.io), CRI-O does not. */
  const runcStateDir = (handler: string, containerID: string) => {
    const id = containerID.replace(/^[a-z-]+:\/\//, "");
    return join(c.n.ctd.dir, "state", handler, ...(c.n.ctd.runtime === "crio" ? [] : ["k8s.io"]), id);
  };

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "runtimeclass", binDir: bin.dir! });
    await apply({
      apiVersion: "node.k8s.io/v1",
      kind: "RuntimeClass",
      metadata: { name: "alt" },
      handler: "runc-alt",
      overhead: { podFixed: { cpu: "100m", memory: "32Mi" } },
    });
  }, 240_000);
  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("a pod of a RuntimeClass runs in a sandbox of its handler, its overhead in the pod cgroup's limit", async () => {
    const limits = { cpu: "200m", memory: "64Mi" };
    await apply(appPod("in-alt", c.n.ctd.images.busybox, { resources: { requests: limits, limits } }, { runtimeClassName: "alt" }));
    const p = await c.podInPhase("in-alt", "Running", 120_000).catch(async (e) => {
      console.error(await c.cp.kubectl("describe", "pod", "in-alt").catch((x) => String(x)));
      console.error(
        c.n.proc
          .stderr()
          .split("\n")
          .filter((l) => /in-alt/.test(l))
          .slice(-20)
          .join("\n"),
      );
      throw e;
    });
    expect(p.spec.overhead).toEqual({ cpu: "100m", memory: "32Mi" });
    const uid = p.metadata.uid as string;
    const sandbox = await sandboxOf(uid);
    // CRI-O leaves PodSandboxStatus.runtimeHandler empty (its server/sandbox_status.go never sets it;
    // the kubelet reads it nowhere): there the handler's state directory below is the evidence.
    if (c.n.ctd.runtime !== "crio") expect(sandbox.runtimeHandler).toBe("runc-alt");
    expect(existsSync(runcStateDir("runc-alt", p.status.containerStatuses[0].containerID))).toBe(true);
    const podLimit = Number(readFileSync(join("/sys/fs/cgroup/memory", c.n.cgroupRoot, `kubepods/pod${uid}/memory.limit_in_bytes`), "utf8"));
    expect(podLimit).toBe((64 + 32) * 1024 * 1024);
  }, 180_000);

  test("a pod without a class runs with the default handler (runc)", async () => {
    await apply(appPod("in-runc", c.n.ctd.images.busybox, {}));
    const p = await c.podInPhase("in-runc", "Running", 120_000);
    expect((await sandboxOf(p.metadata.uid)).runtimeHandler).toBe("");
    expect(existsSync(runcStateDir("runc", p.status.containerStatuses[0].containerID))).toBe(true);
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
    expect(await c.n.ctd.cri.listPodSandbox({ labelSelector: { "io.kubernetes.pod.name": mirror } })).toEqual([]);
  }, 120_000);
});
