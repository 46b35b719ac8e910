// `kubectl apply` of a 3-replica Deployment (configMap and secret volumes and env, a readiness probe)
// → all 3 replicas Ready, on a real one-node cluster (test/support/upstream) whose node is bunlet, then
// the upstream kubelet, in the same run, on the same kind of private containerd, with the same kubeadm
// KubeletConfiguration. Each run applies the Deployment, waits for readyReplicas 3 (the Deployment's
// status, as `kubectl rollout status` reads it), deletes it and waits until its pods are gone.
//
//   bun scripts/bench/deployment-ready.ts [--runs 10] [--agents bunlet,kubelet]
//
// Prints each run, then per agent the median, p90 and max, and the ratio bunlet / kubelet.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { percentile } from "./lib/scratch-node.ts";
import { buildUpstream, joinUpstream, startControlPlane, waitNodeReady, webDeployment, type ControlPlane } from "../../test/support/upstream/index.ts";

const { values: args } = parseArgs({ options: { runs: { type: "string", default: "10" }, agents: { type: "string", default: "bunlet,kubelet" } } });
const say = (s: string) => console.error(`deployment-ready: ${s}`);

/** A run this slow prints when each of its pods passed each step (the API's second-resolution stamps). */
const SLOW_MS = 5000;

async function podTimelines(cp: ControlPlane): Promise<string> {
  const pods = JSON.parse(await cp.kubectl("get", "pods", "-l", "app=web", "-o", "json")).items as any[];
  const t = (s?: string) => (s ? new Date(s).toISOString().slice(11, 19) : "-");
  return pods
    .map((p) => {
      const steps = [`created ${t(p.metadata.creationTimestamp)}`];
      for (const c of p.status.conditions ?? []) steps.push(`${c.type} ${t(c.lastTransitionTime)}`);
      const started = p.status.containerStatuses?.[0]?.state?.running?.startedAt;
      steps.push(`started ${t(started)}`);
      return `  ${p.metadata.name} uid=${p.metadata.uid}: ${steps.join(", ")}`;
    })
    .join("\n");
}

/** One apply → 3 Ready, in ms (polled every 50 ms), then delete and wait for the pods to go. */
async function oneRun(cp: ControlPlane, image: string): Promise<number> {
  const started = performance.now();
  await cp.kubectlIn(webDeployment(image), "apply", "-f", "-");
  for (;;) {
    const ready = (await cp.kubectl("get", "deployment", "web", "-o", "jsonpath={.status.readyReplicas}").catch(() => "")).trim();
    if (ready === "3") break;
    if (performance.now() - started > 180_000) throw new Error("3 replicas not Ready in 180 s");
    await Bun.sleep(50);
  }
  const ms = performance.now() - started;
  if (ms > SLOW_MS) say(`slow run (${ms.toFixed(0)} ms), its pods:\n${await podTimelines(cp)}`);
  await cp.kubectl("delete", "deployment", "web", "--wait=true");
  for (;;) {
    if ((await cp.kubectl("get", "pods", "-l", "app=web", "-o", "name")).trim() === "") break;
    await Bun.sleep(200);
  }
  return ms;
}

async function bench(agent: "bunlet" | "kubelet", bin: string, runs: number): Promise<number[]> {
  const cp = await startControlPlane({ dir: `/tmp/bunlet-bench-deploy-${agent}-${process.pid}`, binDir: bin });
  const n = await joinUpstream({ name: `bench-deploy-${agent}`, cp, agent, binary: agent === "kubelet" ? join(bin, "kubelet") : undefined }).catch(
    async (e) => {
      await cp.stop();
      throw e;
    },
  );
  try {
    await waitNodeReady(cp, n);
    const out: number[] = [];
    // One untimed warm-up: the image's first unpack and the first pod's network set-up.
    await oneRun(cp, n.ctd.images.busybox);
    for (let i = 0; i < runs; i++) {
      const ms = await oneRun(cp, n.ctd.images.busybox);
      say(`${agent} run ${i + 1}: ${ms.toFixed(0)} ms`);
      if (ms > SLOW_MS) {
        const file = `/tmp/deployment-ready-${agent}-run${i + 1}.log`;
        writeFileSync(file, n.proc.stdout() + n.proc.stderr());
        say(`the agent's log so far: ${file}`);
      }
      out.push(ms);
    }
    return out;
  } finally {
    await n.stop().catch((e) => say(`node cleanup: ${e}`));
    await cp.stop().catch((e) => say(`control plane cleanup: ${e}`));
  }
}

const bin = await buildUpstream("kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet");
const runs = Number(args.runs);
const results: Record<string, number[]> = {};
for (const agent of args.agents!.split(",") as ("bunlet" | "kubelet")[]) results[agent] = await bench(agent, bin, runs);
for (const [agent, xs] of Object.entries(results))
  console.log(
    `${agent}: apply → 3 Ready  median ${percentile(xs, 50).toFixed(0)} ms  p90 ${percentile(xs, 90).toFixed(0)} ms  max ${Math.max(...xs).toFixed(0)} ms  (${xs.length} runs)`,
  );
if (results.bunlet && results.kubelet)
  console.log(`ratio bunlet/kubelet (median): ${(percentile(results.bunlet, 50) / percentile(results.kubelet, 50)).toFixed(2)}`);
