// Upstream's own [NodeConformance] e2e tests against a one-node cluster whose node is bunlet or the
// upstream kubelet: the release's e2e.test (scripts/upstream/build.sh), run by the ginkgo CLI against
// the real control plane (test/support/upstream), the node on a test containerd holding the e2e images
// (scripts/upstream/images.sh), so nothing is pulled; with BUNLET_TEST_RUNTIME=crio on a test CRI-O.
//
//   bun scripts/conformance/run.ts --node bunlet|kubelet [--procs 4] [--focus RE] [--subset|--storage|--csi-hostpath] [--out DIR]
//
// Prints `passed N failed M skipped K` last, and writes <out>/<node>.json: every test that ran, with
// its result, duration and failure message; <out>/<node>.log is the e2e output, <out>/<node>-agent.log
// the node agent's own. --subset runs the representative set of subset.ts (CI); --storage the
// storage tests of storage.ts (local PVs, hostPath), [Slow] ones left out, in a PID and mount namespace
// of its own (runInOwnNamespaces); --csi-hostpath the `[Driver: csi-hostpath]` suites of csi-hostpath.ts,
// the same way, with the driver's images (scripts/upstream/csi-images.sh) imported and the `kubernetes`
// Service routed to the API server (service-route.ts).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { HOST_PID_ENV, testContainerdEnv } from "../../test/support/containerd.ts";
import { joinUpstream, startControlPlane, waitNodeReady, type ControlPlane, type UpstreamNode } from "../../test/support/upstream/index.ts";
import { parseGinkgoReport, summarize, type ConformanceReport } from "./report.ts";
import { CSI_HOSTPATH, CSI_HOSTPATH_DATA, CSI_HOSTPATH_SKIPS } from "./csi-hostpath.ts";
import { startServiceRoute, type ServiceRoute } from "./service-route.ts";
import { SKIPS, skipExpression } from "./skips.ts";
import { STORAGE, STORAGE_SKIPS } from "./storage.ts";
import { SUBSET } from "./subset.ts";

const ROOT = resolve(import.meta.dir, "../..");
const RELEASE = process.env.BUNLET_UPSTREAM_RELEASE ?? "v1.37.2";
const say = (s: string) => console.error(`conformance: ${s}`);

const { values: args } = parseArgs({
  options: {
    node: { type: "string", default: "bunlet" },
    procs: { type: "string", default: "4" },
    focus: { type: "string" },
    subset: { type: "boolean", default: false },
    storage: { type: "boolean", default: false },
    "csi-hostpath": { type: "boolean", default: false },
    out: { type: "string", default: join(ROOT, "dist", "conformance") },
    timeout: { type: "string", default: "75m" },
  },
});
if (args.node !== "bunlet" && args.node !== "kubelet") throw new Error(`--node ${args.node}: want bunlet or kubelet`);

async function sh(argv: string[], env: Record<string, string | undefined> = {}): Promise<string> {
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "inherit", env: { ...process.env, ...env } });
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  if (code !== 0) throw new Error(`${argv.join(" ")}: exit ${code}`);
  return out.trim().split("\n").pop()!;
}

function focusExpression(): string {
  if (args.focus) return args.focus;
  if (args.subset) return SUBSET.map((s) => `(${s})`).join("|");
  if (args.storage) return STORAGE.map((s) => `(${s})`).join("|");
  if (args["csi-hostpath"]) return CSI_HOSTPATH.map((s) => `(${s})`).join("|");
  return "\\[NodeConformance\\]";
}

const skips = () => skipExpression(args.storage ? [...SKIPS, ...STORAGE_SKIPS] : args["csi-hostpath"] ? [...SKIPS, ...CSI_HOSTPATH_SKIPS] : SKIPS);
/** Runs that need a PID and mount namespace of their own (runInOwnNamespaces). */
const ownNamespaces = args.storage || args["csi-hostpath"];

async function runE2e(bin: string, cp: ControlPlane, n: UpstreamNode, out: string): Promise<number> {
  const argv = [
    join(bin, "ginkgo"),
    `--procs=${args.procs}`,
    `--timeout=${args.timeout}`,
    "--no-color",
    "--succinct",
    `--focus=${focusExpression()}`,
    `--skip=${skips()}`,
    // With --output-dir, ginkgo writes the report under it by this name.
    `--json-report=${args.node}.ginkgo.json`,
    `--output-dir=${out}`,
    join(bin, "e2e.test"),
    "--",
    `--kubeconfig=${cp.admin}`,
    "--provider=skeleton",
    `--kubectl-path=${cp.kubectlBinary}`,
    `--container-runtime-endpoint=${n.ctd.endpoint}`,
    "--disable-log-dump",
    "--dump-logs-on-failure=false",
    `--report-dir=${out}`,
    "--minStartupPods=0",
    // The CSI driver's manifests name /var/lib/kubelet; the framework puts the node's root directory there.
    `--kubelet-root-dir=${n.rootDir}`,
  ];
  say(`running e2e.test against ${n.node} (${args.node}), ${args.procs} processes`);
  // Its own process group: ginkgo's e2e.test processes end with it when the run is interrupted.
  const log = openSync(join(out, `${args.node}.log`), "w");
  const p = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ["ignore", log, "inherit"], env: { ...process.env, KUBECONFIG: cp.admin } });
  running = p.pid;
  return new Promise((done) => p.on("exit", (code) => done(code ?? 1)));
}

/** The e2e run's process group. */
let running: number | undefined;
let cleanup: (() => Promise<void>) | undefined;

// Interrupted: end the e2e run, the node and the control plane (they run in their own process groups).
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, async () => {
    say(`${sig}: cleaning up`);
    // Without the cluster, ginkgo's own interrupt (cleanup nodes, reports) would wait on it for minutes.
    if (running)
      try {
        process.kill(-running, "SIGKILL");
      } catch {}
    await cleanup?.();
    process.exit(130);
  });
}

async function main(): Promise<void> {
  const bin = await sh(["bash", join(ROOT, "scripts/upstream/build.sh")]);
  mkdirSync(args.out, { recursive: true });
  const dir = `/tmp/bunlet-conformance-${process.pid}`;
  // The CSI hostpath driver keeps its volumes in a host directory its manifest names; one the run made goes with it.
  const csiData = args["csi-hostpath"] && !existsSync(CSI_HOSTPATH_DATA) ? CSI_HOSTPATH_DATA : undefined;
  const started = Date.now();
  const cp = await startControlPlane({ dir: join(dir, "control-plane"), binDir: bin });
  let n: UpstreamNode | undefined;
  let route: ServiceRoute | undefined;
  cleanup = async () => {
    await route?.stop().catch((e) => say(`service route cleanup: ${e}`));
    // The node agent's own log, beside the e2e output (<node>.log).
    if (n) writeFileSync(join(args.out, `${args.node}-agent.log`), n.proc.stdout() + n.proc.stderr());
    await n?.stop().catch((e) => say(`node cleanup: ${e}`));
    await cp.stop().catch((e) => say(`control plane cleanup: ${e}`));
    rmSync(dir, { recursive: true, force: true });
    if (csiData) rmSync(csiData, { recursive: true, force: true });
  };
  try {
    n = await joinUpstream({
      name: `conformance-${args.node}`,
      cp,
      agent: args.node as "bunlet" | "kubelet",
      binary: args.node === "kubelet" ? join(bin, "kubelet") : undefined,
      // The instance's dirs in the env: a CRI-O's storage is reached through its control script.
      prepare: async ({ ctd }) => {
        await sh(["bash", join(ROOT, "scripts/upstream/images.sh"), "import", ctd.socket], testContainerdEnv);
        if (args["csi-hostpath"]) await sh(["bash", join(ROOT, "scripts/upstream/csi-images.sh"), "import", ctd.socket]);
      },
    });
    await waitNodeReady(cp, n);
    if (args["csi-hostpath"]) route = await routeKubernetesService(cp);
    const code = await runE2e(bin, cp, n, args.out);
    const tests = parseGinkgoReport(readFileSync(join(args.out, `${args.node}.ginkgo.json`), "utf8"));
    const report: ConformanceReport = {
      release: RELEASE,
      node: args.node!,
      date: new Date().toISOString(),
      focus: focusExpression(),
      procs: Number(args.procs),
      wallSeconds: Math.round((Date.now() - started) / 1000),
      ginkgoExit: code,
      tests,
    };
    writeFileSync(join(args.out, `${args.node}.json`), JSON.stringify(report, null, 1) + "\n");
    const s = summarize(tests);
    say(`report: ${join(args.out, `${args.node}.json`)}`);
    console.log(`passed ${s.passed} failed ${s.failed} skipped ${s.skipped}`);
    process.exitCode = s.failed > 0 ? 1 : 0;
  } finally {
    await cleanup();
    cleanup = undefined;
  }
}

/** The `kubernetes` Service's ClusterIP:443 to the API server, through the node's InternalIP (service-route.ts). */
async function routeKubernetesService(cp: ControlPlane): Promise<ServiceRoute> {
  const svc = JSON.parse(await cp.kubectl("get", "service", "kubernetes", "-n", "default", "-o", "json"));
  const node = JSON.parse(await cp.kubectl("get", "nodes", "-o", "json")).items[0];
  const nodeIP = node.status.addresses.find((a: { type: string }) => a.type === "InternalIP")?.address;
  if (!nodeIP) throw new Error(`node ${node.metadata.name} has no InternalIP`);
  const clusterIP = svc.spec.clusterIP as string;
  const servicePort = svc.spec.ports[0].port as number;
  say(`routing the kubernetes Service ${clusterIP}:${servicePort} to ${cp.server} through ${nodeIP}`);
  return startServiceRoute({ clusterIP, servicePort, apiServer: cp.server, nodeIP, name: `bunlet-conformance-${process.env[HOST_PID_ENV] ?? process.pid}` });
}

/**
 * The storage run in a PID and mount namespace of its own (the mounts of the host come in, none of its
 * own go out): the local volume tests' hostexec pods enter PID 1's mount namespace (`nsenter
 * --mount=/rootfs/proc/1/ns/mnt`), which is then this runner's — a host's PID 1 may refuse it — and the
 * tmpfs, bind and loop mounts they make end with the run.
 */
function runInOwnNamespaces(): void {
  const argv = ["--pid", "--fork", "--mount", "--propagation", "slave", "--mount-proc", "--", process.execPath, import.meta.path, ...process.argv.slice(2)];
  say("running in a PID and mount namespace of its own");
  const p = spawn("unshare", argv, { stdio: "inherit", env: { ...process.env, [HOST_PID_ENV]: String(process.pid) } });
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.removeAllListeners(sig).on(sig, () => p.kill(sig));
  p.on("exit", (code) => process.exit(code ?? 1));
}

if (ownNamespaces && !process.env[HOST_PID_ENV]) runInOwnNamespaces();
else await main();
