// `bash scripts/demo.sh --cluster [--once]`: a real one-node cluster whose node is bunlet. The upstream
// control plane (scripts/upstream/build.sh, cached under /var/tmp) on loopback, bunlet joined to it as
// kubeadm makes a node join, a Deployment applied with kubectl, then a BestEffort memory hog that bunlet
// evicts on the kernel's word — all of it shown with kubectl. Without --once it keeps running until
// Ctrl-C, with KUBECONFIG printed for another shell; either way it removes everything it made.
// Env: BUNLET_DEMO_CLUSTER_DIR (the control plane's state and logs; default /run/bunlet/demo-cluster).
import { join } from "node:path";
import {
  joinUpstream,
  memoryHogPods,
  memoryPressureNode,
  startControlPlane,
  upstreamBinDir,
  waitNodeReady,
  webDeployment,
  type ControlPlane,
  type UpstreamNode,
} from "../../test/support/upstream/index.ts";
import { until } from "../../test/support/wait.ts";

const once = process.argv.includes("--once");
const dir = process.env.BUNLET_DEMO_CLUSTER_DIR ?? "/run/bunlet/demo-cluster";
const step = (s: string) => console.log(`\n\x1b[1m==> ${s}\x1b[0m`);
const show = (out: string) => console.log(out.trimEnd().replace(/^/gm, "    "));

async function buildControlPlane(): Promise<string> {
  const p = Bun.spawn(["bash", join(import.meta.dir, "build.sh")], {
    stdout: "inherit",
    stderr: "inherit",
    env: { ...process.env, BUNLET_UPSTREAM_TARGETS: "kube-apiserver kube-controller-manager kube-scheduler kubectl" },
  });
  if ((await p.exited) !== 0) throw new Error("scripts/upstream/build.sh failed");
  const bin = upstreamBinDir();
  if (!bin.dir) throw new Error(bin.why);
  return bin.dir;
}

async function deployment(cp: ControlPlane, n: UpstreamNode): Promise<void> {
  step("kubectl apply: a Deployment of 3 (configMap and secret as volumes and env, a readiness probe)");
  await cp.kubectlIn(webDeployment(n.ctd.images.busybox), "apply", "-f", "-");
  await cp.kubectl("rollout", "status", "deployment/web", "--timeout=180s");
  show(await cp.kubectl("get", "nodes,pods", "-o", "wide"));
  step("kubectl logs deployment/web");
  show(await cp.kubectl("logs", "deployment/web"));
}

async function eviction(cp: ControlPlane, n: UpstreamNode): Promise<void> {
  step("A BestEffort hog grows 100 MiB/s beside a Burstable pod; pods have 1 GiB, bunlet evicts below 300Mi available");
  await cp.kubectlIn(memoryHogPods(n.ctd.images), "apply", "-f", "-");
  await cp.kubectl("wait", "pod/steady", "pod/hog", "--for=condition=Ready", "--timeout=90s");
  await until("the hog evicted", async () => (await cp.kubectl("get", "pod", "hog", "-o", "jsonpath={.status.phase}")) === "Failed" || undefined, 120_000, {
    intervalMs: 250,
  });
  show(await cp.kubectl("get", "pods", "-o", "wide"));
  step("kubectl get node: MemoryPressure (held for the transition period, then cleared)");
  await until(
    "MemoryPressure shown",
    async () => (await cp.kubectl("get", "node", n.node, "-o", 'jsonpath={.status.conditions[?(@.type=="MemoryPressure")].status}')) === "True" || undefined,
    10_000,
    { intervalMs: 200 },
  ).catch(() => undefined);
  show(await cp.kubectl("get", "node", n.node, "-o", 'jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}{"\\n"}{end}'));
  step("kubectl get events: what bunlet did and why");
  const columns = "custom-columns=LAST:.lastTimestamp,TYPE:.type,REASON:.reason,OBJECT:.involvedObject.name,MESSAGE:.message";
  for (const about of [`involvedObject.kind=Node,involvedObject.name=${n.node}`, "involvedObject.kind=Pod,involvedObject.name=hog"])
    show(await cp.kubectl("get", "events", "--field-selector", about, "--sort-by=.lastTimestamp", "-o", columns));
  step("kubectl get pod hog: its status");
  show(
    await cp.kubectl(
      "get",
      "pod",
      "hog",
      "-o",
      'jsonpath={.status.phase} {.status.reason}: {.status.message}{"\\n"}{range .status.conditions[?(@.type=="DisruptionTarget")]}{.type}={.status} {.reason}{end}',
    ),
  );
}

let cp: ControlPlane | undefined;
let n: UpstreamNode | undefined;
const cleanup = async () => {
  step("Cleaning up: bunlet, its pods and cgroups, the control plane");
  await n?.stop();
  await cp?.stop();
};
process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));
try {
  step("The upstream control plane (built once from the Go module proxy, cached under /var/tmp)");
  const binDir = await buildControlPlane();
  cp = await startControlPlane({ dir, binDir });
  console.log(`    kube-apiserver ${cp.server}; logs in ${join(dir, "logs")}`);
  step("bunlet joins it as kubeadm makes a node join (bootstrap token → CSR → client certificate)");
  n = await joinUpstream({ name: "demo-cluster", cp, ...memoryPressureNode({ allocatableMiB: 1024, thresholdMiB: 300, transitionS: 10 }) });
  await waitNodeReady(cp, n);
  show(await cp.kubectl("get", "nodes", "-o", "wide"));
  await deployment(cp, n);
  await eviction(cp, n);
  if (!once) {
    step("The cluster keeps running; Ctrl-C stops it and removes everything");
    console.log(`    export KUBECONFIG=${cp.admin}`);
    await new Promise(() => {});
  }
} catch (e) {
  console.error(`demo: ${(e as Error).message}`);
  if (n) console.error(`--- bunlet's last lines ---\n${n.proc.stderr().slice(-3000)}`);
  process.exitCode = 1;
} finally {
  if (once || process.exitCode) await cleanup();
}
