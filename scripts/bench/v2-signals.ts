// Which cgroup v2 signal tells first, and honestly, that a cgroup's working set crossed an eviction
// line (docs/adr/0003-v2-working-set-watch.md)? Runs inside the v2 guest (root, /sys/fs/cgroup a cgroup2 mount):
//   flock /tmp/bunlet-heavy.lock scripts/host/v2-guest.sh -- bun scripts/bench/v2-signals.ts [--runs 8]
// One cgroup, memory.max LIMIT, ~CACHE MiB of page cache read into it first (it must not count), and
// a hog that ramps anonymous memory at RATE MiB/s in 1 MiB steps. Ground truth: the hog itself, after
// each step, reads memory.current and memory.stat and notes the wall-clock time when
// current − inactive_file first reached the line. Each candidate then reports when it told:
//   psi        a PSI trigger "some 10000 500000" (10 ms stall in 0.5 s, the smallest window) on the
//              cgroup's memory.pressure (EPOLLPRI through the notifier hub)
//   high       memory.high armed at line + inactive_file, memory.events "high" (EPOLLPRI), disarmed
//              (memory.high = max) as soon as it fired; memory.events.local watched in the same run
//   high-stuck the same, never disarmed (an agent that died or hung after arming): the throttle
//   poll-N     the working-set worker (src/kernel/working-set-watch.ts) polling at a fixed N ms
//   adaptive   the same worker with its defaults (5 ms at the line, slower with headroom, and polled off
//              the timer when the growth projects the line within 25 ms: an imminent-crossing episode)
//   adaptive-timer  the same without episodes (imminentHorizonMs 0: every read on the timer)
// Latency = candidate's wall-clock time − the hog's. Also printed: the ramp's duration per candidate
// (memory.high throttles the hog) and the poll worker's CPU at idle.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { preciseNow } from "../../src/clock.ts";
import { createNotifierHub } from "../../src/kernel/hub.ts";
import { watchMemoryEvents } from "../../src/kernel/memory-events.ts";
import { startPsiNotifier } from "../../src/kernel/psi.ts";
import { startWorkingSetWatch } from "../../src/kernel/working-set-watch.ts";

const MiB = 2 ** 20;
const MOUNT = "/sys/fs/cgroup";
/** The hog goes on this far past the crossing (kept small: under a stuck memory.high each charge batch can sleep up to 2 s). */
const OVER_MIB = 4;
/** high-stuck goes further, to show the throttle a memory.high left armed puts on the pods (killed after 30 s). */
const STUCK_OVER_MIB = 24;
const nowMs = () => preciseNow();

// ---- the hog (a child process inside the cgroup) ----
/** Allocates in 256 KiB steps (the memcg charge batch), checking the working set after each. */
async function hog(dir: string, lineBytes: number, overMiB: number, rate: number): Promise<void> {
  const STEP = 256 * 1024;
  const ws = () => {
    const cur = Number(readFileSync(join(dir, "memory.current"), "utf8"));
    const inactive = Number(/^inactive_file (\d+)$/m.exec(readFileSync(join(dir, "memory.stat"), "utf8"))?.[1] ?? 0);
    return cur - inactive;
  };
  const keep: Buffer[] = [];
  const start = performance.now();
  let crossedAt: number | undefined;
  let crossedStep = 0;
  const steps: number[] = [];
  for (let i = 1; ; i++) {
    const t0 = performance.now();
    keep.push(Buffer.allocUnsafeSlow(STEP).fill(i & 0xff));
    if (crossedAt === undefined && ws() >= lineBytes) {
      crossedAt = nowMs();
      crossedStep = i;
    }
    steps.push(performance.now() - t0);
    if (crossedAt !== undefined && i >= crossedStep + (overMiB * MiB) / STEP) break;
    const due = ((i * STEP) / MiB / rate) * 1000 - (performance.now() - start);
    if (due > 0) await Bun.sleep(due);
  }
  steps.sort((a, b) => a - b);
  console.log(`cross ${crossedAt} after ${(nowMs() - crossedAt!).toFixed(1)} step ${steps[steps.length >> 1]!.toFixed(2)}`);
  await Bun.sleep(800);
  process.exit(0);
}

// ---- the bench ----
type Mode = "psi" | "high" | "high-stuck" | "adaptive" | "adaptive-timer" | `poll-${number}`;

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}
const f = (ms: number) => (Number.isNaN(ms) ? "-" : `${ms.toFixed(1)} ms`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "8" },
      modes: { type: "string", default: "psi,high,high-stuck,poll-5,adaptive" },
      limit: { type: "string", default: "512" },
      line: { type: "string", default: "300" },
      cache: { type: "string", default: "96" },
      rate: { type: "string", default: "600" },
    },
  });
  if (!existsSync(join(MOUNT, "cgroup.controllers"))) throw new Error(`${MOUNT} is not a cgroup2 mount: run inside scripts/host/v2-guest.sh`);
  const runs = Number(values.runs);
  const line = Number(values.line) * MiB;
  const rate = Number(values.rate);
  writeFileSync(join(MOUNT, "cgroup.subtree_control"), "+memory");
  const dir = join(MOUNT, `bench-v2-signals-${process.pid}`);
  mkdirSync(dir);
  writeFileSync(join(dir, "memory.max"), String(Number(values.limit) * MiB));
  const inCgroup = (cmd: string[]) =>
    Bun.spawn(["sh", "-c", `echo $$ > ${dir}/cgroup.procs && exec "$@"`, "sh", ...cmd], { stdout: "pipe", stderr: "inherit" });
  const stat = () => {
    const s = readFileSync(join(dir, "memory.stat"), "utf8");
    const g = (k: string) => Number(new RegExp(`^${k} (\\d+)$`, "m").exec(s)?.[1] ?? 0);
    return { current: Number(readFileSync(join(dir, "memory.current"), "utf8")), inactive: g("inactive_file"), active: g("active_file"), anon: g("anon") };
  };
  // Page cache charged to the cgroup: a file written and read back from the overlay's upper tmpfs
  // would be shmem; a file on the read-only host root through hostfs is real page cache.
  const cacheFile = process.execPath;
  const cat = inCgroup(["sh", "-c", `head -c ${Number(values.cache) * MiB} ${cacheFile} > /dev/null`]);
  await cat.exited;
  const s0 = stat();
  console.log(
    `cgroup ${dir}: memory.max ${values.limit} MiB, line ${values.line} MiB working set, page cache read in: inactive_file ${(s0.inactive / MiB).toFixed(0)} MiB active_file ${(s0.active / MiB).toFixed(0)} MiB, ramp ${rate} MiB/s`,
  );

  const hub = createNotifierHub();
  const results = new Map<string, { lat: number[]; never: number; after: number[]; step: number[] }>();
  const add = (k: string) => results.get(k) ?? (results.set(k, { lat: [], never: 0, after: [], step: [] }), results.get(k)!);
  try {
    for (const mode of values.modes!.split(",") as Mode[]) {
      for (let r = 0; r < (mode === "high-stuck" ? Math.min(runs, 2) : runs); r++) {
        const seen = new Map<string, number>();
        const stops: Array<() => unknown> = [];
        const s = stat();
        if (mode === "psi") {
          const n = startPsiNotifier(hub, {
            path: join(dir, "memory.pressure"),
            trigger: "some 10000 500000",
            onEvent: (e) => seen.has("psi") || seen.set("psi", preciseNow(e.atMs)),
          });
          stops.push(() => n.stop());
        } else if (mode === "high" || mode === "high-stuck") {
          writeFileSync(join(dir, "memory.high"), String(line + s.inactive));
          // high-stuck: left armed until the hog is done, as if the agent had died or hung after arming.
          const disarm = () => mode === "high" && writeFileSync(join(dir, "memory.high"), "max");
          for (const file of ["memory.events", "memory.events.local"]) {
            const key = file === "memory.events" ? "high" : "high (events.local)";
            const w = watchMemoryEvents(hub, {
              path: join(dir, file),
              onEvent: (e) => {
                if (!e.delta.high || seen.has(`${mode}${key.slice(4)}`)) return;
                seen.set(`${mode}${key.slice(4)}`, nowMs());
                disarm();
              },
            });
            stops.push(() => w.stop());
          }
          stops.push(() => writeFileSync(join(dir, "memory.high"), "max"));
        } else {
          // poll-N: a fixed N ms (no headroom adaptation); adaptive: DEFAULT_WORKING_SET_POLL.
          const poll =
            mode === "adaptive"
              ? {}
              : mode === "adaptive-timer"
                ? { imminentHorizonMs: 0 }
                : { minIntervalMs: Number(mode.slice(5)), maxGrowthBytesPerSec: Number.POSITIVE_INFINITY, imminentHorizonMs: 0 };
          const w = startWorkingSetWatch({ poll, onCrossing: (c) => seen.has(mode) || seen.set(mode, c.atMs) });
          w.set([{ id: "bench", source: { cgroupDir: dir }, lineBytes: line }]);
          stops.push(() => w.stop());
          await Bun.sleep(50);
        }
        const h = inCgroup([
          process.execPath,
          import.meta.path,
          "--hog",
          dir,
          String(line),
          String(mode === "high-stuck" ? STUCK_OVER_MIB : OVER_MIB),
          String(rate),
        ]);
        const killer = setTimeout(() => h.kill("SIGKILL"), 30_000);
        const out = await new Response(h.stdout).text();
        await h.exited;
        clearTimeout(killer);
        for (const stop of stops) await stop();
        const m = /cross (\d+(?:\.\d+)?) after (\d+(?:\.\d+)?) step (\d+(?:\.\d+)?)/.exec(out);
        if (!m) {
          console.log(`${mode} run ${r + 1}: the hog did not report (${out.trim() || `killed after 30 s: stuck under memory.high`})`);
          continue;
        }
        const truth = Number(m[1]);
        const keys = mode.startsWith("high") ? [mode, `${mode} (events.local)`] : [mode];
        const parts: string[] = [];
        for (const k of keys) {
          const res = add(k);
          res.after.push(Number(m[2]));
          res.step.push(Number(m[3]));
          const t = seen.get(k);
          if (t === undefined) res.never++;
          else res.lat.push(t - truth);
          parts.push(`${k} ${t === undefined ? "never" : f(t - truth)}`);
        }
        console.log(
          `run ${r + 1}: ${parts.join(", ")}; hog: crossing → ${mode === "high-stuck" ? STUCK_OVER_MIB : OVER_MIB} MiB more ${m[2]} ms, 256 KiB step p50 ${m[3]} ms; inactive_file at start ${(s.inactive / MiB).toFixed(0)} MiB`,
        );
      }
    }
    // Idle CPU of the poll worker (no hog): this process's CPU time over 10 s with and without it.
    const cpu = async (poll: Parameters<typeof startWorkingSetWatch>[0]["poll"] | undefined) => {
      const w = poll ? startWorkingSetWatch({ poll, onCrossing: () => {} }) : undefined;
      w?.set([{ id: "idle", source: { cgroupDir: dir }, lineBytes: line }]);
      await Bun.sleep(200);
      const c0 = process.cpuUsage();
      await Bun.sleep(10_000);
      const c = process.cpuUsage(c0);
      await w?.stop();
      return `${(((c.user + c.system) / 1000 / 10_000) * 100).toFixed(2)} %`;
    };
    const st = stat();
    const headroom = (line - (st.current - st.inactive)) / MiB;
    console.log(
      `\nidle CPU of this process over 10 s (${headroom.toFixed(0)} MiB under the line): no watch ${await cpu(undefined)}, fixed 5 ms poll ${await cpu({ minIntervalMs: 5, maxGrowthBytesPerSec: Number.POSITIVE_INFINITY })}, adaptive ${await cpu({})} of one guest CPU`,
    );
    // Page cache under an armed memory.high: the kernel reclaims it to stay under, and each reclaim is an event.
    const before = stat();
    writeFileSync(join(dir, "memory.high"), String(before.current + 16 * MiB));
    let highs = 0;
    const w = watchMemoryEvents(hub, { path: join(dir, "memory.events"), onEvent: (e) => (highs += e.delta.high ?? 0) });
    const t0 = nowMs();
    // A file nothing has read yet in this guest (Debian's libLLVM, ~110 MiB): its pages are new page cache.
    const fresh = ["/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"].filter((p) => existsSync(p));
    await inCgroup(["sh", "-c", `head -c ${64 * MiB} ${fresh[0] ?? cacheFile} > /dev/null`]).exited;
    const took = nowMs() - t0;
    const after = stat();
    w.stop();
    writeFileSync(join(dir, "memory.high"), "max");
    const t1 = nowMs();
    await inCgroup(["sh", "-c", `head -c ${64 * MiB} ${fresh[1] ?? cacheFile} > /dev/null`]).exited;
    const tookFree = nowMs() - t1;
    console.log(
      `page cache with memory.high armed 16 MiB above usage, reading 64 MiB of a new file: file cache ${((before.inactive + before.active) / MiB).toFixed(0)} → ${((after.inactive + after.active) / MiB).toFixed(0)} MiB, ${highs} "high" events, read took ${took.toFixed(0)} ms (${tookFree.toFixed(0)} ms again with memory.high = max)`,
    );
  } finally {
    await hub.close();
    for (let i = 0; i < 50 && existsSync(dir); i++) {
      try {
        rmdirSync(dir);
      } catch {
        await Bun.sleep(100);
      }
    }
  }
  console.log(
    `\n| signal | runs | told after the crossing p50 | p99 | never told | hog: crossing → ${OVER_MIB} MiB more p50 | hog's 256 KiB step p50 (ground-truth resolution) |`,
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const [k, r] of results) {
    console.log(
      `| ${k} | ${r.lat.length + r.never} | ${f(pct(r.lat, 50))} | ${f(pct(r.lat, 99))} | ${r.never} | ${f(pct(r.after, 50))} | ${f(pct(r.step, 50))} |`,
    );
  }
}

const argv = process.argv.slice(2);
if (argv[0] === "--hog") await hog(argv[1]!, Number(argv[2]), Number(argv[3]), Number(argv[4]));
else await main();
