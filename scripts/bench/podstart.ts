// Pod start benchmark of the compiled agent on containerd: a static pod manifest lands in
// staticPodPath → its container is RUNNING (CRI ListContainers, polled every 2 ms).
//   bun scripts/bench/podstart.ts [runs] [--pod-network]      (default 20 runs, hostNetwork pods)
// Starts its own private containerd (test/support/containerd.ts) and dist/bunlet (built first if
// stale) in temporary directories, uses the offline image bunlet.local/busybox:1 (already present:
// no pull is timed), removes each pod before the next run, and cleans up everything — pods, cgroups,
// directories, containerd, bunlet — on exit, failure or Ctrl-C.
// Prints median/p90 against the goal (≤ 1 s) and the ratios.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BunletProcess, BINARY, ensureBuilt, freePort, killAll, spawnBunlet, waitForHealthz } from "../../test/support/binary.ts";
import { staticPodFlags } from "../../test/support/agent.ts";
import { removeCgroupTree } from "../../test/support/cgroup.ts";
import { staticPodYaml } from "../../test/support/manifests.ts";
import { type TestContainerd, acquireContainerd } from "../../test/support/containerd.ts";
import { pollUntil } from "../../test/support/wait.ts";

const GOAL_MS = 1000;
const args = process.argv.slice(2);
const runs = Number(args.find((a) => /^\d+$/.test(a)) ?? 20);
const podNetwork = args.includes("--pod-network");
const POD_NAME_LABEL = "io.kubernetes.pod.name";

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

const base = mkdtempSync(join(tmpdir(), `bunlet-bench-podstart-${process.pid}-`));
const manifests = join(base, "manifests");
const staging = join(base, "staging");
const cgroupRoot = `/bunlet-bench-podstart-${process.pid}`;
const node = `bench-${process.pid}`;
let ctd: TestContainerd | undefined;
let agent: BunletProcess | undefined;

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await agent?.stop("SIGTERM", 10_000).catch(() => {});
    await killAll();
    try {
      // The agent leaves running pods running (as the kubelet does): remove ours.
      for (const s of (await ctd?.cri.listPodSandbox().catch(() => [])) ?? []) {
        if (!s.metadata?.name.endsWith(`-${node}`)) continue;
        for (const c of await ctd!.cri.listContainers({ podSandboxId: s.id }).catch(() => [])) await ctd!.cri.removeContainer(c.id).catch(() => {});
        await ctd!.cri.stopPodSandbox(s.id).catch(() => {});
        await ctd!.cri.removePodSandbox(s.id).catch(() => {});
      }
    } finally {
      removeCgroupTree(cgroupRoot);
      rmSync(base, { recursive: true, force: true });
      await ctd?.release();
    }
  })();
  return cleaning;
}
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    console.error(`\n${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });

const manifest = (name: string) =>
  staticPodYaml(name, {
    image: "bunlet.local/busybox:1",
    command: ["sleep", "3600"],
    terminationGracePeriodSeconds: 0,
    hostNetwork: !podNetwork,
    container: "      imagePullPolicy: IfNotPresent\n",
  });

const startMs: number[] = [];
try {
  await ensureBuilt();
  ctd = await acquireContainerd();
  const cri = ctd.cri;
  mkdirSync(manifests, { recursive: true });
  mkdirSync(staging, { recursive: true });
  const port = freePort();
  agent = spawnBunlet(staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot, endpoint: ctd.endpoint, node, port }));
  await waitForHealthz(agent, `http://127.0.0.1:${port}/healthz`);
  // The agent starts pods only once the runtime answered; an empty /pods confirms the lifecycle is up.
  await pollUntil(async () => (await fetch(`http://127.0.0.1:${port}/pods`)).ok, "the agent's pod lifecycle", 30_000, 50);

  const sandboxesOf = async (podName: string) => cri.listPodSandbox({ labelSelector: { [POD_NAME_LABEL]: podName } });
  // A warm-up pod (not timed): first-use costs (snapshot of the image, QoS cgroups) are paid once.
  for (let i = -1; i < runs; i++) {
    const name = i < 0 ? "warmup" : `run${i}`;
    const podName = `${name}-${node}`;
    writeFileSync(join(staging, `${name}.yaml`), manifest(name));
    const t0 = performance.now();
    // rename(2) makes the manifest appear whole: the file source never reads a partial file.
    renameSync(join(staging, `${name}.yaml`), join(manifests, `${name}.yaml`));
    await pollUntil(
      async () => (await cri.listContainers({ labelSelector: { [POD_NAME_LABEL]: podName }, state: { state: "CONTAINER_RUNNING" } })).length > 0,
      `${podName} RUNNING`,
      30_000,
      2,
    );
    const ms = performance.now() - t0;
    if (i >= 0) startMs.push(ms);
    console.log(`${name.padEnd(7)} ${ms.toFixed(1)} ms`);
    // Remove the pod and wait until it is gone, so runs do not overlap.
    rmSync(join(manifests, `${name}.yaml`));
    await pollUntil(async () => (await sandboxesOf(podName)).length === 0, `${podName} removed`, 60_000, 20);
  }
} finally {
  await cleanup();
}

const med = percentile(startMs, 50);
const p90 = percentile(startMs, 90);
console.log(
  `bunlet pod start benchmark: ${runs} runs of ${BINARY} on a private containerd, bunlet.local/busybox:1 (present), ${podNetwork ? "pod network (CNI)" : "hostNetwork"}, Bun ${Bun.version}`,
);
console.log(
  `manifest → container RUNNING  median ${med.toFixed(1)} ms  p90 ${p90.toFixed(1)} ms  min ${Math.min(...startMs).toFixed(1)} ms  max ${Math.max(...startMs).toFixed(1)} ms  ` +
    `goal ≤ ${GOAL_MS} ms  median/goal ${(med / GOAL_MS).toFixed(2)}  p90/goal ${(p90 / GOAL_MS).toFixed(2)}`,
);
