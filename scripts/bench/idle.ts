// Idle cost and mass pod start of the compiled agent on containerd (docs/benchmarks.md#idle-cost).
//   bun scripts/bench/idle.ts [pods] [--window=SECONDS] [--binary=PATH] [--profile=DIR]
//   [--profile-window=SECONDS] [--memory-report]   (default 100 pods, 30 s windows, dist/bunlet; --binary compares another
//   build, e.g. a saved baseline; --profile writes CPU and heap profiles of the idle agent with the
//   pods as markdown into DIR, idling for --profile-window, default 90 s)
//   [--variant=LABEL=PATH|-[,ENV=VALUE...]]...   (after step 3 the agent is restarted on the same pods
//   once per variant — PATH or "-" for the first binary, with the ENV given — and once more as the first
//   binary: A/B/…/A without a new burst, so several builds or Bun/JSC knobs share one lock hold)
//   [--memcg-notification]   (every agent run with --kernel-memcg-notification=true: the kernel notifiers
//   and, by default, the notifier-thread eviction plan the main thread keeps armed; off by default, as upstream)
// On a scratch node (lib/scratch-node.ts: private containerd, dist/bunlet built first if stale,
// temporary directories, all removed on exit, failure or Ctrl-C):
//   1. no pods: waits for the lifecycle, lets it settle, measures bunlet's own CPU time
//      (utime+stime of /proc/<pid>/stat — CPU time, not wall time, so other load on the machine does
//      not count) and RSS over the window, and how often its main thread slept (voluntary context
//      switches: one per idle wake-up); containerd's CPU is printed beside it;
//   2. drops N static pod manifests at once (busybox sleep, offline image, hostNetwork) and times
//      the first and the last container RUNNING (CRI ListContainers polled every 20 ms);
//   3. N pods running: the same idle measure, plus CRI calls per second by operation type
//      (kubelet_runtime_operations_total from /metrics, diffed over the window).
// With --profile, step 3 is followed by a restart of the agent under Bun's sampling profiler
// (BUN_OPTIONS reaches a compiled binary too): it adopts the running pods, settles, idles for the
// window and exits, so the profile shows the idle agent rather than the mass start. The profiler's
// own cost makes that run's figures higher; they are printed apart.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { POD_NAME_LABEL } from "../../src/pod/kuberuntime/labels.ts";
import { BINARY } from "../../test/support/binary.ts";
import { pollUntil } from "../../test/support/wait.ts";
import { anonMappingsMb, cpuSeconds, mainThreadSleeps, rssMb, rssSplitMb, threadCpuSeconds, threads } from "./lib/proc.ts";
import { type ScratchNode, createScratchNode, loadAverage, sleeperManifest } from "./lib/scratch-node.ts";

const GOALS = {
  idle0: { cpuPct: 0.2, rssMb: 60 },
  idleN: { cpuPct: 1, rssMb: 100 },
  firstRunningMs: 1000,
  allRunningMs: 8000,
};
const args = process.argv.slice(2);
const pods = Number(args.find((a) => /^\d+$/.test(a)) ?? 100);
const defaultWindowS = Number(args.find((a) => a.startsWith("--window="))?.slice(9) ?? 30);
const binary = args.find((a) => a.startsWith("--binary="))?.slice(9);
interface Variant {
  label: string;
  binary?: string;
  env: Record<string, string>;
}
const variants: Variant[] = args
  .filter((a) => a.startsWith("--variant="))
  .map((a) => {
    const [head, ...envs] = a.slice(10).split(",");
    const eq = head!.indexOf("=");
    if (eq < 1) throw new Error(`--variant=LABEL=PATH|-[,ENV=VALUE...]: got ${a}`);
    const path = head!.slice(eq + 1);
    return {
      label: head!.slice(0, eq),
      binary: path === "-" ? binary : path,
      env: Object.fromEntries(envs.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)])),
    };
  });
// --memory-report: the agent runs with BUNLET_DEBUG_MEMORY=1 and, at the end of each window,
// is sent SIGUSR2: its own view of its memory (JSC heap, allocator, smaps; src/memory-report.ts) before
// and after a full collection is printed. The collection comes after the window's figures.
const memReport = args.includes("--memory-report");
const agentEnv = (env: Record<string, string> = {}) => (memReport ? { BUNLET_DEBUG_MEMORY: "1", ...env } : env);
const agentArgs = args.includes("--memcg-notification") ? ["--kernel-memcg-notification=true"] : [];
const profileDir = args.find((a) => a.startsWith("--profile="))?.slice(10);
// The profile covers the restarted agent from its start: a long idle window keeps the adoption small in it.
const profileWindowS = Number(args.find((a) => a.startsWith("--profile-window="))?.slice(17) ?? 90);
const SETTLE_MS = 10_000;

async function runtimeOps(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const ops = new Map<string, number>();
  for (const m of text.matchAll(/^kubelet_runtime_operations_total\{operation_type="([^"]+)"\} (\S+)$/gm)) ops.set(m[1]!, Number(m[2]));
  return ops;
}

interface IdleFigures {
  cpuPct: number;
  /** The main thread's wake-ups per second (voluntary context switches). */
  wakeupsPerS: number;
  containerdPct: number;
  rssMb: number;
  /** At the end of the window. */
  rssSplit: { anon: number; file: number };
  anonMappings: ReturnType<typeof anonMappingsMb>;
  threads: number;
  /** % of one core by thread name, largest first. */
  threadPct: [string, number][];
  opsPerS: [string, number][];
}
async function measureIdle(sn: ScratchNode, ctdPid: number, windowS = defaultWindowS): Promise<IdleFigures> {
  const pid = sn.agent!.pid;
  await Bun.sleep(SETTLE_MS);
  const ops0 = await runtimeOps(sn.port).catch(() => new Map<string, number>());
  const b0 = cpuSeconds(pid);
  const w0 = mainThreadSleeps(pid);
  const th0 = threadCpuSeconds(pid);
  const c0 = cpuSeconds(ctdPid);
  const t0 = performance.now();
  let rssMax = 0;
  while (performance.now() - t0 < windowS * 1000) {
    await Bun.sleep(1000);
    rssMax = Math.max(rssMax, rssMb(pid));
  }
  const wall = (performance.now() - t0) / 1000;
  const b1 = cpuSeconds(pid);
  const w1 = mainThreadSleeps(pid);
  const th1 = threadCpuSeconds(pid);
  const c1 = cpuSeconds(ctdPid);
  const ops1 = await runtimeOps(sn.port).catch(() => new Map<string, number>());
  const opsPerS = [...ops1]
    .map(([k, v]) => [k, (v - (ops0.get(k) ?? 0)) / wall] as [string, number])
    .filter(([, r]) => r > 0)
    .sort((a, b) => b[1] - a[1]);
  const threadPct = [...th1]
    .map(([k, v]) => [k, ((v - (th0.get(k) ?? 0)) / wall) * 100] as [string, number])
    .filter(([, p]) => p > 0)
    .sort((a, b) => b[1] - a[1]);
  return {
    cpuPct: ((b1 - b0) / wall) * 100,
    wakeupsPerS: (w1 - w0) / wall,
    containerdPct: ((c1 - c0) / wall) * 100,
    rssMb: rssMax,
    rssSplit: rssSplitMb(pid),
    anonMappings: anonMappingsMb(pid),
    threads: threads(pid),
    threadPct,
    opsPerS,
  };
}

async function printMemoryReport(sn: ScratchNode): Promise<void> {
  if (!memReport || !sn.agent) return;
  const agent = sn.agent;
  const from = agent.stderr().length;
  process.kill(agent.pid, "SIGUSR2");
  const tail = () => agent.stderr().slice(from);
  await pollUntil(async () => (tail().match(/^memory-report /gm) ?? []).length >= 2, "the agent's memory report", 20_000, 100);
  for (const line of tail().split("\n")) {
    if (line.startsWith("memory-report ")) console.log(`  ${line}`);
    // mimalloc's summary lines: what it holds in blocks, pages touched, arena memory committed
    else if (/^\s*(binned|huge|total|touched|pages|abandoned|committed|reserved|purged|arenas)\s*:/.test(line)) console.log(`    mimalloc ${line.trim()}`);
  }
}

function printIdle(label: string, f: IdleFigures, goal: { cpuPct: number; rssMb: number }): void {
  console.log(
    `${label}: bunlet CPU ${f.cpuPct.toFixed(2)} % of one core (goal ≤ ${goal.cpuPct} %, ratio ${(f.cpuPct / goal.cpuPct).toFixed(2)})  ` +
      `RSS ${f.rssMb.toFixed(1)} MB (goal ≤ ${goal.rssMb} MB, ratio ${(f.rssMb / goal.rssMb).toFixed(2)}; at the end anon ${f.rssSplit.anon.toFixed(1)} + file ${f.rssSplit.file.toFixed(1)})  threads ${f.threads}  main thread wake-ups/s ${f.wakeupsPerS.toFixed(2)}  containerd CPU ${f.containerdPct.toFixed(2)} %`,
  );
  console.log(
    `  anon memory by mapping (perms, name, size class): ${f.anonMappings.map((m) => `${m.mapping} ×${m.count} ${m.anonMb.toFixed(1)} MB`).join("; ")}`,
  );
  if (f.threadPct.length) console.log(`  CPU by thread: ${f.threadPct.map(([k, p]) => `${k}=${p.toFixed(2)} %`).join(" ")}`);
  if (f.opsPerS.length) console.log(`  CRI calls/s: ${f.opsPerS.map(([k, r]) => `${k}=${r.toFixed(2)}`).join(" ")}`);
}

let firstMs = NaN;
let allMs = NaN;
const sn = await createScratchNode("idle", { build: !binary });
try {
  const ctdPid = Number(readFileSync(join(sn.ctd.dir, "containerd.pid"), "utf8").trim());
  const cri = sn.ctd.cri;
  await sn.startAgent({ binary, env: agentEnv(), args: agentArgs });
  printIdle("idle, 0 pods", await measureIdle(sn, ctdPid), GOALS.idle0);
  await printMemoryReport(sn);

  const names = Array.from({ length: pods }, (_, i) => `idle${i}`);
  const drop = sn.stageManifests(Object.fromEntries(names.map((n) => [n, sleeperManifest(n)])));
  const loadAtStart = loadAverage();
  const t0 = performance.now();
  drop();
  await pollUntil(
    async () => {
      const running = (await cri.listContainers({ state: { state: "CONTAINER_RUNNING" } })).filter((c) =>
        c.labels?.[POD_NAME_LABEL]?.endsWith(`-${sn.node}`),
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
      `all RUNNING ${allMs.toFixed(0)} ms (goal ≤ ${GOALS.allRunningMs}, ratio ${(allMs / GOALS.allRunningMs).toFixed(2)})  load ${loadAtStart}`,
  );

  printIdle(`idle, ${pods} pods`, await measureIdle(sn, ctdPid), GOALS.idleN);
  await printMemoryReport(sn);

  if (variants.length > 0) {
    for (const v of [...variants, { label: "A again", binary, env: {} }]) {
      await sn.stopAgent();
      await sn.startAgent({ binary: v.binary, env: agentEnv(v.env), args: agentArgs });
      const env = Object.entries(v.env)
        .map(([k, x]) => `${k}=${x}`)
        .join(" ");
      printIdle(`idle, ${pods} pods, restarted as ${v.label} (${v.binary ?? BINARY}${env ? ` ${env}` : ""})`, await measureIdle(sn, ctdPid), GOALS.idleN);
      await printMemoryReport(sn);
    }
  }

  if (profileDir) {
    await sn.stopAgent();
    await sn.startAgent({
      binary,
      args: agentArgs,
      env: { BUN_OPTIONS: `--cpu-prof-md --cpu-prof-dir=${profileDir} --heap-prof-md --heap-prof-dir=${profileDir}` },
    });
    printIdle(`profiled restart, ${pods} pods, ${profileWindowS} s (profiler overhead included)`, await measureIdle(sn, ctdPid, profileWindowS), GOALS.idleN);
    await sn.stopAgent();
    console.log(`CPU and heap profiles of the idle agent written to ${profileDir}`);
  }
} finally {
  await sn.cleanup();
}
console.log(
  `bunlet idle benchmark: ${binary ?? BINARY} on a private containerd, ${defaultWindowS} s windows${agentArgs.length ? `, ${agentArgs.join(" ")}` : ""}, Bun ${Bun.version}, load ${loadAverage()}`,
);
