// Reaction time on cgroup v2, side by side in one run inside the v2 guest with systemd as PID 1:
//   (i)   bunlet, its cgroup v2 fast path (kernelMemcgNotification: true → the working-set watch), the
//         eviction decided and signalled on the working-set thread (BUNLET_NOTIFIER_THREAD_EVICTION=1;
//         --no-thread-eviction: by the main thread's cycle, as before)
//   (ii)  earlyoom 1.7 (Debian; polls MemAvailable)
//   (iii) systemd-oomd 252 (Debian; PSI "full" avg10 on a unit with ManagedOOMMemoryPressure=kill)
//   flock /tmp/bunlet-heavy.lock bun scripts/bench/reaction-v2.ts [--runs 10] [--modes bunlet,earlyoom,oomd]
//     [--oomd-runs N] [--budget-min M] [--out=DIR] [--v 2] [--fresh] [--no-thread-eviction]
//   bun scripts/bench/reaction-v2.ts --report [--out=DIR]
// Every run is appended to <out>/samples-v2.jsonl and the table is printed from all of them, so several
// shorter guest sessions (one mode each, within the heavy lock's turn) add up to one table; --fresh starts
// a new one, --report prints it without booting.
// On the host it boots the guest (scripts/host/v2-guest.sh --systemd) and runs itself there with
// --in-guest; earlyoom and systemd-oomd come from scripts/host/oom-agents.sh (run on the host: the
// guest sees the host's root read-only). dist/bunlet must be built (scripts/build.sh). bunlet's log and
// --eviction-trace of each mode are left in --out (default /tmp/bunlet-reaction-v2, shared with the
// guest); --budget-min caps each mode's minutes (the heavy lock is shared), --v is bunlet's -v (2: each
// re-posted crossing; also systemd-oomd at debug level in its journal).
//
// The node: bunlet (cgroupfs driver) with cgroupRoot /bunletbench.slice, a slice unit made by the bench
// so systemd-oomd can manage it (ManagedOOMMemoryPressure=kill, limit 1 %, DefaultMemoryPressureDurationSec
// 1 s: as eager as it can be told to be). kubepods.memory.max = allocatable (ALLOCATABLE); the threshold
// is THRESHOLD available, i.e. crossed when kubepods' working set (memory.current − inactive_file)
// reaches ALLOCATABLE − THRESHOLD (the line). The ramp is a Burstable static pod (1Mi request: admitted
// while the last run's MemoryPressure lingers) running memhog as fast as the guest allows (UML page
// faults: 15–50 MiB/s) up to RAMP_MIB, with kubepods' memory.high at HIGH_MIB = line + 16 MiB: a victim
// nobody killed stalls there (PSI "full") instead of meeting the kernel OOM killer — the stall is what
// systemd-oomd acts on. Before every run of every agent the bench reads PAGECACHE_MIB of a host file in a
// throw-away cgroup under kubepods: page cache that memory.high's reclaim scans once the victim is past
// it, since systemd-oomd kills only "with reclaim activity" and an anonymous hog with no swap leaves
// nothing to scan (without it, it did not kill in 4 of 5 runs). Not enough: kubepods shows no
// inactive_file afterwards (the guest's hostfs read does not stay charged there), and systemd-oomd then
// kills in 1 run of 3. So systemd-oomd's runs have swap (SWAP_MIB, a sparse
// host file given to the guest as /dev/ubda, swapon for its runs only — earlyoom would not act with
// free swap, bunlet's line is before memory.high): past memory.high the hog's pages are swapped out,
// which is the reclaim activity and the "full" stall systemd-oomd acts on, and its ramp goes on
// (OOMD_RAMP_MIB) so the stall lasts until it does. Before each systemd-oomd run the slice's
// "full avg10" is let decay under its limit, so no kill rides on the last run's pressure.
//
// Measured, the same way for every agent:
//   crossing  bunlet, oomd: kubepods' working set reaching the line, seen by the bench's own 2 ms poll
//             of memory.current and memory.stat (its own thread) — a crossing whose next read is back
//             under the line (the per-CPU charge stock counted, then drained) still counts, and the table
//             says how many were such touches; earlyoom: the first /proc/meminfo
//             read (every 2 ms) with MemAvailable ≤ its -M minimum — its own view, the way reaction.ts
//             times it; its minimum is placed on the ramp EARLYOOM_LEAD before the kubepods line;
//   got       when the victim got its signal: memhog's SIGTERM handler writes "sigterm <ns>"
//             (CLOCK_REALTIME) to the container's CRI log (bunlet, earlyoom); systemd-oomd sends SIGKILL
//             to the whole cgroup, which runs no handler: for it "got" is when the memory was freed, a
//             few ms after the kill at most;
//   freed     the working set back FREED_MARGIN under the line (earlyoom: under where it was at its
//             crossing);
//   stall     (oomd) the first "high" event in kubepods' memory.events: when reclaim (then the stall)
//             began, the earliest moment systemd-oomd could have seen anything.
// bunlet's own trace (trigger, cycle start, stats read, decision, signal sent; relative to the bench's
// crossing) is printed per run once its mode is done.
// WARM-UP: each agent's first run in a guest boot (a "guest session" below) is untimed — saved with
// `warmup`, left out of the table, its figures printed on a line of their own. The guest's first victim
// is cold: its signal handler runs 7–15 ms after the signal while bunlet's process takes no major fault
// on the way (the thread's majflt, on the eviction's log line), so only the agent that ran first in a
// boot would meet that cold victim.
// Goal: crossing → victim got SIGTERM p99 ≤ 20 ms; ≥ 10× faster than earlyoom and ≥ 50× than
// systemd-oomd at p99.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { preciseNow } from "../../src/clock.ts";
import { createNotifierHub } from "../../src/kernel/hub.ts";
import { watchMemoryEvents } from "../../src/kernel/memory-events.ts";
import { startWorkingSetWatch } from "../../src/kernel/working-set-watch.ts";
import { NOTIFIER_THREAD_NICE, NOTIFIER_THREAD_RT_PRIORITY } from "../../src/kernel/thread-priority.ts";
import { ensureBuilt, freePort, spawnBunlet, waitForHealthz, type BunletProcess } from "../../test/support/binary.ts";
import { acquireContainerd, removeSandboxes, tearDownPods, type TestContainerd } from "../../test/support/containerd.ts";
import { writeStaticPodConfig } from "../../test/support/agent.ts";
import { staticPodYaml } from "../../test/support/manifests.ts";

const MiB = 2 ** 20;
const ALLOCATABLE = 256 * MiB;
const THRESHOLD = 100 * MiB;
const LINE = ALLOCATABLE - THRESHOLD;
// memory.high LINE + 16 MiB: a victim nobody has killed 16 MiB after the crossing stalls there (what
// systemd-oomd waits for), and no agent's victim is throttled before it acts (earlyoom acts 24 MiB before
// the line, bunlet within ~1 MiB after it).
const HIGH_MIB = (ALLOCATABLE - THRESHOLD) / 2 ** 20 + 16;
// Page cache (a host file read through the guest's hostfs) charged to kubepods/bench-pagecache before
// every run of every agent: what memory.high's reclaim scans — systemd-oomd kills only "with reclaim
// activity" (pgscan rising in the 30 s before), and an anonymous hog with no swap has nothing else to
// scan. Usage at the crossing stays under memory.high, so it is reclaimed only once the victim is
// past the line (and page cache never counts as the working set anyway).
const PAGECACHE_MIB = 8;
const RAMP_MIB = 240;
// systemd-oomd's runs, with swap on in the guest (SWAP_MIB on a host file as /dev/ubda): past memory.high
// the kernel swaps the hog's pages out — reclaim activity (pgscan) and a real "full" stall, what
// systemd-oomd kills on — and the ramp goes on past memory.max into swap, so the stall lasts until it acts.
// Without swap an anonymous hog stalled at memory.high has nothing to reclaim: 1 kill in 3 runs.
const OOMD_RAMP_MIB = 480;
const SWAP_MIB = 512;
const EARLYOOM_LEAD = 24 * MiB;
const FREED_MARGIN = 16 * MiB;
const SLICE = "bunletbench.slice";
const MOUNT = "/sys/fs/cgroup";
const REPO = resolve(import.meta.dir, "../..");

type Mode = "bunlet" | "earlyoom" | "oomd";
const LABEL: Record<Mode, string> = { bunlet: "(i) bunlet, cgroup v2 fast path", earlyoom: "(ii) earlyoom 1.7", oomd: "(iii) systemd-oomd 252" };

// The agent's clock (src/clock.ts): sub-ms and kept on the wall clock, as bunlet's and memhog's stamps.
const nowMs = () => preciseNow();
const sleep = (ms: number) => Bun.sleep(ms);

async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number, intervalMs = 5): Promise<T> {
  const end = nowMs() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (nowMs() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

function sh(cmd: string): string {
  const r = spawnSync("sh", ["-c", cmd], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr.trim() || `exit ${r.status}`}`);
  return r.stdout;
}

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
const fmt = (ms: number) => (Number.isNaN(ms) ? "-" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);

function memAvailableBytes(): number {
  return Number(/^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? 0) * 1024;
}

/**
 * Page faults and reclaim over a run: bunlet's major faults (its code and bytecode are file pages of the
 * binary, on the guest's hostfs: reclaimed, each comes back as a slow read) and the guest's own major
 * faults and pages scanned by reclaim (kswapd + direct) — to tell a stall of bunlet's from the guest's.
 */
function faultCounters(pid: number | undefined): { majflt: number; pgmajfault: number; pgscan: number } {
  const vm = readFileSync("/proc/vmstat", "utf8");
  const v = (key: string) => Number(new RegExp(`^${key} (\\d+)$`, "m").exec(vm)?.[1] ?? 0);
  let majflt = Number.NaN;
  try {
    const stat = pid ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
    majflt = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[9]); // field 12, majflt
  } catch {}
  return { majflt, pgmajfault: v("pgmajfault"), pgscan: v("pgscan_kswapd") + v("pgscan_direct") };
}
function faultDelta(a: ReturnType<typeof faultCounters>, b: ReturnType<typeof faultCounters>): string {
  return `bunlet majflt +${b.majflt - a.majflt}, guest pgmajfault +${b.pgmajfault - a.pgmajfault}, pgscan +${b.pgscan - a.pgscan}`;
}

/** memhog's "sigterm <ns>" line in a CRI log → wall-clock ms (µs kept: the ns value is above 2^53). */
function sigtermFromCriLog(text: string): number | undefined {
  const m = /^\S+ stdout F sigterm (\d+)$/m.exec(text);
  return m ? Number(BigInt(m[1]!) / 1000n) / 1000 : undefined;
}

interface Run {
  pod?: string;
  /** The bench missed the crossing (bunlet evicted first): crossedAt is bunlet's traced one (noteTraces). */
  crossingFromTrace?: boolean;
  /**
   * With crossingFromTrace: the bench's last read under the line before it. The crossing came after it, so
   * timing from it bounds the delay from above (bunlet's own crossing leaves its detection delay out).
   */
  underAt?: number;
  /** The bench's recent reads under the line, until noteTraces picks underAt from them (not saved). */
  underReads?: number[];
  allReads?: number[];
  /**
   * The bench's crossing was a touch: its next read, 2 ms on, found the working set back at or under the
   * line (memory.current counts the per-CPU charge stock, up to 64 pages charged ahead of use, uncharged
   * again when another cgroup charges on that CPU — e.g. the bench's own allocations). Only where the
   * bench's crossing is the one timed (not bunlet's earlier own).
   */
  rulerTouch?: boolean;
  /** The agent's first run in its guest session: untimed, left out of the table (see WARM-UP). */
  warmup?: boolean;
  /** Wall-clock phases of the run (ms): pressure clear, pod running, crossing, removed. */
  phases?: string;
  crossedAt: number;
  gotAt?: number;
  freedAt?: number;
  stallAt?: number;
  note?: string;
}

interface Node {
  dir: string;
  manifests: string;
  podLogs: string;
  kubepods: string;
  port: number;
  nodeName: string;
  ctd: TestContainerd;
  bunlet?: BunletProcess;
  /** A host directory shared with the guest: bunlet's log and eviction trace per mode are copied there. */
  out?: string;
  verbosity?: number;
  /** PAGECACHE_MIB host file (in `out`), read before each run (see PAGECACHE_MIB). */
  pagecache?: string;
  /** BUNLET_NOTIFIER_THREAD_EVICTION for bunlet (default on; --no-thread-eviction: the main thread's cycle decides). */
  threadEviction?: boolean;
  /** The guest's block device for systemd-oomd's swap (scripts/host/v2-guest.sh -d), when there is one. */
  swapDevice?: string;
}

const OOMD_LIMIT_PCT = 1;

/** The "full avg10" of a cgroup's memory.pressure, in %. */
function fullAvg10(dir: string): number {
  return Number(/^full avg10=([\d.]+)/m.exec(readFileSync(join(dir, "memory.pressure"), "utf8"))?.[1] ?? 0);
}

/** The slice systemd-oomd watches; bunlet's cgroupRoot. Unit files in the guest's /run vanish at poweroff. */
function makeSlice(debugOomd: boolean): void {
  if (debugOomd) {
    // What systemd-oomd sees each interval (pressure, reclaim, candidates), in its journal.
    mkdirSync("/run/systemd/system/systemd-oomd.service.d", { recursive: true });
    writeFileSync("/run/systemd/system/systemd-oomd.service.d/debug.conf", "[Service]\nEnvironment=SYSTEMD_LOG_LEVEL=debug\n");
  }
  mkdirSync("/run/systemd/system", { recursive: true });
  writeFileSync(
    `/run/systemd/system/${SLICE}`,
    `[Slice]\nMemoryAccounting=yes\nManagedOOMMemoryPressure=kill\nManagedOOMMemoryPressureLimit=${OOMD_LIMIT_PCT}%\n`,
  );
  mkdirSync("/run/systemd/oomd.conf.d", { recursive: true });
  writeFileSync("/run/systemd/oomd.conf.d/bench.conf", "[OOM]\nDefaultMemoryPressureDurationSec=1s\n");
  sh(`systemctl daemon-reload && systemctl start ${SLICE}`);
}

async function startBunlet(n: Node, mode: Mode): Promise<void> {
  const memTotal = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))![1]) * 1024;
  const config = writeStaticPodConfig(
    join(n.dir, `config-${mode}.yaml`),
    { manifests: n.manifests, cgroupRoot: `/${SLICE}`, endpoint: n.ctd.endpoint, port: n.port, podLogsDir: n.podLogs },
    [
      "enforceNodeAllocatable: [pods]",
      `systemReserved: { memory: "${memTotal - ALLOCATABLE}" }`,
      // earlyoom and systemd-oomd runs: bunlet never evicts for memory.
      mode === "bunlet" ? `evictionHard: { memory.available: ${THRESHOLD / MiB}Mi }` : "evictionHard: { nodefs.available: 1Mi }",
      `kernelMemcgNotification: ${mode === "bunlet"}`,
      "evictionPressureTransitionPeriod: 1s",
      "evictStaticPods: true",
      // systemd-oomd's runs have swap on (see SWAP_MIB): bunlet refuses to start with swap, as the kubelet.
      ...(mode === "oomd" && n.swapDevice ? ["failSwapOn: false"] : []),
    ],
  );
  rmSync(join(n.dir, "trace.jsonl"), { force: true });
  // The notifier-thread eviction (the working-set thread decides at its crossing), named explicitly.
  n.bunlet = spawnBunlet(
    [
      `--config=${config}`,
      `--root-dir=${join(n.dir, "root")}`,
      `--hostname-override=${n.nodeName}`,
      `--eviction-trace=${join(n.dir, "trace.jsonl")}`,
      ...(n.verbosity ? [`-v=${n.verbosity}`] : []),
    ],
    {
      env: { BUNLET_NOTIFIER_THREAD_EVICTION: n.threadEviction === false ? "0" : "1" },
    },
  );
  await waitForHealthz(n.bunlet, `http://127.0.0.1:${n.port}/healthz`, 120_000);
  await waitFor(
    "kubepods' memory.max",
    () => existsSync(join(n.kubepods, "memory.max")) && readFileSync(join(n.kubepods, "memory.max"), "utf8").trim() === String(ALLOCATABLE),
    120_000,
    100,
  );
  // The ramp's stall point (see the header); bunlet does not write memory.high on kubepods.
  writeFileSync(join(n.kubepods, "memory.high"), String(HIGH_MIB * MiB));
  if (mode === "bunlet")
    await waitFor("bunlet's working-set notifier armed", () => /working-set notifier armed|cgroup v2 working-set watch/.test(n.bunlet!.stderr()), 60_000, 100);
}

interface PodView {
  metadata: { name: string; namespace?: string; uid?: string };
  status?: { phase?: string; conditions?: unknown };
}

async function pods(n: Node): Promise<PodView[]> {
  return ((await (await fetch(`http://127.0.0.1:${n.port}/pods`)).json()) as { items: PodView[] }).items;
}

/**
 * The working set of kubepods against the line: the up-crossing from a 2 ms poll on its own thread (it
 * posts only the crossing; memory.stat re-read on every read, so the crossing is exact), "freed" from a
 * 2 ms poll here, started at the crossing: memory.current − the crossing's inactive_file back FREED_MARGIN
 * under the line (the victim's memory gone; a few hundred KiB of slab or per-CPU charge moving near the
 * line is not the victim's memory being freed).
 */
function observeLine(n: Node) {
  let crossedAt: number | undefined;
  let freedAt: number | undefined;
  /** The ruler's recent reads under the line (wall clock, the last 500): a crossing it never saw came after the last before it. */
  const under: number[] = [];
  /** Every recent read (the last 500), to tell a ruler that did not read at all from a line it read under. */
  const all: number[] = [];
  let polling = false;
  /** The working set at the ruler's first read after its crossing. */
  let nextAfter: number | undefined;
  const usage = () => Number(readFileSync(join(n.kubepods, "memory.current"), "utf8"));
  const w = startWorkingSetWatch({
    // A plain 2 ms timed poll (no imminent-crossing episodes), so the ruler is the same for every agent.
    poll: { minIntervalMs: 2, maxIntervalMs: 2, statRefreshMs: 0, imminentHorizonMs: 0, reportReads: true },
    onRead: (_id, _usage, ws, _timed, atMs) => {
      if (crossedAt !== undefined) {
        if (nextAfter === undefined && atMs > crossedAt) nextAfter = ws;
        return;
      }
      if (all.push(atMs) > 500) all.shift();
      if (ws < LINE && under.push(atMs) > 500) under.shift();
    },
    // At bunlet's own notifier priority (nice -20, SCHED_RR 1): at nice 0 it was starved while a boosted
    // bunlet (nice -20) saw the crossing and killed the victim first, and the bench never saw the line
    // crossed (runs lost, and the fastest ones at that); at nice -20 only, the hog's cgroup delayed it as
    // it delayed bunlet's thread, and the crossing was stamped late.
    threadNice: NOTIFIER_THREAD_NICE,
    threadRealtime: NOTIFIER_THREAD_RT_PRIORITY,
    onPriority: (p) =>
      void (
        p.realtime &&
        !p.realtime.applied &&
        console.log(`the bench's 2 ms watch runs SCHED_OTHER (nice ${p.effective ?? p.nice}): SCHED_RR refused (${p.realtime.error})`)
      ),
    onCrossing: (c) => {
      if (crossedAt !== undefined) return;
      crossedAt = c.atMs;
      polling = true;
      void (async () => {
        while (polling && freedAt === undefined) {
          if (usage() - c.inactiveFileBytes < LINE - FREED_MARGIN) freedAt = nowMs();
          else await sleep(2);
        }
      })();
    },
  });
  w.set([{ id: "kubepods", source: { cgroupDir: n.kubepods }, lineBytes: LINE }]);
  return {
    crossed: () => crossedAt,
    freed: () => freedAt,
    /** The next read after the crossing was back at or under the line (undefined: no read yet). */
    touched: () => (nextAfter === undefined ? undefined : nextAfter <= LINE),
    underReads: () => [...under],
    allReads: () => [...all],
    stop: () => {
      polling = false;
      return w.stop();
    },
  };
}

interface TraceRecord {
  pod: string;
  trigger: { kind: string; reason?: string };
  timestamps: { thresholdCrossed: string };
  latencyMs: { decision: number; stopSignalSent: number | null; cycleStarted?: number | null; statsRead?: number | null; signalTaken?: number | null };
}

const isoMs = (iso: string) => {
  const m = /^(.*\.\d{3})(\d*)Z$/.exec(iso);
  return m ? Date.parse(`${m[1]}Z`) + Number(`0.${m[2] || "0"}`) : Date.parse(iso);
};

/** bunlet's trace has an eviction record for `pod`. */
function traceHas(n: Node, pod: string): boolean {
  const file = join(n.dir, "trace.jsonl");
  return (
    existsSync(file) &&
    readFileSync(file, "utf8")
      .split("\n")
      .some((l) => l.includes(`"kind":"eviction"`) && l.includes(`/${pod}"`))
  );
}

/**
 * bunlet's own account of each eviction (its --eviction-trace records, written once memory is back
 * under the threshold or when bunlet stops, so read after it stopped), as a note on each run.
 */
function noteTraces(n: Node, rs: Run[]): void {
  const file = join(n.dir, "trace.jsonl");
  const recs = existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.includes(`"kind":"eviction"`))
        .map((l) => JSON.parse(l) as TraceRecord)
    : [];
  for (const r of rs) {
    if (!r.pod || (!r.crossedAt && !r.crossingFromTrace)) continue;
    const rec = recs.filter((x) => x.pod.endsWith(`/${r.pod}`)).at(-1);
    const l = rec?.latencyMs;
    const traced = rec ? isoMs(rec.timestamps.thresholdCrossed) : undefined;
    const benchAt = r.crossedAt;
    // The crossing is the earlier of the bench's and bunlet's own (as reaction.ts): bunlet's thread can
    // read the line crossed, and evict, before the bench's next 2 ms read.
    if (traced !== undefined && (r.crossingFromTrace || traced < r.crossedAt)) {
      r.crossedAt = traced;
      delete r.rulerTouch;
    }
    if (r.crossingFromTrace && traced === undefined) r.crossedAt = 0; // no crossing known: not timed
    let ruler = "";
    if (r.crossingFromTrace && traced !== undefined) {
      r.underAt = r.underReads?.filter((t) => t <= traced).at(-1);
      // A long gap means the ruler itself did not read (the guest, or the ruler, off the CPU): the bound is loose.
      const next = r.underAt === undefined ? undefined : r.allReads?.find((t) => t > r.underAt!);
      if (r.underAt !== undefined)
        ruler = `; the bench's reads: the last under the line ${fmt(traced - r.underAt)} before bunlet's crossing, the next ${next === undefined ? "none" : `${fmt(next - traced)} after it`}`;
    }
    delete r.underReads;
    delete r.allReads;
    const note = !rec
      ? "no trace record"
      : `bunlet's trace: ${rec.trigger.kind} trigger${rec.trigger.reason ? ` (${rec.trigger.reason})` : ""} ${r.crossingFromTrace ? "(the bench never saw the line: the victim was gone before its next read)" : `${fmt(traced! - benchAt)} after the bench's crossing`}, → cycle ${fmt(l!.cycleStarted ?? Number.NaN)}, → stats ${fmt(l!.statsRead ?? Number.NaN)}, → decision ${fmt(l!.decision)}, → signal sent ${fmt(l!.stopSignalSent ?? Number.NaN)}${l!.signalTaken !== undefined ? `, → taken by the victim ${l!.signalTaken === null ? "(not seen in 30 ms)" : fmt(l!.signalTaken)}` : ""}${(rec as { decidedBy?: string }).decidedBy ? `, decided by ${(rec as { decidedBy?: string }).decidedBy}` : ""}`;
    r.note = r.note ? `${r.note}; ${note}${ruler}` : `${note}${ruler}`;
  }
}

async function victimGot(n: Node, pod: PodView): Promise<number | undefined> {
  const dir = readdirSync(n.podLogs).find((d) => d.includes(`_${pod.metadata.name}_`));
  if (!dir) return undefined;
  const log = join(n.podLogs, dir, "main", "0.log");
  return existsSync(log) ? sigtermFromCriLog(readFileSync(log, "utf8")) : undefined;
}

async function oneRun(n: Node, mode: Mode, i: number | "warmup", hub: ReturnType<typeof createNotifierHub>, phases: string[]): Promise<Run> {
  let t0 = nowMs();
  const mark = (what: string) => {
    const t = nowMs();
    phases.push(`${what} ${((t - t0) / 1000).toFixed(1)} s`);
    t0 = t;
  };
  const manifest = `ramp-${mode}-${i}`;
  const podName = `${manifest}-${n.nodeName}`;
  const obs = observeLine(n);
  let stallAt: number | undefined;
  const stall = watchMemoryEvents(hub, {
    path: join(n.kubepods, "memory.events"),
    onEvent: (e) => (stallAt ??= e.delta.high ? preciseNow(e.atMs) : undefined),
  });
  let eo: Awaited<ReturnType<typeof startEarlyoom>> | undefined;
  let oomdSince = "";
  if (mode === "oomd") {
    // A fresh start for each of its samples: the slice's "full" avg10 from the last run's stall back under
    // the limit (it decays over ~30 s; left above, the next kill would ride on the last run's pressure).
    await waitFor("the slice's memory pressure to decay under systemd-oomd's limit", () => fullAvg10(join(MOUNT, SLICE)) < OOMD_LIMIT_PCT, 120_000, 500);
    mark("pressure decayed");
  }
  // Read in a cgroup of its own, removed at once: the pages stay charged inside kubepods (to the removed
  // cgroup), and no empty leaf with a high pgscan rate is left for systemd-oomd to pick as its victim.
  if (n.pagecache) {
    const cg = join(n.kubepods, `bench-pagecache-${mode}-${i}`);
    mkdirSync(cg);
    sh(`sh -c 'echo $$ > ${cg}/cgroup.procs && exec cat ${n.pagecache} > /dev/null'`);
    rmdirSync(cg);
  }
  try {
    if (mode === "earlyoom") eo = await startEarlyoom(n);
    writeFileSync(
      join(n.manifests, `${manifest}.yaml`),
      // Burstable (a 1Mi request, no limit): admitted while the node still reports MemoryPressure from the
      // previous run's eviction (BestEffort pods are not), and still every agent's first victim.
      staticPodYaml(manifest, {
        image: n.ctd.images.memhog,
        args: [String(mode === "oomd" && n.swapDevice ? OOMD_RAMP_MIB : RAMP_MIB), "0"],
        terminationGracePeriodSeconds: 0,
        container: "      resources: { requests: { memory: 1Mi } }\n",
      }),
    );
    const pod = await waitFor(
      `${podName} Running`,
      async () => (await pods(n)).find((p) => p.metadata.name === podName && p.status?.phase === "Running"),
      60_000,
      20,
    );
    mark("running");
    if (eo) return await eo.run(pod);
    if (mode === "oomd") oomdSince = new Date().toISOString();
    // bunlet's thread may see the line and evict before the bench's next read: then its trace has the crossing.
    // (The victim's log is looked at every 50 ms only: the guest's one CPU runs the ramp.)
    let lookedAt = nowMs();
    const gone = async () => {
      if (mode !== "bunlet" || nowMs() - lookedAt < 50) return false;
      lookedAt = nowMs();
      return (await victimGot(n, pod)) !== undefined;
    };
    const seen = await waitFor(`${podName} to cross the line`, async () => obs.crossed() ?? ((await gone()) ? -1 : undefined), 60_000, 2);
    mark("crossed");
    if (seen === -1) {
      const gotAt = await victimGot(n, pod);
      return { pod: podName, crossedAt: 0, crossingFromTrace: true, gotAt, underReads: obs.underReads(), allReads: obs.allReads() };
    }
    const crossedAt = seen;
    const freedAt = await waitFor("memory freed", () => obs.freed(), mode === "oomd" ? 60_000 : 30_000, 5);
    if (mode === "oomd") {
      const killed = sh(`journalctl -u systemd-oomd --since '${oomdSince.replace("T", " ").slice(0, 19)}' -o cat 2>/dev/null || true`).match(
        /Killed [^\n]*/,
      )?.[0];
      return { crossedAt, gotAt: freedAt, freedAt, stallAt, note: killed ?? "no 'Killed' line in systemd-oomd's journal" };
    }
    const gotAt = await waitFor(`${podName}'s sigterm line`, () => victimGot(n, pod), 10_000, 20).catch(() => undefined);
    return { pod: podName, crossedAt, gotAt, freedAt, rulerTouch: obs.touched(), ...(gotAt === undefined ? { note: "no sigterm line" } : {}) };
  } finally {
    stall.stop();
    await obs.stop();
    await eo?.stop();
    rmSync(join(n.manifests, `${manifest}.yaml`), { force: true });
    mark("done");
    await waitFor(`${podName} removed`, async () => !(await pods(n)).some((p) => p.metadata.name === podName), 60_000, 50);
    mark("removed");
  }
}

/**
 * earlyoom started, and the bench's view of its crossing (MemAvailable ≤ its -M minimum, read every 2 ms)
 * polling, before the ramp's pod is written: memhog ramps as soon as its container starts, seconds before
 * /pods says Running. Started only then, after bunlet in the same guest session, the ramp can already be
 * past earlyoom's minimum: earlyoom kills at once, memory is back before the bench's first read, and the
 * crossing it sees is the restarted victim's, seconds later.
 */
async function startEarlyoom(n: Node) {
  const ws = () => {
    const cur = Number(readFileSync(join(n.kubepods, "memory.current"), "utf8"));
    return cur - Number(/^inactive_file (\d+)$/m.exec(readFileSync(join(n.kubepods, "memory.stat"), "utf8"))?.[1] ?? 0);
  };
  // Its minimum on its own scale: MemAvailable now, less what the ramp still needs to reach the line, plus the lead.
  const minKiB = Math.floor((memAvailableBytes() - (LINE - ws() - EARLYOOM_LEAD)) / 1024);
  // -p: earlyoom at nice -20 (and oom_score_adj -100), its fastest setting, as bunlet's notifier path.
  const proc = Bun.spawn(
    ["earlyoom", "-M", String(minKiB), "-r", "0", "-p", "--prefer", "^memhog$", "--avoid", "^(bun|bunlet|containerd.*|earlyoom|systemd.*)$"],
    { stdout: "ignore", stderr: "pipe" },
  );
  let said = "";
  let ready = false;
  void (async () => {
    const dec = new TextDecoder();
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) {
      said += dec.decode(chunk, { stream: true });
      if (/mem total/.test(said)) ready = true;
    }
  })();
  let polling = true;
  let crossedAt: number | undefined;
  let wsAtCross = 0;
  let poll: Promise<void> = Promise.resolve();
  const stop = async () => {
    polling = false;
    await poll;
    proc.kill("SIGTERM");
    await proc.exited;
  };
  try {
    await waitFor("earlyoom to start", () => ready, 10_000, 5);
  } catch (e) {
    await stop();
    throw e;
  }
  const start = nowMs();
  poll = (async () => {
    while (polling && crossedAt === undefined) {
      if (memAvailableBytes() <= minKiB * 1024) {
        crossedAt = nowMs();
        wsAtCross = ws();
      } else await sleep(2);
    }
  })();
  return {
    stop,
    /** The run, once the pod is Running: its crossing (up to 60 s on), the victim's signal, the memory freed. */
    async run(pod: PodView): Promise<Run> {
      await waitFor("MemAvailable at earlyoom's minimum", () => crossedAt !== undefined, 60_000, 5).catch(() => undefined);
      if (crossedAt === undefined) return { crossedAt: 0, note: `missed: MemAvailable never fell to -M ${minKiB} KiB` };
      if (crossedAt - start < 5) return { crossedAt, note: "MemAvailable was under the minimum when earlyoom started (discarded)" };
      const gotAt = await waitFor("the sigterm line", () => victimGot(n, pod), 20_000, 20).catch(() => undefined);
      // A sigterm line from long before the bench's crossing is an earlier instance of the victim: earlyoom
      // acted on a dip the 2 ms watch did not see, the pod restarted and ramped again. Not timed.
      if (gotAt !== undefined && gotAt < crossedAt - 1000)
        return {
          crossedAt: 0,
          note: `missed: the victim got its signal ${fmt(crossedAt - gotAt)} before the bench saw MemAvailable at -M (an earlier instance)`,
        };
      // It acts before kubepods' line: "freed" is kubepods' working set back 16 MiB under where it was at its crossing.
      const freedAt = await waitFor("memory freed", () => ws() < wsAtCross - FREED_MARGIN && nowMs(), 20_000, 2).catch(() => undefined);
      return {
        crossedAt,
        gotAt,
        freedAt,
        ...(gotAt === undefined ? { note: `no sigterm line; earlyoom said: ${said.split("\n").slice(-3).join(" | ")}` } : {}),
      };
    },
  };
}

const runName = (r: Run, i: number) => (r.warmup ? "warm-up run" : `run ${i + 1}`);

interface GuestOpts {
  runs: number;
  modes: Mode[];
  out: string | undefined;
  verbosity: number | undefined;
  oomdRuns: number | undefined;
  budgetMin: number;
  threadEviction: boolean;
}

/** One line per run in `<out>/samples-v2.jsonl`: several shorter guest sessions add up to one table (--report). */
interface Sample extends Run {
  mode: Mode;
  /** The guest session (its start, ISO), so the table can say how many sessions its runs came from. */
  session: string;
  /** bunlet only: BUNLET_NOTIFIER_THREAD_EVICTION of the run. */
  threadEviction?: boolean;
}
const SAMPLES = "samples-v2.jsonl";

function readSamples(out: string): Sample[] {
  const f = join(out, SAMPLES);
  if (!existsSync(f)) return [];
  return readFileSync(f, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Sample);
}

async function inGuest(o: GuestOpts): Promise<void> {
  const { runs, modes, out, verbosity, oomdRuns, budgetMin } = o;
  const session = new Date().toISOString();
  if (!existsSync(join(MOUNT, "cgroup.controllers"))) throw new Error(`${MOUNT} is not cgroup v2: run this from the host (it boots the v2 guest)`);
  if (readFileSync("/proc/1/comm", "utf8").trim() !== "systemd") throw new Error("PID 1 is not systemd: the guest must boot with --systemd");
  for (const bin of ["earlyoom", "/lib/systemd/systemd-oomd"])
    if (spawnSync("sh", ["-c", `command -v ${bin}`]).status !== 0) throw new Error(`${bin} missing: run scripts/host/oom-agents.sh on the host`);
  // containerd's overlayfs snapshotter cannot put its layers on the guest's overlay root.
  mkdirSync("/var/lib/bunlet", { recursive: true });
  sh("mountpoint -q /var/lib/bunlet || mount -t tmpfs -o mode=755 tmpfs /var/lib/bunlet");
  makeSlice(verbosity !== undefined);
  const dir = `/tmp/bunlet-reaction-v2-${process.pid}`;
  const n: Node = {
    dir,
    manifests: join(dir, "manifests"),
    podLogs: join(dir, "pod-logs"),
    kubepods: join(MOUNT, SLICE, "kubepods"),
    port: freePort(),
    nodeName: `rv2-${process.pid}`,
    ctd: await acquireContainerd(),
    out,
    verbosity,
    pagecache: out && existsSync(join(out, "pagecache.bin")) ? join(out, "pagecache.bin") : undefined,
    threadEviction: o.threadEviction,
    swapDevice: existsSync("/dev/ubda") ? "/dev/ubda" : undefined,
  };
  mkdirSync(n.manifests, { recursive: true });
  mkdirSync(n.podLogs, { recursive: true });
  const hub = createNotifierHub();
  const results = new Map<Mode, Run[]>();
  const save = (mode: Mode, r: Run) => {
    if (n.out)
      writeFileSync(
        join(n.out, SAMPLES),
        `${JSON.stringify({ mode, session, ...(mode === "bunlet" ? { threadEviction: o.threadEviction } : {}), ...r } satisfies Sample)}\n`,
        { flag: "a" },
      );
  };
  try {
    writeFileSync(
      join(n.manifests, "steady.yaml"),
      staticPodYaml("steady", {
        image: n.ctd.images.busybox,
        command: ["sh", "-c", "exec sleep 2147483647"],
        terminationGracePeriodSeconds: 1,
        container: "      resources: { requests: { memory: 16Mi } }\n",
      }),
    );
    for (const mode of modes) {
      if (mode === "oomd" && n.swapDevice) {
        sh(`mkswap ${n.swapDevice} >/dev/null && swapon ${n.swapDevice}`);
        console.log(`swap on for systemd-oomd's runs: ${sh("swapon --show --noheadings").trim()}`);
      }
      if (mode === "oomd") sh("systemctl start systemd-oomd");
      await startBunlet(n, mode);
      if (mode === "oomd") console.log(`systemd-oomd as configured:\n${sh("oomctl dump 2>&1 | head -30 || true")}`);
      const rs: Run[] = [];
      results.set(mode, rs);
      const want = mode === "oomd" && oomdRuns !== undefined ? oomdRuns : runs;
      const until = nowMs() + budgetMin * 60_000;
      // i = -1: the warm-up (WARM-UP), then the timed runs.
      for (let i = -1, ok = 0; ok < want && i < want * 2; i++) {
        if (nowMs() > until) {
          console.log(`${LABEL[mode]}: its ${budgetMin} min are up after ${i} runs`);
          break;
        }
        const warmup = i < 0;
        const phases: string[] = [];
        const faults0 = faultCounters(n.bunlet?.pid);
        const r = await oneRun(n, mode, warmup ? "warmup" : i, hub, phases).catch(
          (e: Error): Run => ({ crossedAt: 0, note: `failed: ${e.message.split("\n")[0]}` }),
        );
        phases.push(faultDelta(faults0, faultCounters(n.bunlet?.pid)));
        r.phases = phases.join(", ");
        if (warmup) r.warmup = true;
        rs.push(r);
        if (r.gotAt !== undefined && !warmup) ok++;
        // Saved at once (a guest session cut by its time limit keeps what it measured); bunlet's once its
        // trace has the run (written when memory is back under the threshold; the crossing may come from it).
        if (mode === "bunlet" && r.pod) {
          const pod = r.pod;
          // Up to 30 s: the record can wait for the container's exit (5.6 s seen in a slow guest runtime), and a run whose crossing only the trace has is lost without it.
          await waitFor("bunlet's trace of the run", () => traceHas(n, pod), 30_000, 100).catch(() => undefined);
          noteTraces(n, [r]);
          if (n.out) writeFileSync(join(n.out, `bunlet-${mode}.log`), n.bunlet?.stderr() ?? "");
        }
        save(mode, r);
        const rel = (t?: number) => (t === undefined ? "-" : !r.crossedAt ? "(no crossing known)" : fmt(t - r.crossedAt));
        console.log(
          `${LABEL[mode]} ${runName(r, i)}: crossing→victim got its signal ${rel(r.gotAt)}, crossing→freed ${rel(r.freedAt)}${r.stallAt ? `, stall began ${rel(r.stallAt)}` : ""}${r.note ? ` (${r.note})` : ""} [${r.phases}]`,
        );
        if (r.gotAt === undefined && mode === "oomd")
          console.log(
            `systemd-oomd now:\n${sh(`oomctl dump 2>&1 | sed -n '/Memory Pressure Monitored/,$p' | head -12; journalctl -u systemd-oomd -n 15 --no-pager 2>&1; cd ${MOUNT}/${SLICE} && head memory.pressure kubepods/memory.pressure; grep -E '^(pgscan|pgsteal|anon|file|inactive_file|active_file) ' memory.stat; cat kubepods/memory.events || true`)}`,
          );
        // An agent that did not act twice in a row is misconfigured or cannot act here: say so, go on.
        if (ok === 0 && i === 1) {
          console.log(`${LABEL[mode]}: no reaction in the first two runs, mode abandoned`);
          break;
        }
      }
      await n.bunlet?.stop("SIGTERM", 10_000);
      if (mode === "bunlet")
        for (const [i, r] of rs.entries())
          if (r.pod)
            console.log(
              `${LABEL[mode]} ${runName(r, i - 1)}: crossing→victim got its signal ${r.gotAt !== undefined && r.crossedAt ? fmt(r.gotAt - r.crossedAt) : "-"}; ${r.note}`,
            );
      if (n.out) {
        writeFileSync(join(n.out, `bunlet-${mode}.log`), n.bunlet?.stderr() ?? "");
        if (existsSync(join(n.dir, "trace.jsonl"))) writeFileSync(join(n.out, `trace-${mode}.jsonl`), readFileSync(join(n.dir, "trace.jsonl")));
      }
      n.bunlet = undefined;
      if (mode === "oomd") sh("systemctl stop systemd-oomd systemd-oomd.socket || true");
      if (mode === "oomd" && n.swapDevice) sh(`swapoff ${n.swapDevice} || true`);
    }
  } finally {
    await hub.close();
    await n.bunlet?.stop("SIGTERM", 10_000);
    await tearDownPods(n.ctd, () => removeSandboxes(n.ctd.cri, n.nodeName), `/${SLICE}/kubepods`, dir);
  }
  report(out ? readSamples(out) : [...results].flatMap(([mode, rs]) => rs.map((r) => ({ ...r, mode, session }))));
}

/** The table's rows: one per agent; bunlet's runs without the notifier-thread eviction apart. */
type Row = Mode | "bunlet-cycle";
const ROW_LABEL: Record<Row, string> = {
  ...LABEL,
  bunlet: "(i) bunlet, v2 fast path, decided on the working-set thread",
  "bunlet-cycle": "(i′) bunlet, v2 fast path, decided by the main thread's cycle",
};

function report(all: Sample[]): void {
  const results = new Map<Row, Run[]>();
  const sessions = new Map<Row, Set<string>>();
  const samples = all.filter((x) => !x.warmup);
  for (const x of samples) {
    const row: Row = x.mode === "bunlet" && x.threadEviction === false ? "bunlet-cycle" : x.mode;
    if (!results.has(row)) results.set(row, []);
    results.get(row)!.push(x);
    if (!sessions.has(row)) sessions.set(row, new Set());
    sessions.get(row)!.add(x.session);
  }
  const s = new Map<
    Row,
    { n: number; of: number; g50: number; g90: number; g99: number; gmax: number; f50: number; f99: number; stall50: number; stall99: number }
  >();
  for (const [mode, rs] of results) {
    // (A signal long before the crossing is an earlier instance's: samples recorded before earlyoomRun said so.)
    const ok = rs.filter((r) => r.gotAt !== undefined && r.crossedAt > 0 && r.gotAt >= r.crossedAt - 1000);
    const got = ok.map((r) => r.gotAt! - r.crossedAt);
    const freed = rs.filter((r) => r.freedAt !== undefined && r.crossedAt > 0).map((r) => r.freedAt! - r.crossedAt);
    const stall = ok.filter((r) => r.stallAt !== undefined).map((r) => r.gotAt! - r.stallAt!);
    s.set(mode, {
      n: ok.length,
      of: rs.length,
      g50: percentile(got, 50),
      g90: percentile(got, 90),
      g99: percentile(got, 99),
      gmax: percentile(got, 100),
      f50: percentile(freed, 50),
      f99: percentile(freed, 99),
      stall50: percentile(stall, 50),
      stall99: percentile(stall, 99),
    });
  }
  const ref = s.get("bunlet");
  const x = (a: number, b: number) => (Number.isNaN(a / b) ? "-" : `${(a / b).toFixed(a / b < 10 ? 2 : 0)}×`);
  console.log(
    `\nramp: memhog to ${RAMP_MIB} MiB (systemd-oomd with swap: ${OOMD_RAMP_MIB} MiB, ${SWAP_MIB} MiB of swap) as fast as the guest allows, kubepods memory.max ${ALLOCATABLE / MiB} MiB (allocatable), memory.high ${HIGH_MIB} MiB, threshold ${THRESHOLD / MiB} MiB available (line: working set ${LINE / MiB} MiB), ${PAGECACHE_MIB} MiB page cache`,
  );
  console.log(
    "| agent | acted / runs (guest sessions) | crossing → victim got its signal p50 | p90 | p99 | max | crossing → memory freed p50 | p99 | p99 vs (i) |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const [mode, v] of s)
    console.log(
      `| ${ROW_LABEL[mode]} | ${v.n} / ${v.of} (${sessions.get(mode)!.size}) | ${fmt(v.g50)} | ${fmt(v.g90)} | ${fmt(v.g99)} | ${fmt(v.gmax)} | ${fmt(v.f50)} | ${fmt(v.f99)} | ${mode === "bunlet" || !ref ? "—" : `${x(v.g99, ref.g99)}`} |`,
    );
  // Runs whose crossing the bench never saw are timed from bunlet's own (its thread's read), which leaves
  // the thread's detection delay out; timed from the bench's last read under the line instead, they are
  // an upper bound.
  const bunletRuns = (results.get("bunlet") ?? []).filter((r) => r.gotAt !== undefined && r.crossedAt > 0);
  const fromTrace = bunletRuns.filter((r) => r.crossingFromTrace);
  const bounded = bunletRuns
    .filter((r) => !r.crossingFromTrace || r.underAt !== undefined)
    .map((r) => r.gotAt! - (r.crossingFromTrace ? r.underAt! : r.crossedAt));
  if (fromTrace.length > 0)
    console.log(
      `(i) ${fromTrace.length} of ${bunletRuns.length} timed runs are from bunlet's own crossing (the bench never saw the line). Upper bound, each run timed from the bench's crossing or, where it never saw it, from its last read under the line before bunlet's (${bounded.length} runs; ${fromTrace.length - fromTrace.filter((r) => r.underAt !== undefined).length} without that read left out): crossing → victim got its signal p50 ${fmt(percentile(bounded, 50))}, p90 ${fmt(percentile(bounded, 90))}, p99 ${fmt(percentile(bounded, 99))}, max ${fmt(percentile(bounded, 100))}`,
    );
  const touches = bunletRuns.filter((r) => r.rulerTouch);
  if (touches.length > 0) {
    const rest = bunletRuns.filter((r) => !r.rulerTouch).map((r) => r.gotAt! - r.crossedAt);
    console.log(
      `(i) ${touches.length} of ${bunletRuns.length} timed runs' crossing (the bench's) was a touch — its next read, 2 ms on, back at or under the line — timed from it: ${touches.map((r) => fmt(r.gotAt! - r.crossedAt)).join(", ")}; the other ${rest.length}: p50 ${fmt(percentile(rest, 50))}, p90 ${fmt(percentile(rest, 90))}, p99 ${fmt(percentile(rest, 99))}`,
    );
  }
  const warmups = all.filter((x) => x.warmup);
  if (warmups.length > 0) {
    const by = (m: Mode) => warmups.filter((x) => x.mode === m).map((x) => (x.gotAt !== undefined && x.crossedAt > 0 ? fmt(x.gotAt - x.crossedAt) : "-"));
    console.log(
      `warm-up runs (each agent's first in its guest session, not in the table): ${(Object.keys(LABEL) as Mode[])
        .filter((m) => by(m).length > 0)
        .map((m) => `${m} ${by(m).join(", ")}`)
        .join("; ")}`,
    );
  }
  const oomd = s.get("oomd");
  if (oomd && !Number.isNaN(oomd.stall50))
    console.log(`(iii) from the first memory.high event (reclaim, then the stall) to the kill: p50 ${fmt(oomd.stall50)}, p99 ${fmt(oomd.stall99)}`);
  if (!ref) return;
  console.log(`\ngoal: bunlet crossing → victim got SIGTERM p99 ≤ 20 ms: ${ref.g99 <= 20 ? "met" : "NOT met"} (${fmt(ref.g99)})`);
  const eo = s.get("earlyoom");
  if (eo) console.log(`goal: ≥ 10× faster than earlyoom at p99: ${eo.g99 / ref.g99 >= 10 ? "met" : "NOT met"} (${x(eo.g99, ref.g99)})`);
  if (oomd) console.log(`goal: ≥ 50× faster than systemd-oomd at p99: ${oomd.g99 / ref.g99 >= 50 ? "met" : "NOT met"} (${x(oomd.g99, ref.g99)})`);
}

async function onHost(argv: string[], out: string, fresh: boolean): Promise<number> {
  await ensureBuilt();
  mkdirSync(out, { recursive: true });
  if (fresh) rmSync(join(out, SAMPLES), { force: true });
  writeFileSync(join(out, "pagecache.bin"), new Uint8Array(PAGECACHE_MIB * MiB).fill(0x5a));
  // systemd-oomd's swap device in the guest (sparse: only what the guest writes takes host disk).
  const swap = join(out, "swap.img");
  rmSync(swap, { force: true });
  writeFileSync(swap, "");
  truncateSync(swap, SWAP_MIB * MiB);
  const r = spawnSync(join(REPO, "scripts/host/oom-agents.sh"), { stdio: "inherit" });
  if (r.status !== 0) return r.status ?? 1;
  const child = Bun.spawn(
    [
      "bash",
      join(REPO, "scripts/host/v2-guest.sh"),
      "--systemd",
      "-m",
      "1536",
      "-t",
      "1800",
      "-w",
      out,
      "-d",
      swap,
      "--",
      process.execPath,
      import.meta.path,
      "--in-guest",
      `--out=${out}`,
      ...argv,
    ],
    {
      cwd: REPO,
      stdout: "inherit",
      stderr: "inherit",
    },
  );
  return await child.exited;
}

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "10" },
    modes: { type: "string", default: "bunlet,earlyoom,oomd" },
    // Where bunlet's log and eviction trace of each mode are left (shared with the guest).
    out: { type: "string", default: "/tmp/bunlet-reaction-v2" },
    // bunlet's -v (2: debug, e.g. each re-posted crossing).
    v: { type: "string" },
    // systemd-oomd's sample count (default --runs): each waits ~30 s for the last one's pressure to decay.
    "oomd-runs": { type: "string" },
    // Minutes per mode at most (the heavy lock is shared): a mode stops starting runs after that.
    "budget-min": { type: "string", default: "1000" },
    "in-guest": { type: "boolean", default: false },
    // Start a new table: forget the samples of earlier guest sessions in --out (default: add to them).
    fresh: { type: "boolean", default: false },
    // Print the table of the samples in --out and exit (no guest).
    report: { type: "boolean", default: false },
    // bunlet without the notifier-thread eviction (the main thread's cycle decides), for comparison.
    "no-thread-eviction": { type: "boolean", default: false },
  },
});
const modes = values.modes!.split(",") as Mode[];
for (const m of modes) if (!(m in LABEL)) throw new Error(`--modes: unknown mode ${m} (valid: ${Object.keys(LABEL).join(", ")})`);
if (values.report) report(readSamples(values.out!));
else if (values["in-guest"])
  await inGuest({
    runs: Number(values.runs),
    modes,
    out: values.out,
    verbosity: values.v === undefined ? undefined : Number(values.v),
    oomdRuns: values["oomd-runs"] === undefined ? undefined : Number(values["oomd-runs"]),
    budgetMin: Number(values["budget-min"]),
    threadEviction: !values["no-thread-eviction"],
  });
else
  process.exit(
    await onHost(
      process.argv.slice(2).filter((a) => !a.startsWith("--out") && a !== "--fresh"),
      values.out!,
      values.fresh!,
    ),
  );
