// Idle cost and mass pod start of the compiled agent on containerd (issue #14 "Scale and idle cost").
//   bun scripts/bench/idle.ts [pods] [--window=SECONDS] [--binary=PATH]
//   [--profile=DIR]   (default 100 pods, 30 s windows, dist/bunlet; --binary compares another build,
//   e.g. a saved baseline; --profile writes the agent's CPU profile as markdown into DIR at its exit)
// Starts its own private containerd (test/support/containerd.ts) and dist/bunlet (built first if
// stale) in temporary directories, then:
//   1. no pods: waits for the lifecycle, lets it settle, measures bunlet's own CPU time
//      (utime+stime of /proc/<pid>/stat — CPU time, not wall time, so other load on the machine does
//      not count) and RSS over the window; containerd's CPU is printed beside it;
//   2. drops N static pod manifests at once (busybox sleep, offline image, hostNetwork) and times
//      the first and the last container RUNNING (CRI ListContainers polled every 20 ms);
//   3. N pods running: the same idle measure, plus CRI calls per second by operation type
//      (kubelet_runtime_operations_total from /metrics, diffed over the window).
// Cleans up everything — pods, cgroups, directories, containerd, bunlet — on exit, failure or Ctrl-C.
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type BunletProcess, BINARY, ensureBuilt, freePort, killAll, spawnBunlet, waitForHealthz } from "../../test/support/binary.ts";
import { staticPodFlags } from "../../test/support/agent.ts";
import { removeCgroupTree } from "../../test/support/cgroup.ts";
import { staticPodYaml } from "../../test/support/manifests.ts";
import { type TestContainerd, acquireContainerd } from "../../test/support/containerd.ts";
import { pollUntil } from "../../test/support/wait.ts";

const GOALS = {
  idle0: { cpuPct: 0.2, rssMb: 60 },
  idleN: { cpuPct: 1, rssMb: 100 },
  firstRunningMs: 1000,
  allRunningMs: 8000,
};
const args = process.argv.slice(2);
const pods = Number(args.find((a) => /^\d+$/.test(a)) ?? 100);
const windowS = Number(args.find((a) => a.startsWith("--window="))?.slice(9) ?? 30);
const binary = args.find((a) => a.startsWith("--binary="))?.slice(9);
const profileDir = args.find((a) => a.startsWith("--profile="))?.slice(10);
const SETTLE_MS = 10_000;
const CLK_TCK = 100; // USER_HZ on Linux
const POD_NAME_LABEL = "io.kubernetes.pod.name";

const base = mkdtempSync(join(tmpdir(), `bunlet-bench-idle-${process.pid}-`));
const manifests = join(base, "manifests");
const staging = join(base, "staging");
const cgroupRoot = `/bunlet-bench-idle-${process.pid}`;
const node = `bench-${process.pid}`;
let ctd: TestContainerd | undefined;
let agent: BunletProcess | undefined;

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await agent?.stop("SIGTERM", 10_000).catch(() => {});
    await killAll();
    try {
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

/** utime+stime of a process, in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command (which may hold spaces) start after the last ')'.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK; // fields 14 and 15 of proc(5)
}
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function runtimeOps(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const ops = new Map<string, number>();
  for (const m of text.matchAll(/^kubelet_runtime_operations_total\{operation_type="([^"]+)"\} (\S+)$/gm)) ops.set(m[1]!, Number(m[2]));
  return ops;
}

interface IdleFigures {
  cpuPct: number;
  containerdPct: number;
  rssMb: number;
  opsPerS: [string, number][];
}
async function measureIdle(port: number, ctdPid: number): Promise<IdleFigures> {
  await Bun.sleep(SETTLE_MS);
  const ops0 = await runtimeOps(port).catch(() => new Map<string, number>());
  const b0 = cpuSeconds(agent!.pid);
  const c0 = cpuSeconds(ctdPid);
  const t0 = performance.now();
  let rssMax = 0;
  while (performance.now() - t0 < windowS * 1000) {
    await Bun.sleep(1000);
    rssMax = Math.max(rssMax, rssMb(agent!.pid));
  }
  const wall = (performance.now() - t0) / 1000;
  const b1 = cpuSeconds(agent!.pid);
  const c1 = cpuSeconds(ctdPid);
  const ops1 = await runtimeOps(port).catch(() => new Map<string, number>());
  const opsPerS = [...ops1]
    .map(([k, v]) => [k, (v - (ops0.get(k) ?? 0)) / wall] as [string, number])
    .filter(([, r]) => r > 0)
    .sort((a, b) => b[1] - a[1]);
  return { cpuPct: ((b1 - b0) / wall) * 100, containerdPct: ((c1 - c0) / wall) * 100, rssMb: rssMax, opsPerS };
}

function printIdle(label: string, f: IdleFigures, goal: { cpuPct: number; rssMb: number }): void {
  console.log(
    `${label}: bunlet CPU ${f.cpuPct.toFixed(2)} % of one core (goal ≤ ${goal.cpuPct} %, ratio ${(f.cpuPct / goal.cpuPct).toFixed(2)})  ` +
      `RSS ${f.rssMb.toFixed(1)} MB (goal ≤ ${goal.rssMb} MB, ratio ${(f.rssMb / goal.rssMb).toFixed(2)})  containerd CPU ${f.containerdPct.toFixed(2)} %`,
  );
  if (f.opsPerS.length) console.log(`  CRI calls/s: ${f.opsPerS.map(([k, r]) => `${k}=${r.toFixed(2)}`).join(" ")}`);
}

const manifest = (name: string) =>
  staticPodYaml(name, {
    image: "bunlet.local/busybox:1",
    command: ["sleep", "3600"],
    terminationGracePeriodSeconds: 0,
    hostNetwork: true,
    container: "      imagePullPolicy: IfNotPresent\n",
  });

let idle0: IdleFigures | undefined;
let idleN: IdleFigures | undefined;
let firstMs = NaN;
let allMs = NaN;
let loadAtStart = loadavg();
try {
  if (!binary) await ensureBuilt();
  ctd = await acquireContainerd();
  const ctdPid = Number(readFileSync(join(ctd.dir, "containerd.pid"), "utf8").trim());
  const cri = ctd.cri;
  mkdirSync(manifests, { recursive: true });
  mkdirSync(staging, { recursive: true });
  const port = freePort();
  agent = spawnBunlet(staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot, endpoint: ctd.endpoint, node, port }), {
    binary,
    // BUN_OPTIONS reaches a compiled binary too: Bun's sampling profiler, written when the agent exits.
    env: profileDir ? { BUN_OPTIONS: `--cpu-prof-md --cpu-prof-dir=${profileDir}` } : undefined,
  });
  await waitForHealthz(agent, `http://127.0.0.1:${port}/healthz`);
  await pollUntil(async () => (await fetch(`http://127.0.0.1:${port}/pods`)).ok, "the agent's pod lifecycle", 30_000, 50);

  idle0 = await measureIdle(port, ctdPid);
  printIdle("idle, 0 pods", idle0, GOALS.idle0);

  const names = Array.from({ length: pods }, (_, i) => `idle${i}`);
  for (const n of names) writeFileSync(join(staging, `${n}.yaml`), manifest(n));
  loadAtStart = loadavg();
  const t0 = performance.now();
  for (const n of names) renameSync(join(staging, `${n}.yaml`), join(manifests, `${n}.yaml`));
  await pollUntil(
    async () => {
      const running = (await cri.listContainers({ state: { state: "CONTAINER_RUNNING" } })).filter((c) =>
        c.labels?.[POD_NAME_LABEL]?.endsWith(`-${node}`),
      ).length;
      if (running > 0 && Number.isNaN(firstMs)) firstMs = performance.now() - t0;
      return running >= pods;
    },
    `${pods} pods RUNNING`,
    180_000,
    20,
  );
  allMs = performance.now() - t0;
  console.log(
    `${pods} manifests at once: first RUNNING ${firstMs.toFixed(0)} ms (goal ≤ ${GOALS.firstRunningMs}, ratio ${(firstMs / GOALS.firstRunningMs).toFixed(2)})  ` +
      `all RUNNING ${allMs.toFixed(0)} ms (goal ≤ ${GOALS.allRunningMs}, ratio ${(allMs / GOALS.allRunningMs).toFixed(2)})  load ${loadAtStart.map((l) => l.toFixed(1)).join(" ")}`,
  );

  idleN = await measureIdle(port, ctdPid);
  printIdle(`idle, ${pods} pods`, idleN, GOALS.idleN);
} finally {
  await cleanup();
}
console.log(`bunlet idle benchmark: ${binary ?? BINARY} on a private containerd, ${windowS} s windows, Bun ${Bun.version}, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
