// CPU cost of the working-set thread's imminent-crossing episodes (working-set-worker.ts), natively:
// a stand-in cgroup (regular memory.current / memory.stat files) whose usage the main thread moves
// every 10 ms; the process's CPU over DURATION_MS is compared across the watch's settings.
//   bun scripts/bench/imminent-cost.ts [--pattern idle|atline|hover|ramp] [--ms 5000] [--compare episodes|interval]
// idle:  usage flat 100 MiB under the line (no episode ever starts: the adaptive timer only);
// atline: usage flat 1 MiB under the line (the timer at its shortest, minIntervalMs, all the time);
// hover: usage climbs 1 MiB per 10 ms from 50 MiB under the line to 1 MiB under it and drops back,
//        over and over (the worst case: an episode at every approach, never a crossing, so the
//        per-second budget is what bounds it);
// ramp:  as hover, but the approach is 0.1 MiB per 10 ms (a slow grower: the projection is far).
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startWorkingSetWatch } from "../../src/kernel/working-set-watch.ts";

const MiB = 2 ** 20;
const LINE = 700 * MiB;
const { values } = parseArgs({
  options: { pattern: { type: "string", default: "hover" }, ms: { type: "string", default: "5000" }, compare: { type: "string", default: "episodes" } },
});
const DURATION_MS = Number(values.ms);

function files(d: string) {
  const n = (b: number) => String(Math.round(b)).padStart(16, "0");
  // Rewritten in place, one write of the same length (as the unit tests do): a truncating write lets a
  // read see an empty file, usage 0, and the next read a jump of hundreds of MiB.
  const put = (f: string, t: string) => {
    const fd = openSync(join(d, f), existsSync(join(d, f)) ? "r+" : "w");
    writeSync(fd, t, 0);
    closeSync(fd);
  };
  return (usage: number) => {
    put("memory.stat", `anon ${n(usage)}\nfile ${n(0)}\ninactive_file ${n(0)}\n`);
    put("memory.current", `${n(usage)}\n`);
  };
}

async function measure(label: string, poll: Record<string, unknown>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "imminent-cost-"));
  const set = files(dir);
  let usage = LINE - (values.pattern === "atline" ? 1 : 100) * MiB;
  set(usage);
  let crossings = 0;
  const w = startWorkingSetWatch({ poll, onCrossing: () => crossings++ });
  w.set([{ id: "pods", source: { cgroupDir: dir }, lineBytes: LINE }]);
  await Bun.sleep(300);
  const step = values.pattern === "ramp" ? 0.1 * MiB : MiB;
  const t = setInterval(() => {
    if (values.pattern === "idle" || values.pattern === "atline") return;
    usage += step;
    if (usage > LINE - MiB) usage = LINE - 50 * MiB;
    set(usage);
  }, 10);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Bun.sleep(DURATION_MS);
  const c1 = process.cpuUsage(c0);
  const wall = performance.now() - t0;
  clearInterval(t);
  await w.stop();
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `${values.pattern} ${label.padEnd(28)} CPU ${(((c1.user + c1.system) / 1000 / wall) * 100).toFixed(2)} % of a core over ${(wall / 1000).toFixed(1)} s (crossings ${crossings})`,
  );
}

if (values.compare === "interval") {
  // The interval at the line: what a shorter minIntervalMs costs while the node sits at its line.
  for (const ms of [5, 2, 1]) await measure(`min interval ${ms} ms`, { minIntervalMs: ms });
} else {
  await measure("no episodes (horizon 0)", { imminentHorizonMs: 0 });
  await measure("episodes, spin (sched_yield)", { imminentWait: "spin" });
  await measure("episodes, 1 ms sleeps", { imminentWait: "sleep" });
}
