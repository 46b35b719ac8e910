// Reaction time to a memory ramp, side by side:
//   (i)   bunlet, kernel notification on (memcg threshold on kubepods → immediate synchronize)
//   (ii)  bunlet, notification off (kernelMemcgNotification: false → the 10 s loop, as upstream)
//   (iii) earlyoom 1.7 from Debian (`apt-get install -y earlyoom` if missing)
// The ramp is the same in every run: a BestEffort static pod running memhog, 600 MiB/s up to 850 MiB,
// then held, in <cgroupRoot>/kubepods/besteffort/pod<uid> of a bunlet node whose allocatable memory
// (kubepods limit) is 1 GiB. The threshold is 300 MiB available, i.e. crossed when the pods' working
// set reaches 724 MiB; the hold (850 MiB) stays above it and under the limit, so every run ends
// with the agent's signal, never with the kernel OOM killer.
//
// Measured by the bench itself, the same way for every agent:
//   crossing  bunlet: the up-crossing of a memcg threshold eventfd the bench arms on kubepods at the
//             threshold (usage = allocatable − threshold + inactive_file, bunlet's own formula),
//             timestamped in the notifier worker;
//             earlyoom: the first /proc/meminfo sample (every ~1 ms) with MemAvailable ≤ its -M
//             minimum — its own view, which it polls every 100–1000 ms (adaptive; 100 ms this close);
//   sent      when the agent sent the signal, each by its own account — bunlet: the trace's
//             stopSignalSent (its own pidfd signal to the container's init, sent right before the CRI
//             StopContainer for a hard eviction's 1 s stop; the StopContainer itself when bunlet had not
//             learnt the init yet); earlyoom: when its "sending SIGTERM to process …" line
//             (printed right before kill(2)) is read from its stderr pipe here — so it can trail the
//             victim's "received" by this process's own read latency (a few ms);
//   received  when the victim got SIGTERM, the same for every agent: memhog's SIGTERM handler reads
//             CLOCK_REALTIME (clock_gettime, ns since the epoch) and writes "sigterm <ns>" to its stdout,
//             which the runtime copies to the container's CRI log file,
//             <podLogsDir>/<namespace>_<pod>_<uid>/main/0.log ("<RFC3339Nano> stdout F sigterm <ns>",
//             podLogsDir being this harness's dir). The <ns> is used, not the log line's own timestamp
//             (that is when containerd copied it). kill(2) queues the signal and wakes the victim (out
//             of its nanosleep, or by an IPI if it is on a CPU); the handler runs as it next returns to
//             user space: µs later, more only if it has to wait for one of the 2 shared cores. Its clock
//             and the bench's (performance.timeOrigin + performance.now()) are the same kernel wall
//             clock, apart from NTP slewing during a run. A victim with no such line got no SIGTERM:
//             a stop with a 0 s grace period is SIGKILL alone (bunlet, as the kubelet, never uses
//             less than 1 s), and a SIGKILL runs no handler; the run is reported as such (with the
//             container's exit code) and left out of the received percentiles;
//   freed     the down-crossing of the same kubepods eventfd (memory back under the threshold).
// The comparison with earlyoom (goals: p99 ≤ 5 ms and ≥ 20× quiet, ≤ 10 ms and ≥ 10× under
// --contention) is on "received", the same measurement for both; "sent" is each agent's own account
// and is printed for reference.
// What differs, honestly: earlyoom only watches system-wide MemAvailable, not a cgroup, and this host
// is shared (other processes allocate and free hundreds of MiB). Each earlyoom run is started, after
// the ramp pod is Running, with -M = MemAvailable now − (what the ramp still needs to reach the
// kubepods threshold − 200 MiB): its minimum sits on the same ramp, a little earlier, so that another
// process freeing memory does not make it miss; since its crossing is timestamped on its own view,
// where it sits on the ramp does not change the latency measured. A run where MemAvailable still
// never reached the minimum is reported as missed and retried. --prefer '^memhog$' makes its victim
// the ramp (as bunlet's ranking does) and -r 0 silences its periodic reports.
// Contention mode (--contention): the bench starts one CPU burner per core (a `sh` busy loop at nice 0,
// each under `timeout`, so bounded even if the bench dies; killed at the end, on failure too) before the
// first run and keeps them for every mode, earlyoom included. Two more modes compare scheduling
// priority, each as its agent offers it: notify-nice (bunlet with `schedulingNice: --nice`, default
// -10) and earlyoom-p (earlyoom -p: nice -20). Ratios are printed for every bunlet mode against every
// earlyoom mode, on "received" p99. The bench prints the nice value of each bunlet thread in both
// bunlet notification modes: by default the notifier thread runs at -20 and the main thread at 0
// (raised only while it handles a kernel event, see src/kernel/thread-priority.ts).
// notify-cycle: bunlet as notify with BUNLET_NOTIFIER_THREAD_EVICTION=0 (every decision by the main
// thread's cycle, the path before the notifier-thread eviction became the default).
// Idle pods (--idle-pods N): N BestEffort busybox `sleep` static pods (idle-0 … idle-<N-1>) are started
// beside the steady pod and kept Running for every mode (earlyoom's too), the ramp being the same; the
// bench waits for all of them to run before the first measurement. Compare with a run without them.
//   bun scripts/bench/reaction.ts [--runs 20] [--modes notify,notify-cycle,periodic,earlyoom] [--contention] [--nice -10] [--idle-pods 100]
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { preciseNow } from "../../src/clock.ts";
import { createNotifierHub, type NotifierHub } from "../../src/kernel/index.ts";
import { cleanupActive, cleanupOnSignals, MIB, openHarness, readCgroupFile, traceTimeMs, type Harness } from "../chaos/lib.ts";
import { ALLOCATABLE, crossingUsage, observeThreshold, RAMP, THRESHOLD, victimReceived } from "./lib/memory-ramp.ts";
import { percentile } from "./lib/scratch-node.ts";

/** earlyoom's minimum sits this much before the kubepods crossing on the ramp (see oneRun). */
const EARLYOOM_MARGIN = 200 * MIB;

type Mode = "notify" | "notify-cycle" | "notify-nice" | "periodic" | "earlyoom" | "earlyoom-p";
const LABEL: Record<Mode, string> = {
  notify: "(i) bunlet, kernel notification",
  "notify-cycle": "(i'') bunlet, kernel notification, notifier-thread eviction off",
  "notify-nice": "(i') bunlet, kernel notification, schedulingNice",
  periodic: "(ii) bunlet, 10 s loop only",
  earlyoom: "(iii) earlyoom 1.7",
  "earlyoom-p": "(iii') earlyoom 1.7 -p (nice -20)",
};
const isEarlyoom = (m: Mode) => m === "earlyoom" || m === "earlyoom-p";
let schedulingNice = -10;

/** The nice value of each thread of the bunlet whose command line names `dir` (the harness's), "name:nice". */
function bunletThreadNices(dir: string): string {
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let cmd = "";
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (!cmd.includes("--eviction-trace=") || !cmd.includes(dir)) continue;
    const out: string[] = [];
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const st = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        const rest = st.slice(st.lastIndexOf(")") + 2).split(" ");
        out.push(`${st.slice(st.indexOf("(") + 1, st.lastIndexOf(")"))}:${rest[16]}`);
      } catch {}
    }
    return `bunlet pid ${pid} threads (comm:nice) ${out.join(" ")}`;
  }
  return "bunlet process not found";
}

/** One busy-loop child per core at nice 0, each bounded by `timeout` (seconds); stop() kills them all. */
function startBurners(n: number, maxSeconds: number): { stop(): void } {
  const procs = Array.from({ length: n }, () =>
    Bun.spawn(["timeout", String(maxSeconds), "sh", "-c", "while :; do :; done"], { stdout: "ignore", stderr: "ignore" }),
  );
  const stop = () => {
    // SIGTERM, not SIGKILL: `timeout` passes it on to its busy loop (a SIGKILLed timeout leaves it running).
    for (const p of procs) if (p.exitCode === null) p.kill("SIGTERM");
  };
  process.on("exit", stop);
  return { stop };
}

interface Run {
  crossedAt: number;
  /** When the agent sent the signal (see "sent" in the header), ms wall clock. */
  signalledAt?: number;
  /** When the victim's SIGTERM handler ran (its "sigterm <ns>" CRI log line), ms wall clock. */
  receivedAt?: number;
  /** Why there is no receivedAt for a run that was signalled (no sigterm line, and the exit code). */
  noSigterm?: string;
  freedAt?: number;
  /** bunlet's own trace: kernel event (or first observation) → stop signal sent, ms. */
  ownMs?: number;
  /** bunlet's own trace: kernel event → decision (the cycle picked the victim), ms. */
  ownDecisionMs?: number;
  /** bunlet's own trace: kernel event → the deciding cycle started / had its summary, ms. */
  ownCycleMs?: number;
  ownStatsMs?: number;
  /** bunlet's trace: the notifier thread decided and signalled itself (kernel/fast-evict.ts). */
  onNotifierThread?: boolean;
  note?: string;
}

// The agent's clock (src/clock.ts): sub-ms and kept on the wall clock, as bunlet's and memhog's stamps.
const nowMs = () => preciseNow();

/** The bench's own podLogsDir, inside the harness's temp dir (removed with it). */
const podLogsDir = (h: Harness) => join(h.dir, "pod-logs");

function memAvailableBytes(): number {
  const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"));
  return Number(m?.[1] ?? 0) * 1024;
}

function ensureEarlyoom(): string {
  const which = spawnSync("sh", ["-c", "command -v earlyoom"], { encoding: "utf8" });
  if (which.status === 0) return which.stdout.trim();
  console.log("earlyoom missing: apt-get install -y earlyoom");
  const r = spawnSync("apt-get", ["install", "-y", "earlyoom"], { encoding: "utf8", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  if (r.status !== 0) throw new Error(`apt-get install earlyoom failed: ${r.stderr}`);
  // Debian enables the service; make sure no system-wide earlyoom was started behind our back.
  spawnSync("sh", ["-c", "command -v systemctl >/dev/null && systemctl disable --now earlyoom 2>/dev/null || true"]);
  return spawnSync("sh", ["-c", "command -v earlyoom"], { encoding: "utf8" }).stdout.trim();
}

async function startBunlet(h: Harness, mode: Mode): Promise<void> {
  const config = isEarlyoom(mode)
    ? { kernelMemcgNotification: false, evictionHard: { "nodefs.available": "1Mi" } } // bunlet never evicts for memory here
    : { kernelMemcgNotification: mode !== "periodic", evictionHard: { "memory.available": `${THRESHOLD / MIB}Mi` } }; // copied onto allocatableMemory.available
  const nice = mode === "notify-nice" ? { schedulingNice } : {};
  // notify-cycle: every decision by the main thread's cycle, as before the notifier-thread eviction was on by default.
  const env = mode === "notify-cycle" ? { BUNLET_NOTIFIER_THREAD_EVICTION: "0" } : undefined;
  await h.start({ allocatableBytes: ALLOCATABLE, env, config: { ...config, ...nice, evictionPressureTransitionPeriod: "1s", podLogsDir: podLogsDir(h) } });
  if (mode === "notify" || mode === "notify-cycle" || mode === "notify-nice") {
    await h.waitNotifierArmed("hard", 20_000);
    console.log(bunletThreadNices(h.dir));
  }
}

async function oneRun(h: Harness, hub: NotifierHub, mode: Mode, i: number, earlyoomBin: string): Promise<Run> {
  const kubepods = h.cgroupDir("memory", "kubepods");
  const crossUsage = crossingUsage(kubepods);
  const obs = await observeThreshold(hub, kubepods, crossUsage);
  const name = `ramp-${mode}-${i}`;
  let eo: ReturnType<typeof Bun.spawn> | undefined;
  try {
    const usage = () => Number(readCgroupFile(kubepods, "memory.usage_in_bytes") ?? 0);
    // Under MemoryPressure bunlet (as the kubelet) refuses new BestEffort pods: let it clear first.
    await h.waitFor(
      "MemoryPressure to clear",
      async () => {
        const dbg = await h.debugEviction().catch(() => ({}) as Record<string, unknown>);
        return !((dbg.nodeConditions as string[] | undefined) ?? []).includes("MemoryPressure");
      },
      30_000,
      100,
    );
    const k0 = usage();
    // The 10 s loop is phase-locked to the previous run's eviction: start at a random phase.
    if (mode === "periodic") await Bun.sleep(Math.random() * 10_000);
    h.addPod(name, { image: h.images.memhog, args: [String(RAMP.totalMiB), String(RAMP.mibPerSec)], restartPolicy: "Never", terminationGracePeriodSeconds: 0 });
    await h.waitFor(
      `${name} Running`,
      async () => {
        const p = await h.pod(name);
        return p?.status?.phase === "Running" ? p : undefined;
      },
      20_000,
      20,
    );

    if (!isEarlyoom(mode)) {
      // The crossing is whichever fires first: the bench's own threshold, or bunlet's (in its trace). Each
      // arms its line from its own inactive_file reading, so bunlet's can fire first, and a victim stopped
      // that fast (the notifier thread's eviction) never lets usage reach the bench's line at all.
      const traced = () => h.trace().find((r) => r.pod.endsWith(`/${h.podName(name)}`));
      await h.waitFor(`${name} to cross the threshold`, () => obs.crossed() ?? traced(), 20_000, 5);
      const rec = await h.waitFor(`${name}'s eviction trace record`, traced, 30_000, 20);
      const own = traceTimeMs(rec.timestamps.thresholdCrossed);
      const ownCrossedAt = Number.isFinite(own) ? own : undefined;
      const benchCrossedAt = obs.crossed();
      const crossedAt = Math.min(benchCrossedAt ?? Infinity, ownCrossedAt ?? Infinity);
      if (process.env.BENCH_DEBUG)
        console.log(
          `observer crossed ${benchCrossedAt === undefined ? "never" : new Date(benchCrossedAt).toISOString()} trace crossed ${rec.timestamps.thresholdCrossed} signal ${rec.timestamps.stopSignalSent}`,
        );
      // Freed: the bench's line crossed downwards; when usage never reached it, bunlet's own "below the threshold".
      const freedAt =
        benchCrossedAt !== undefined
          ? await h.waitFor("memory freed", () => obs.freed(crossedAt), 10_000, 5)
          : await h.waitFor(
              "memory freed (bunlet's trace)",
              () => {
                const t = traceTimeMs(traced()?.timestamps.memoryBelowThreshold);
                return Number.isFinite(t) ? t : undefined;
              },
              10_000,
              20,
            );
      return {
        crossedAt,
        note: benchCrossedAt === undefined || (ownCrossedAt ?? Infinity) < benchCrossedAt ? "crossing from bunlet's trace (its line fired first)" : undefined,
        signalledAt: traceTimeMs(rec.timestamps.stopSignalSent),
        ...(await victimReceived(h.runtime.cri, podLogsDir(h), h.podName(name))),
        ownMs: rec.latencyMs.stopSignalSent ?? undefined,
        ownDecisionMs: rec.latencyMs.decision ?? undefined,
        ownCycleMs: rec.latencyMs.cycleStarted ?? undefined,
        ownStatsMs: rec.latencyMs.statsRead ?? undefined,
        onNotifierThread: (rec as { decidedBy?: string }).decidedBy === "notifier-thread",
        freedAt,
      };
    }

    // earlyoom. Its minimum on its own scale: MemAvailable now, less what the ramp still needs to reach
    // the kubepods threshold, plus EARLYOOM_MARGIN so that another process freeing a little memory
    // meanwhile does not make it miss (the crossing is timestamped on its own view, see the header).
    const a0 = memAvailableBytes();
    const needed = crossUsage - usage() - EARLYOOM_MARGIN;
    const minKiB = Math.floor((a0 - needed) / 1024);
    eo = Bun.spawn(
      [
        earlyoomBin,
        ...(mode === "earlyoom-p" ? ["-p"] : []),
        "-M",
        String(minKiB),
        "-r",
        "0",
        "--prefer",
        "^memhog$",
        "--avoid",
        "^(bun|bunlet|containerd.*|earlyoom)$",
      ],
      { stdout: "ignore", stderr: "pipe" },
    );
    const proc = eo;
    let signalledAt: number | undefined;
    let readyAt: number | undefined;
    let crossedAt: number | undefined;
    let freedAt: number | undefined;
    let usageAtCross = 0;
    let said = "";
    void (async () => {
      const dec = new TextDecoder();
      for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) {
        const t = nowMs();
        said += dec.decode(chunk, { stream: true });
        if (readyAt === undefined && /mem total/.test(said)) readyAt = t;
        if (signalledAt === undefined && /sending SIG\w+ to process \d+.*memhog/.test(said)) signalledAt = t;
      }
    })();
    await h.waitFor("earlyoom to start", () => readyAt !== undefined, 5_000, 5);
    // Sampled every ~1 ms: the crossing (MemAvailable ≤ its minimum, the /proc/meminfo it polls) and
    // the memory freed (kubepods usage back under where it was at that crossing).
    let polling = true;
    const pollStart = nowMs();
    void (async () => {
      while (polling) {
        const t = nowMs();
        if (crossedAt === undefined) {
          if (memAvailableBytes() <= minKiB * 1024) {
            crossedAt = t;
            usageAtCross = usage();
          }
        } else if (signalledAt !== undefined && freedAt === undefined && usage() < usageAtCross) {
          freedAt = t;
        }
        await Bun.sleep(1);
      }
    })();
    try {
      await h.waitFor("MemAvailable to cross earlyoom's minimum", () => crossedAt, 5_000, 2);
      await h.waitFor("earlyoom to signal memhog", () => signalledAt, 5_000, 2);
      await h.waitFor("memory freed", () => freedAt, 10_000, 2);
    } catch (e) {
      return {
        crossedAt: crossedAt ?? 0,
        note: `missed: ${(e as Error).message}; -M ${minKiB} KiB, MemAvailable ${Math.floor(memAvailableBytes() / 1024)} KiB (other processes moved it)`,
      };
    } finally {
      polling = false;
    }
    if (crossedAt! - pollStart < 3) return { crossedAt: crossedAt!, note: "MemAvailable was already under the minimum when earlyoom started (discarded)" };
    const run: Run = {
      crossedAt: crossedAt!,
      signalledAt,
      ...(await victimReceived(h.runtime.cri, podLogsDir(h), h.podName(name))),
      freedAt,
      note: `crossed at ${((usageAtCross - k0) / MIB).toFixed(0)} MiB of the ramp`,
    };
    return run;
  } finally {
    obs.stop();
    if (eo) {
      eo.kill("SIGTERM");
      await eo.exited;
    }
    h.removePodManifest(name);
    await h.waitFor(`${name} to be removed`, async () => !(await h.pods()).some((p) => p.metadata.name === h.podName(name)), 30_000, 50);
  }
}

/** Every idle-<i> pod Running (they are started once, by the first bunlet; later ones adopt them). */
async function waitIdlePods(h: Harness, n: number): Promise<void> {
  const t0 = nowMs();
  await h.waitFor(
    `${n} idle pods Running`,
    async () => {
      const running = (await h.pods()).filter((p) => /^idle-\d+-/.test(p.metadata.name) && p.status?.phase === "Running").length;
      return running >= n ? true : undefined;
    },
    300_000,
    500,
  );
  console.log(`${n} idle pods Running (${fmt(nowMs() - t0)} after bunlet started)`);
}

function fmt(ms: number): string {
  return Number.isNaN(ms) ? "-" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "20" },
      modes: { type: "string", default: "notify,periodic,earlyoom" },
      contention: { type: "boolean", default: false },
      nice: { type: "string", default: "-10" },
      "idle-pods": { type: "string", default: "0" },
    },
  });
  const runs = Number(values.runs);
  schedulingNice = Number(values.nice);
  if (!Number.isInteger(schedulingNice) || schedulingNice < -20 || schedulingNice > 19)
    throw new Error(`--nice: ${values.nice} must be an integer between -20 and 19`);
  const idlePods = Number(values["idle-pods"]);
  if (!Number.isInteger(idlePods) || idlePods < 0 || idlePods > 250)
    throw new Error(`--idle-pods: ${values["idle-pods"]} must be an integer between 0 and 250`);
  const modes = values.modes!.split(",") as Mode[];
  for (const m of modes) if (!(m in LABEL)) throw new Error(`--modes: unknown mode ${m} (valid: ${Object.keys(LABEL).join(", ")})`);
  const earlyoomBin = modes.some(isEarlyoom) ? ensureEarlyoom() : "";
  cleanupOnSignals();
  const cores = navigator.hardwareConcurrency;
  // Bounded: 1 h at most, whatever happens to this process.
  const burners = values.contention ? startBurners(cores, 3600) : undefined;
  if (burners) console.log(`contention: ${cores} CPU burners (sh busy loops, nice 0) running for every mode`);
  const h = openHarness("reaction", false);
  const hub = createNotifierHub();
  const results = new Map<Mode, Run[]>();
  try {
    await h.useSharedContainerd();
    h.addPod("steady", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "50m", memory: "64Mi" } });
    for (let i = 0; i < idlePods; i++) h.addPod(`idle-${i}`, { command: ["sh", "-c", "exec sleep 2147483647"] });
    for (const mode of modes) {
      await startBunlet(h, mode);
      if (idlePods > 0) await waitIdlePods(h, idlePods);
      const rs: Run[] = [];
      results.set(mode, rs);
      // A missed earlyoom run (another process freed memory, so MemAvailable never fell to its
      // minimum) is printed and retried, up to twice the runs.
      for (let i = 0, ok = 0; ok < runs && i < runs * 2; i++) {
        // A run that fails (the bench's own observer missed the crossing on this shared host…) is
        // printed, counted as missed and retried like a missed earlyoom run.
        const r = await oneRun(h, hub, mode, i, earlyoomBin).catch((e: Error): Run => ({ crossedAt: 0, note: `missed: ${e.message.split("\n")[0]}` }));
        rs.push(r);
        if (r.signalledAt !== undefined) ok++;
        const s = r.signalledAt !== undefined ? r.signalledAt - r.crossedAt : Number.NaN;
        const f = r.freedAt !== undefined ? r.freedAt - r.crossedAt : Number.NaN;
        const got =
          r.receivedAt !== undefined
            ? `, crossing→victim got SIGTERM ${fmt(r.receivedAt - r.crossedAt)} (sent→got ${fmt(r.receivedAt - (r.signalledAt ?? Number.NaN))})`
            : r.noSigterm
              ? `, ${r.noSigterm}`
              : "";
        console.log(
          `${LABEL[mode]} run ${i + 1}: crossing→signal sent ${fmt(s)}${got}, crossing→freed ${fmt(f)}${r.ownMs !== undefined ? `, bunlet's own trace ${fmt(r.ownMs)}${r.onNotifierThread ? " (decided on the notifier thread)" : " (decided by the main thread's cycle)"}` : ""}${r.note ? ` (${r.note})` : ""}`,
        );
      }
      await h.stopBunlet("SIGTERM");
    }
  } finally {
    burners?.stop();
    if (process.env.BENCH_AGENT_LOG) await Bun.write(process.env.BENCH_AGENT_LOG, h.bunletLogs());
    await hub.close();
    const problems = await cleanupActive();
    for (const p of problems) console.log(`cleanup problem: ${p}`);
  }

  const summary = new Map<Mode, { n: number; s50: number; s99: number; nr: number; r50: number; r99: number; f50: number; f99: number }>();
  for (const [mode, rs] of results) {
    const ok = rs.filter((r) => r.signalledAt !== undefined && r.freedAt !== undefined);
    const sig = ok.map((r) => r.signalledAt! - r.crossedAt);
    const got = ok.filter((r) => r.receivedAt !== undefined).map((r) => r.receivedAt! - r.crossedAt);
    const freed = ok.map((r) => r.freedAt! - r.crossedAt);
    summary.set(mode, {
      n: ok.length,
      s50: percentile(sig, 50),
      s99: percentile(sig, 99),
      nr: got.length,
      r50: percentile(got, 50),
      r99: percentile(got, 99),
      f50: percentile(freed, 50),
      f99: percentile(freed, 99),
    });
  }
  const ref = summary.get("notify");
  const times = (a: number, b: number) => (Number.isNaN(a / b) ? "-" : `${(a / b).toFixed(1)}×`);
  console.log(`\n${idlePods > 0 ? `${idlePods} idle BestEffort pods (busybox sleep) running beside the ramp for every mode` : "no idle pods beside the ramp"}`);
  console.log(
    `ramp: memhog ${RAMP.mibPerSec} MiB/s to ${RAMP.totalMiB} MiB, kubepods limit ${ALLOCATABLE / MIB} MiB, threshold ${THRESHOLD / MIB} MiB available (crossed at ${(ALLOCATABLE - THRESHOLD) / MIB} MiB)`,
  );
  console.log(
    "| agent | runs | crossing→signal sent (bunlet: its pidfd signal; earlyoom: kill(2)) p50 | p99 | crossing→victim got SIGTERM p50 | p99 | runs without SIGTERM | crossing→memory freed p50 | p99 | p99 got SIGTERM vs (i) | p99 sent vs (i) |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const [mode, s] of summary) {
    const vs = (a: number, b: number) => (!ref || mode === "notify" ? "—" : Number.isNaN(a / b) ? "-" : `${times(a, b)} slower`);
    console.log(
      `| ${LABEL[mode]} | ${s.n} | ${fmt(s.s50)} | ${fmt(s.s99)} | ${fmt(s.r50)} | ${fmt(s.r99)} | ${s.n - s.nr} | ${fmt(s.f50)} | ${fmt(s.f99)} | ${vs(s.r99, ref?.r99 ?? Number.NaN)} | ${vs(s.s99, ref?.s99 ?? Number.NaN)} |`,
    );
  }
  const own = results.get("notify")?.filter((r) => r.ownMs !== undefined && r.ownDecisionMs !== undefined) ?? [];
  if (own.length) {
    const dec = own.map((r) => r.ownDecisionMs!);
    const stop = own.map((r) => r.ownMs! - r.ownDecisionMs!);
    const seen = own.filter((r) => r.signalledAt !== undefined).map((r) => r.signalledAt! - r.crossedAt - r.ownMs!);
    console.log(
      `\n(i) inside bunlet, from its own trace: its notifier thread woke → decision p50 ${fmt(percentile(dec, 50))} p99 ${fmt(percentile(dec, 99))}; decision → stop signal sent p50 ${fmt(percentile(stop, 50))} p99 ${fmt(percentile(stop, 99))}; ` +
        `the bench's crossing → bunlet's notifier woke p50 ${fmt(percentile(seen, 50))} p99 ${fmt(percentile(seen, 99))} (where each armed its threshold: bunlet's from inactive_file up to 10 s old, so it can fire a little before or after; the two processes' clocks agree to ~1 ms)`,
    );
    console.log(
      `(i) decided and signalled by the notifier thread itself (no hop to the main thread): ${own.filter((r) => r.onNotifierThread).length} of ${own.length} runs; the others by the main thread's cycle`,
    );
    const split = own.filter((r) => r.ownCycleMs !== undefined && r.ownStatsMs !== undefined && !r.onNotifierThread);
    if (split.length) {
      const pp = (xs: number[]) => `p50 ${fmt(percentile(xs, 50))} p99 ${fmt(percentile(xs, 99))}`;
      console.log(
        `(i) the decision split: notifier woke → cycle started (postMessage, the main thread's wake-up and whatever it was running) ${pp(split.map((r) => r.ownCycleMs!))}; ` +
          `cycle started → summary read (memory of the node, kubepods and every pod) ${pp(split.map((r) => r.ownStatsMs! - r.ownCycleMs!))}; summary → decision ${pp(split.map((r) => r.ownDecisionMs! - r.ownStatsMs!))}`,
      );
    }
  }
  console.log(
    `\n${values.contention ? `under contention (${cores} burners, nice 0)` : "no contention added by the bench"}: victim got SIGTERM p99, earlyoom ÷ bunlet`,
  );
  // Goals: p99 ≤ 5 ms and ≥ 20× earlyoom on a quiet machine, ≤ 10 ms and ≥ 10× under contention.
  const [goalMs, goalTimes] = values.contention ? [10, 10] : [5, 20];
  for (const [bm, b] of summary) {
    if (isEarlyoom(bm) || bm === "periodic") continue;
    for (const [em, e] of summary)
      if (isEarlyoom(em)) {
        const met = e.r99 / b.r99 >= goalTimes && b.r99 <= goalMs ? "met" : "NOT met";
        console.log(
          `  ${LABEL[bm]} p99 ${fmt(b.r99)} vs ${LABEL[em]} p99 ${fmt(e.r99)}: ${times(e.r99, b.r99)} (goal p99 ≤ ${goalMs} ms and ≥ ${goalTimes}×: ${met})`,
        );
      }
  }
  if (ref) {
    console.log(
      `\ngoal: bunlet p99 crossing→signal sent ≤ 50 ms: ${ref.s99 <= 50 ? "met" : "NOT met"} (${fmt(ref.s99)}; victim got SIGTERM p99 ${fmt(ref.r99)})`,
    );
    const eo = summary.get("earlyoom");
    if (eo) {
      const verdict = Number.isNaN(eo.r99 / ref.r99) ? "cannot tell (a side has no run whose victim got SIGTERM)" : eo.r99 / ref.r99 >= 10 ? "met" : "NOT met";
      console.log(
        `goal: ≥ 10× faster than earlyoom, crossing→victim got SIGTERM (p50 ${times(eo.r50, ref.r50)}, p99 ${times(eo.r99, ref.r99)}): ${verdict}; for reference, on signal sent: p50 ${times(eo.s50, ref.s50)}, p99 ${times(eo.s99, ref.s99)}`,
      );
    }
  }
}

await main();
