// The four static pod manifests `kubeadm init` writes for a control-plane
// node (test/fixtures/kubeadm, only the images swapped for local ones) all reach Running — and Ready,
// through their startup/readiness probes — on the compiled bunlet and the private containerd.
// etcd is Debian's real etcd serving kubeadm's flags (TLS, metrics on 127.0.0.1:2381); the other
// three are stand-ins that answer their HTTPS probes. Every hostPath is moved under a temporary
// root (test/support/kubeadm.ts): the host's /etc/kubernetes and /var/lib/etcd are never touched.
// hostNetwork: the pods bind kubeadm's ports (2379-2381, 6443, 10257, 10259) on loopback.
// Then examples/manifests/control-plane (the control-plane-like set of docs/pods.md) runs the same way.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, readlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Pod } from "../../src/pod/types.ts";
import { staticPodFlags } from "../support/agent.ts";
import { ensureBuilt, freePort, killAll, pollUntil, ROOT, spawnBunlet, waitForHealthz, type BunletProcess } from "../support/binary.ts";
import { acquireContainerd, canRunContainerd, removeSandboxes, tearDownPods, type TestContainerd } from "../support/containerd.ts";
import { KUBEADM_COMPONENTS, KUBEADM_NODE, kubeadmManifest, prepareKubeadmHost, withHostPathsUnder } from "../support/kubeadm.ts";

const PID = process.pid;

describe.skipIf(!canRunContainerd())("kubeadm control plane", () => {
  let ctd: TestContainerd;
  const base = `/tmp/bunlet-e2e-kubeadm-${PID}`;
  const manifests = join(base, "manifests");
  const hostRoot = join(base, "host");
  const cgroupRoot = `/bunlet-e2e-kubeadm-${PID}`;
  const node = `kcp-${PID}`;
  let port = 0;
  let p: BunletProcess | undefined;

  const pods = async (): Promise<Pod[]> => ((await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Pod[] }).items;
  const ready = (pod: Pod | undefined) => pod?.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";

  beforeAll(async () => {
    await ensureBuilt();
    ctd = await acquireContainerd();
    mkdirSync(manifests, { recursive: true });
    await prepareKubeadmHost(hostRoot);
    port = freePort();
  }, 600_000);

  afterAll(async () => {
    await p?.stop("SIGTERM", 5000);
    await killAll();
    await tearDownPods(ctd, () => removeSandboxes(ctd.cri, node), cgroupRoot, base);
  }, 120_000);

  test("etcd, kube-apiserver, kube-controller-manager and kube-scheduler reach Running and Ready", async () => {
    for (const c of KUBEADM_COMPONENTS) writeFileSync(join(manifests, `${c}.yaml`), withHostPathsUnder(kubeadmManifest(c), hostRoot));
    p = spawnBunlet([
      ...staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot, endpoint: ctd.endpoint, node, port }),
      "--file-check-frequency=1s",
    ]);
    await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`);
    const names = KUBEADM_COMPONENTS.map((c) => `${c}-${node}`);
    const byName = async () => new Map((await pods()).map((x) => [x.metadata.name, x]));
    try {
      await pollUntil(
        async () => {
          const m = await byName();
          return names.every((n) => m.get(n)?.status?.phase === "Running");
        },
        "all four control-plane pods Running",
        120_000,
        250,
      );
      // Startup probes wait initialDelaySeconds (10 s) and pass on their first try; the apiserver's
      // readiness probe then follows within a second.
      await pollUntil(
        async () => {
          const m = await byName();
          return names.every((n) => ready(m.get(n)));
        },
        "all four control-plane pods Ready",
        120_000,
        500,
      );
    } catch (e) {
      const m = await byName().catch(() => new Map<string, Pod>());
      const states = names.map((n) => `${n}: ${JSON.stringify(m.get(n)?.status ?? "absent")}`).join("\n");
      throw new Error(`${(e as Error).message}\n${states}\n--- bunlet stderr (tail) ---\n${p.stderr().slice(-6000)}`);
    }
    const m = await byName();
    for (const n of names) {
      const pod = m.get(n)!;
      expect(pod.metadata.namespace).toBe("kube-system");
      expect(pod.spec.priority).toBe(2000001000);
      expect(pod.status!.containerStatuses![0]!.restartCount).toBe(0);
    }
    // What reached the runtime (the OCI spec containerd holds): RuntimeDefault seccomp, the host's
    // network namespace, the hostPaths (moved under hostRoot) at kubeadm's mount paths.
    for (const n of names) {
      const id = m.get(n)!.status!.containerStatuses![0]!.containerID!.replace("containerd://", "");
      const spec = JSON.parse((await ctd.cri.containerStatus(id, true)).info?.info ?? "{}").runtimeSpec as {
        linux: { seccomp?: { defaultAction: string }; namespaces: { type: string; path?: string }[] };
        mounts: { destination: string; source: string }[];
      };
      expect(spec.linux.seccomp?.defaultAction).toBe("SCMP_ACT_ERRNO");
      // The container joins its sandbox's network namespace: with hostNetwork, that is the host's.
      const net = spec.linux.namespaces.find((x) => x.type === "network");
      if (net?.path) expect(readlinkSync(net.path)).toBe(readlinkSync("/proc/self/ns/net"));
      const volumes = (m.get(n)!.spec.volumes ?? []).length;
      expect(spec.mounts.filter((x) => x.source.startsWith(`${hostRoot}/`)).length).toBe(volumes);
    }
    // The real etcd answers kubeadm's probe endpoint on the host network...
    const health = await fetch("http://127.0.0.1:2381/health?serializable=false");
    expect(health.status).toBe(200);
    expect(((await health.json()) as { health: string }).health).toBe("true");
    // ...and the apiserver stand-in its HTTPS /livez on the advertise address.
    const livez = Bun.spawnSync(["curl", "-sk", "--max-time", "5", `https://${KUBEADM_NODE.address}:6443/livez`]);
    expect(livez.stdout.toString().trim()).toBe("ok");
    // Removing the manifests removes the pods (the next test reuses the names in kube-system).
    for (const c of KUBEADM_COMPONENTS) unlinkSync(join(manifests, `${c}.yaml`));
    await pollUntil(
      async () => (await ctd.cri.listPodSandbox()).every((x) => !names.includes(x.metadata?.name ?? "")),
      "control-plane pods removed",
      90_000,
      250,
    );
  }, 300_000);

  test("examples/manifests/control-plane reaches Running and Ready, priority resolved from the class name", async () => {
    const dir = join(ROOT, "examples/manifests/control-plane");
    const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));
    mkdirSync(join(hostRoot, "var/lib"), { recursive: true });
    for (const f of files) writeFileSync(join(manifests, `example-${f}`), withHostPathsUnder(readFileSync(join(dir, f), "utf8"), hostRoot));
    if (!p) {
      p = spawnBunlet([
        ...staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot, endpoint: ctd.endpoint, node, port }),
        "--file-check-frequency=1s",
      ]);
      await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`);
    }
    const names = files.map((f) => `${f.replace(/\.yaml$/, "")}-${node}`);
    const byName = async () => new Map((await pods()).map((x) => [x.metadata.name, x]));
    try {
      await pollUntil(
        async () => {
          const m = await byName();
          return names.every((n) => m.get(n)?.status?.phase === "Running" && ready(m.get(n)));
        },
        "the example control plane Running and Ready",
        120_000,
        250,
      );
    } catch (e) {
      const m = await byName().catch(() => new Map<string, Pod>());
      throw new Error(`${(e as Error).message}\n${names.map((n) => `${n}: ${JSON.stringify(m.get(n)?.status ?? "absent")}`).join("\n")}`);
    }
    const m = await byName();
    for (const n of names) expect(m.get(n)!.spec.priority).toBe(2000001000);
  }, 300_000);
});
