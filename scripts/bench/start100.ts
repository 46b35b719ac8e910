// Mass pod start, where the time goes (goals: 100 manifests dropped at once, first Running ≤ 1 s,
// all Running ≤ 8 s), against the runtime's own floor.
//   bun scripts/bench/start100.ts [pods] [--binary=PATH] [--direct[=CONCURRENCY]] [--env=K=V ...]
//   (START100_AGENT_LOG=FILE keeps the agent's log of the burst, for the phases' details)
// Starts its own private containerd (test/support/containerd.ts) in temporary directories, then either
//   agent (default): dist/bunlet (built first if stale, or --binary) with a static pod path; drops N
//     manifests at once (busybox sleep, offline image, hostNetwork, rename(2) each) and times the first
//     and the last container running (lib/markers.ts): each container's first act is to touch a marker
//     file of its own on a hostPath (the file's mtime is when its process ran, in the kernel's clock),
//     and the bench reads that directory every 20 ms — polling the CRI's ListContainers every 20 ms
//     instead would be ~700 listings of up to 100 containers, the bench's own load on containerd, the
//     very runtime whose CPU is the floor here; one ListContainers at the end checks that all are RUNNING. Then
//     per phase, from the agent's own log lines (klog stamps, ms): "pod added" (manifest read → pod
//     manager → worker), "created pod sandbox" (RunPodSandbox returned), "started container"
//     (StartContainer returned), "pod phase … to=Running" (status); and per CRI operation the calls and
//     mean latency during the burst (kubelet_runtime_operations_* from /metrics, diffed);
//   --direct: no agent — the same N pods made with bare CRI calls (RunPodSandbox → CreateContainer →
//     StartContainer per pod, CONCURRENCY pods at a time, default all), the runtime's floor for this
//     machine: what containerd, its shims and runc cost with no kubelet in the way.
// Both print the CPU time of the agent, of containerd, and of the whole machine (/proc/stat) during
// the burst, so "the CPUs were full" and "something waited" can be told apart.
// Cleans up everything — pods, cgroups, directories, containerd, bunlet — on exit, failure or Ctrl-C.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type BunletProcess, BINARY, ensureBuilt, freePort, killAll, spawnBunlet, waitForHealthz } from "../../test/support/binary.ts";
import { staticPodFlags } from "../../test/support/agent.ts";
import { removeCgroupTree } from "../../test/support/cgroup.ts";
import { type TestContainerd, acquireContainerd } from "../../test/support/containerd.ts";
import { pollUntil } from "../../test/support/wait.ts";
import { directBurst as directBurstOf, markerManifest, waitMarkedRunning } from "./lib/markers.ts";
import { removeTree } from "../../test/support/remove-tree.ts";

const GOALS = { firstRunningMs: 1000, allRunningMs: 8000 };
const args = process.argv.slice(2);
const pods = Number(args.find((a) => /^\d+$/.test(a)) ?? 100);
const binary = args.find((a) => a.startsWith("--binary="))?.slice(9);
const directArg = args.find((a) => a === "--direct" || a.startsWith("--direct="));
const direct = directArg !== undefined;
const directConcurrency = directArg?.startsWith("--direct=") ? Number(directArg.slice(9)) : pods;
const extraEnv = Object.fromEntries(
  args
    .filter((a) => a.startsWith("--env="))
    .map((a) => {
      const kv = a.slice(6);
      return [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)];
    }),
);
const CLK_TCK = 100; // USER_HZ on Linux

const base = mkdtempSync(join(tmpdir(), `bunlet-bench-start100-${process.pid}-`));
const manifests = join(base, "manifests");
const staging = join(base, "staging");
const cgroupRoot = `/bunlet-bench-start100-${process.pid}`;
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
      removeTree(base);
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

/** utime+stime of a process (with its reaped children's: a shim's runc calls, containerd's shim starts), in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK;
}
/** CPU of every shim of our containerd (named by its socket on their command line), in seconds. */
function shimsCpuSeconds(socket: string): { seconds: number; count: number } {
  let seconds = 0;
  let count = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, "utf8");
      if (!cmd.includes("containerd-shim") || !cmd.includes(socket)) continue;
      seconds += cpuSeconds(Number(d));
      count++;
    } catch {
      // exited meanwhile
    }
  }
  return { seconds, count };
}
/** Busy and total jiffies of the whole machine (/proc/stat "cpu" line). */
function machineJiffies(): { busy: number; total: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + (f[4] ?? 0);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

async function runtimeOps(port: number): Promise<Map<string, { count: number; sum: number }>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const ops = new Map<string, { count: number; sum: number }>();
  for (const m of text.matchAll(/^kubelet_runtime_operations_duration_seconds_(count|sum)\{operation_type="([^"]+)"\} (\S+)$/gm)) {
    const o = ops.get(m[2]!) ?? { count: 0, sum: 0 };
    o[m[1] as "count" | "sum"] = Number(m[3]);
    ops.set(m[2]!, o);
  }
  return ops;
}

const markers = join(base, "markers");

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]! : NaN;
};
const spread = (xs: number[]) =>
  xs.length
    ? `first ${pct(xs, 0).toFixed(0)}  p50 ${pct(xs, 50).toFixed(0)}  p90 ${pct(xs, 90).toFixed(0)}  last ${pct(xs, 100).toFixed(0)} ms  (n=${xs.length})`
    : "none";

/** klog stamp "I1202 00:21:03.123000" of today → epoch ms (the agent logs local time). */
function logStampMs(line: string): number | undefined {
  const m = /^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})/.exec(line);
  if (!m) return undefined;
  const d = new Date();
  d.setMonth(Number(m[1]) - 1, Number(m[2]));
  d.setHours(Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return d.getTime();
}

/** Per phase, ms after the drop at which each pod reached it (from the agent's log). */
function phasesFromLog(text: string, t0Epoch: number): Record<string, number[]> {
  const phases: Record<string, RegExp> = {
    "pod added (source → pod manager → worker)": / pod added pod=\S+\/idle\d+-/,
    "RunPodSandbox returned": / created pod sandbox pod=\S+\/idle\d+-/,
    "StartContainer returned": / started container pod=\S+\/idle\d+-/,
    "status phase Running": / pod phase pod=\S+\/idle\d+-\S+ .*to=Running/,
  };
  const out: Record<string, number[]> = {};
  for (const k of Object.keys(phases)) out[k] = [];
  for (const line of text.split("\n")) {
    for (const [k, re] of Object.entries(phases)) {
      if (!re.test(line)) continue;
      const t = logStampMs(line);
      if (t !== undefined) out[k]!.push(t - t0Epoch);
    }
  }
  return out;
}

interface Burst {
  firstMs: number;
  allMs: number;
  cpu: { agent: number; containerd: number; shims: number; shimCount: number; machineBusy: number; wall: number };
}

function cpuProbe(agentPid: number | undefined, ctdPid: number) {
  const a0 = agentPid ? cpuSeconds(agentPid) : 0;
  const c0 = cpuSeconds(ctdPid);
  const s0 = shimsCpuSeconds(ctd!.socket).seconds;
  const m0 = machineJiffies();
  const w0 = performance.now();
  let end: Burst["cpu"] | undefined;
  return {
    mark() {
      const m1 = machineJiffies();
      const shims = shimsCpuSeconds(ctd!.socket);
      end = {
        shims: shims.seconds - s0,
        shimCount: shims.count,
        agent: (agentPid ? cpuSeconds(agentPid) : 0) - a0,
        containerd: cpuSeconds(ctdPid) - c0,
        machineBusy: (m1.busy - m0.busy) / CLK_TCK,
        wall: (performance.now() - w0) / 1000,
      };
    },
    result: () => end!,
  };
}

function printBurst(label: string, b: Burst): void {
  console.log(
    `${label}: ${pods} pods  first RUNNING ${b.firstMs.toFixed(0)} ms (goal ≤ ${GOALS.firstRunningMs}, ratio ${(b.firstMs / GOALS.firstRunningMs).toFixed(2)})  ` +
      `all RUNNING ${b.allMs.toFixed(0)} ms (goal ≤ ${GOALS.allRunningMs}, ratio ${(b.allMs / GOALS.allRunningMs).toFixed(2)})`,
  );
  const { agent: a, containerd: c, shims: s, shimCount, machineBusy: m, wall: w } = b.cpu;
  console.log(
    `  CPU during the burst (s of CPU over ${w.toFixed(1)} s wall, 2 CPUs = ${(2 * w).toFixed(1)} s): machine ${m.toFixed(1)} s (${((m / (2 * w)) * 100).toFixed(0)} %)  ` +
      `agent ${a.toFixed(1)} s  containerd ${c.toFixed(1)} s  ${shimCount} shims (with their runc calls) ${s.toFixed(1)} s  ` +
      `rest (the kernel's work for the runtime — 6–10 s on a quiet machine — and any other load) ${(m - a - c - s).toFixed(1)} s;  ` +
      `runtime processes per pod ${(((c + s) / pods) * 1000).toFixed(0)} ms CPU, the machine's without bunlet ${(((m - a) / pods) * 1000).toFixed(0)} ms → ` +
      `on ${cpus().length} CPUs ≥ ${((m - a) / cpus().length).toFixed(1)} s if all of it is the runtime's (a quiet machine; --direct measures it)`,
  );
}

/** The runtime's floor: N pods by bare CRI calls, `concurrency` at a time. */
async function directBurst(ctdPid: number): Promise<Burst> {
  const probe = cpuProbe(undefined, ctdPid);
  const r = await directBurstOf({ cri: ctd!.cri, base, cgroupRoot, node, pods, concurrency: directConcurrency, markers, onAll: probe.mark });
  console.log(`  RunPodSandbox returned   ${spread(r.sandboxMs)}`);
  console.log(`  StartContainer returned  ${spread(r.startedMs)}`);
  return { firstMs: r.firstMs, allMs: r.allMs, cpu: probe.result() };
}

async function agentBurst(ctdPid: number): Promise<Burst> {
  mkdirSync(manifests, { recursive: true });
  mkdirSync(staging, { recursive: true });
  mkdirSync(markers, { recursive: true });
  const port = freePort();
  agent = spawnBunlet(staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot, endpoint: ctd!.endpoint, node, port }), { binary, env: extraEnv });
  await waitForHealthz(agent, `http://127.0.0.1:${port}/healthz`);
  await pollUntil(async () => (await fetch(`http://127.0.0.1:${port}/pods`)).ok, "the agent's pod lifecycle", 30_000, 50);
  await Bun.sleep(3000); // past the agent's start-up work
  const names = Array.from({ length: pods }, (_, i) => `idle${i}`);
  for (const n of names) writeFileSync(join(staging, `${n}.yaml`), markerManifest(n, markers));
  const ops0 = await runtimeOps(port);
  const probe = cpuProbe(agent.pid, ctdPid);
  const t0Epoch = Date.now();
  for (const n of names) renameSync(join(staging, `${n}.yaml`), join(manifests, `${n}.yaml`));
  const r = await waitMarkedRunning({ cri: ctd!.cri, node, markers, pods, t0Epoch, onAll: probe.mark });
  // The status of the last pods follows its container by a sync: wait for the log to show them all.
  await pollUntil(
    () => (agent!.stderr().match(/ pod phase pod=\S+\/idle\d+-\S+ .*to=Running/g)?.length ?? 0) >= pods,
    "every pod's status Running",
    60_000,
    50,
  ).catch(() => {});
  const ops1 = await runtimeOps(port);
  if (process.env.START100_AGENT_LOG) writeFileSync(process.env.START100_AGENT_LOG, agent.stderr());
  for (const [phase, xs] of Object.entries(phasesFromLog(agent.stderr(), t0Epoch))) console.log(`  ${phase.padEnd(44)} ${spread(xs)}`);
  const rows = [...ops1]
    .map(([k, v]) => ({ k, n: v.count - (ops0.get(k)?.count ?? 0), s: v.sum - (ops0.get(k)?.sum ?? 0) }))
    .filter((x) => x.n > 0)
    .sort((a, b) => b.s - a.s);
  console.log(`  CRI calls during the burst (calls, mean latency): ${rows.map((x) => `${x.k} ${x.n}×${((x.s / x.n) * 1000).toFixed(0)}ms`).join("  ")}`);
  return { ...r, cpu: probe.result() };
}

try {
  if (!direct && !binary) await ensureBuilt();
  ctd = await acquireContainerd();
  const ctdPid = Number(readFileSync(join(ctd.dir, "containerd.pid"), "utf8").trim());
  const load = loadavg();
  const b = direct ? await directBurst(ctdPid) : await agentBurst(ctdPid);
  printBurst(
    direct ? `bare CRI, ${directConcurrency} at a time` : `agent ${binary ?? BINARY}${Object.keys(extraEnv).length ? ` ${JSON.stringify(extraEnv)}` : ""}`,
    b,
  );
  console.log(
    `  load before ${load.map((l) => l.toFixed(1)).join(" ")}, after ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}; Bun ${Bun.version}`,
  );
} finally {
  await cleanup();
}
