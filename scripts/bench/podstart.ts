// Pod start benchmark of the compiled agent on containerd: a static pod manifest lands in
// staticPodPath → its container is RUNNING (CRI ListContainers, polled every 2 ms).
//   bun scripts/bench/podstart.ts [runs] [--pod-network]      (default 20 runs, hostNetwork pods)
// On a scratch node (lib/scratch-node.ts: private containerd, dist/bunlet built first if stale,
// temporary directories, all removed on exit, failure or Ctrl-C); uses the offline image
// bunlet.local/busybox:1 (already present: no pull is timed) and removes each pod before the next run.
// Prints median/p90 against the goal (≤ 1 s) and the ratios.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { POD_NAME_LABEL } from "../../src/pod/kuberuntime/labels.ts";
import { BINARY } from "../../test/support/binary.ts";
import { pollUntil } from "../../test/support/wait.ts";
import { createScratchNode, percentile, sleeperManifest } from "./lib/scratch-node.ts";

const GOAL_MS = 1000;
const args = process.argv.slice(2);
const runs = Number(args.find((a) => /^\d+$/.test(a)) ?? 20);
const podNetwork = args.includes("--pod-network");

const startMs: number[] = [];
const sn = await createScratchNode("podstart");
try {
  const cri = sn.ctd.cri;
  await sn.startAgent();
  const sandboxesOf = async (podName: string) => cri.listPodSandbox({ labelSelector: { [POD_NAME_LABEL]: podName } });
  // A warm-up pod (not timed): first-use costs (snapshot of the image, QoS cgroups) are paid once.
  for (let i = -1; i < runs; i++) {
    const name = i < 0 ? "warmup" : `run${i}`;
    const podName = `${name}-${sn.node}`;
    const drop = sn.stageManifests({ [name]: sleeperManifest(name, { hostNetwork: !podNetwork }) });
    const t0 = performance.now();
    drop();
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
    rmSync(join(sn.manifests, `${name}.yaml`));
    await pollUntil(async () => (await sandboxesOf(podName)).length === 0, `${podName} removed`, 60_000, 20);
  }
} finally {
  await sn.cleanup();
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
