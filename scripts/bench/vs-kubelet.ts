// bunlet against the upstream kubelet, standalone (static pods only, no API server; figure 6 joined to a
// real control plane), on one private containerd (docs/benchmarks.md#against-the-kubelet):
//   bun scripts/bench/vs-kubelet.ts [--runs N] [--only FIGURE…] [--json FILE] [--window S] [--settle S]
//     [--idle-settle S] [--bunlet PATH] [--kubelet PATH] [--guest-pods N] [--guest-figures 1,2,5]
// The agents are dist/bunlet (built first if stale) and the kubelet of scripts/upstream/build.sh (built
// once, cached under /var/tmp). Every run is one agent on a fresh scratch node (lib/scratch-node.ts: its
// own directories, cgroup root and node name, the same standalone KubeletConfiguration for both), and
// only one agent runs at a time (each would kill the other's pods as orphans).
//   1. idle with 0 pods (after --idle-settle, default 130 s) and with 100 pods (after the burst of 2, then
//      --idle-settle): past each agent's own collection every 2 minutes (Go's forced GC, bunlet's idle
//      collection), so the heap is measured settled; CPU % of one core (utime+stime over --window, default 60 s), RSS and PSS
//      (smaps_rollup, window maxima), wake-ups/s (voluntary context switches of all threads);
//   2. 100 marker manifests dropped at once → first and last container running (lib/markers.ts: each
//      container touches its own file first), and the bare-CRI floor (the same pods by CRI calls, no
//      agent, 2, 4, 8 and 100 at a time): each agent's all-running time ÷ the best floor;
//   4. restart with the 100 pods running: agent stopped, started again → its /pods reports every
//      pod's container running with the same ID, and the CRI shows the same containers, none new;
//   3. one static pod, manifest → container running: --runs runs (default 20) per agent, alternately
//      kubelet and bunlet (ABBA order), each on a fresh node after --settle / 2 and one untimed pod;
//      after each pair, the floor: the same pod by bare CRI calls on a fresh node with no agent.
//   5. the memory ramp of reaction.ts (lib/memory-ramp.ts): crossing → victim got SIGTERM, p50 and p99 of
//      --runs runs, and the kernel OOM kills, for the kubelet with kernelMemcgNotification on, with it
//      off, and bunlet (notification on); each node joined to one real control plane, the ramp an API
//      pod (the kubelet never evicts a static pod: lib/ramp-figure.ts).
//   6. cluster mode (lib/cluster-figures.ts): each agent joined to a real control plane of its own (the
//      upstream kube-apiserver with its audit log, controller-manager and scheduler) through TLS
//      bootstrap: spawn → Node Ready (--runs runs per agent, default 3, ABBA, each a fresh control plane
//      and node); in the first run, API pods one at a time → Running, 110 at once → all Running, and
//      with them running the node's API requests per minute over --window (from the audit log).
//   7. figures 1, 2 and 5 inside the cgroup v2 guest with systemd as PID 1 (scripts/host/v2-guest.sh
//      --systemd; lib/guest-figures.ts runs vs-kubelet-guest.ts there): both agents with cgroupDriver
//      systemd, on one containerd in the guest, compared only with each other (UML: one CPU, slow
//      syscalls); --guest-pods pods (default GUEST_PODS) for figures 1 and 2, the ramp scaled to the guest
//      (lib/guest-ramp.ts); --guest-figures picks what one guest boot runs (each boot its own heavy-lock turn).
// Figures 1, 2 and 4 come from one run per agent (kubelet, then bunlet), then the floor, then figures 3,
// 5 and 6; --only 1 3 (or 1,3) picks figures, all by default. Prints one table (figure | kubelet | bunlet | ratio bunlet ÷ kubelet | goal |
// met) and with --json writes it with every sample. Cleans up pods (through the CRI), cgroups,
// directories and containerd on exit, failure and Ctrl-C.
import { spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { join } from "node:path";
import { BINARY, ensureBuilt } from "../../test/support/binary.ts";
import { acquireContainerd } from "../../test/support/containerd.ts";
import { buildUpstream } from "../../test/support/upstream/index.ts";
import { clusterFigures } from "./lib/cluster-figures.ts";
import { floorBurst, manifestBurst, measureIdle, onePodStart, restartReadoption } from "./lib/agent-figures.ts";
import { guestFigures } from "./lib/guest-figures.ts";
import { type GuestResult, guestErrors, guestRows } from "./lib/guest-table.ts";
import { directBurst } from "./lib/markers.ts";
import { rampFigure, rampSummary } from "./lib/ramp-figure.ts";
import { type AgentKind, createScratchNode, loadAverage, onInterrupt } from "./lib/scratch-node.ts";
import { type AgentResult, type Floor, bestFloor, formatTable, tableRows, writeJson } from "./lib/vs-table.ts";

const PODS = 100;
const FLOOR_CONCURRENCY = [2, 4, 8, 100];
/** Figure 7's guest: memory (the control plane of figure 5 and 100 pods' shims), its time limit, and its floor's concurrencies (0: all at once). */
const GUEST_MEMORY_MIB = 3072;
const GUEST_TIMEOUT_S = 3600;
const GUEST_FLOOR_CONCURRENCY = [4, 0];
/** Figure 7's pods of figures 1 and 2: 100 pods took over 10 min to start on the guest's one CPU. */
const GUEST_PODS = 20;
const CONTROL_PLANE = "kube-apiserver kube-controller-manager kube-scheduler kubectl";

/** The figures --only takes; all by default. */
const FIGURES = [1, 2, 3, 4, 5, 6, 7];

interface Options {
  /** Runs of figures 3 and 5 (default 20) and 6 (default 3). */
  runs?: number;
  figures: Set<number>;
  json?: string;
  windowS: number;
  settleS: number;
  idleSettleS: number;
  bunlet?: string;
  kubelet?: string;
  /** Figure 7: the pod count of figures 1 and 2 inside the guest (default GUEST_PODS). */
  guestPods: number;
  /** Figure 7: which figures to run in the guest (default 1, 2 and 5; one boot each call). */
  guestFigures: number[];
}

function parseOptions(argv: string[]): Options {
  const o: Options = { figures: new Set(FIGURES), windowS: 60, settleS: 10, idleSettleS: 130, guestPods: GUEST_PODS, guestFigures: [1, 2, 5] };
  const value = (i: number) => {
    const v = argv[i + 1];
    if (v === undefined) throw new Error(`${argv[i]} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--runs") o.runs = Number(value(i++));
    else if (a === "--window") o.windowS = Number(value(i++));
    else if (a === "--settle") o.settleS = Number(value(i++));
    else if (a === "--idle-settle") o.idleSettleS = Number(value(i++));
    else if (a === "--json") o.json = value(i++);
    else if (a === "--bunlet") o.bunlet = value(i++);
    else if (a === "--kubelet") o.kubelet = value(i++);
    else if (a === "--guest-pods") o.guestPods = Number(value(i++));
    else if (a === "--guest-figures") o.guestFigures = value(i++).split(",").map(Number);
    else if (a === "--only") {
      o.figures = new Set();
      while (/^\d+(,\d+)*$/.test(argv[i + 1] ?? "")) for (const f of argv[++i]!.split(",")) o.figures.add(Number(f));
      const unknown = [...o.figures].filter((f) => !FIGURES.includes(f));
      if (o.figures.size === 0 || unknown.length)
        throw new Error(`--only needs figures among ${FIGURES.join(", ")}${unknown.length ? ` (not ${unknown.join(", ")})` : ""}`);
    } else throw new Error(`unknown argument ${a}: see the header of scripts/bench/vs-kubelet.ts`);
  }
  if (
    !(o.runs === undefined || o.runs >= 1) ||
    !(o.windowS > 0) ||
    !(o.settleS >= 0) ||
    !(o.idleSettleS >= 0) ||
    !(o.guestPods >= 1) ||
    !o.guestFigures.every((f) => [1, 2, 5].includes(f))
  )
    throw new Error("--runs ≥ 1, --window > 0, --settle ≥ 0, --idle-settle ≥ 0, --guest-pods ≥ 1 and --guest-figures among 1, 2, 5");
  return o;
}

const say = (s: string) => console.error(`vs-kubelet: ${s}`);
const fail = (r: AgentResult, what: string, e: unknown) => {
  r.errors.push(`${what}: ${(e as Error).message}`);
  say(`${what} failed: ${(e as Error).message}`);
};

/** Figures 1, 2 and 4 of one agent, on one node: idle 0 pods, the burst, idle 100 pods, the restart. */
async function heavyRun(kind: AgentKind, binary: string, o: Options, r: AgentResult): Promise<void> {
  const sn = await createScratchNode(`vsk-${kind}`, { agent: kind, binary, build: false });
  try {
    const agent = await sn.startAgent();
    if (o.figures.has(1)) r.idle0 = await measureIdle(agent.pid, o.windowS, o.idleSettleS);
    say(`${kind}: idle with 0 pods ${JSON.stringify(r.idle0 ?? {})}`);
    const burst = await manifestBurst(sn, PODS);
    if (o.figures.has(2)) r.burst = burst;
    say(`${kind}: ${PODS} manifests at once ${JSON.stringify(burst)}`);
    if (o.figures.has(1)) r.idle100 = await measureIdle(sn.agent!.pid, o.windowS, o.idleSettleS);
    say(`${kind}: idle with ${PODS} pods ${JSON.stringify(r.idle100 ?? {})}`);
    if (o.figures.has(4)) r.restart = await restartReadoption(sn, PODS);
    say(`${kind}: restart ${JSON.stringify(r.restart ?? {})}`);
  } catch (e) {
    fail(r, `${kind}, figures 1, 2 and 4`, e);
  } finally {
    await sn.cleanup();
  }
}

/** The bare-CRI floor: the 100 marker pods by CRI calls, at each concurrency, each on a fresh node. */
async function floorRuns(errors: string[]): Promise<Floor> {
  const floor: Floor = {};
  for (const concurrency of FLOOR_CONCURRENCY) await floorBurst("vsk-floor", PODS, concurrency, { floor, errors, say });
  return floor;
}

/** Figure 3, one run: a fresh node, the agent, one untimed pod, then the timed one. */
async function podStartRun(kind: AgentKind, binary: string, o: Options, r: AgentResult, run: number): Promise<void> {
  const sn = await createScratchNode(`vsk-pod-${kind}`, { agent: kind, binary, build: false });
  try {
    await sn.startAgent();
    await Bun.sleep((o.settleS / 2) * 1000);
    await onePodStart(sn, "warmup");
    await Bun.sleep(1000);
    const ms = await onePodStart(sn, "timed");
    r.podStartMs.push(ms);
    say(`${kind}: one pod, run ${run + 1}: ${ms.toFixed(0)} ms`);
  } catch (e) {
    fail(r, `${kind}, figure 3, run ${run + 1}`, e);
  } finally {
    await sn.cleanup();
  }
}

/** Figure 3's floor, one run: a fresh node with no agent, one untimed pod by bare CRI calls, then the timed one. */
async function podStartFloorRun(o: Options, samples: number[], errors: string[], run: number): Promise<void> {
  const sn = await createScratchNode("vsk-pod-floor", { build: false });
  try {
    const one = (first: number) =>
      directBurst({
        cri: sn.ctd.cri,
        base: sn.base,
        cgroupRoot: sn.cgroupRoot,
        node: sn.node,
        pods: 1,
        concurrency: 1,
        first,
        markers: join(sn.base, `markers-${first}`),
      });
    await Bun.sleep((o.settleS / 2) * 1000);
    await one(0);
    await Bun.sleep(1000);
    const { firstMs } = await one(1);
    samples.push(firstMs);
    say(`bare CRI: one pod, run ${run + 1}: ${firstMs.toFixed(0)} ms`);
  } catch (e) {
    errors.push(`bare CRI, one pod, run ${run + 1}: ${(e as Error).message}`);
    say(errors.at(-1)!);
  } finally {
    await sn.cleanup();
  }
}

const o = parseOptions(process.argv.slice(2));
const bunletBin = o.bunlet ?? (await ensureBuilt());
const kubeletBin = o.kubelet ?? join(await buildUpstream("kubelet"), "kubelet");
const binaries: Record<AgentKind, string> = { bunlet: bunletBin, kubelet: kubeletBin };
const results: Record<AgentKind, AgentResult> = { kubelet: { podStartMs: [], errors: [] }, bunlet: { podStartMs: [], errors: [] } };
let floor: Floor = {};
const podStartFloorMs: number[] = [];
const floorErrors: string[] = [];
const loadBefore = loadAverage();
// One containerd for every node of the run: each node's release leaves it up while this reference holds
// (figure 7 runs its own inside the guest).
const ctd = [...o.figures].some((f) => f !== 7) ? await acquireContainerd() : undefined;
const releaseOnInterrupt = onInterrupt(async () => ctd?.release());
let guest: GuestResult | undefined;
try {
  if (o.figures.has(1) || o.figures.has(2) || o.figures.has(4))
    for (const kind of ["kubelet", "bunlet"] as const) await heavyRun(kind, binaries[kind], o, results[kind]);
  if (o.figures.has(2)) floor = await floorRuns(floorErrors);
  if (o.figures.has(3))
    for (let i = 0; i < (o.runs ?? 20); i++) {
      for (const kind of i % 2 === 0 ? (["kubelet", "bunlet"] as const) : (["bunlet", "kubelet"] as const))
        await podStartRun(kind, binaries[kind], o, results[kind], i);
      await podStartFloorRun(o, podStartFloorMs, floorErrors, i);
    }
  if (o.figures.has(5)) {
    const binDir = await buildUpstream(CONTROL_PLANE);
    const ramp = await rampFigure({ binDir, bunlet: bunletBin, kubelet: kubeletBin, runs: o.runs ?? 20, say });
    results.kubelet.ramp = ramp["kubelet-notify"];
    results.kubelet.rampPeriodic = ramp["kubelet-periodic"];
    results.bunlet.ramp = ramp.bunlet;
    results.kubelet.errors.push(...ramp["kubelet-notify"].errors, ...ramp["kubelet-periodic"].errors);
    results.bunlet.errors.push(...ramp.bunlet.errors);
  }
  if (o.figures.has(6))
    await clusterFigures(binaries, { runs: o.runs ?? 3, windowS: o.windowS, settleS: o.settleS }, results, {
      say,
      fail: (kind, what, e) => fail(results[kind], `${kind}, ${what}`, e),
    });
  if (o.figures.has(7))
    guest = await guestFigures({
      bunlet: bunletBin,
      kubelet: kubeletBin,
      pods: o.guestPods,
      windowS: o.windowS,
      settleS: o.settleS,
      runs: o.runs ?? 10,
      memoryMiB: GUEST_MEMORY_MIB,
      timeoutS: GUEST_TIMEOUT_S,
      figures: o.guestFigures,
      binDir: o.guestFigures.includes(5) ? await buildUpstream(CONTROL_PLANE) : undefined,
      floor: GUEST_FLOOR_CONCURRENCY,
      out: `/tmp/bunlet-vsk-guest-${process.pid}`,
    }).catch((e: Error) => {
      floorErrors.push(`figure 7: ${e.message}`);
      return undefined;
    });
} finally {
  releaseOnInterrupt();
  await ctd?.release();
}

const rows = [...tableRows(results.kubelet, results.bunlet, floor, podStartFloorMs), ...(guest ? guestRows(guest) : [])];
console.log(formatTable(rows));
const best = bestFloor(floor);
if (best)
  console.log(
    `bare-CRI floor, all ${PODS} running: ${Object.entries(floor)
      .map(([c, f]) => `${c} at a time ${(f.allMs / 1000).toFixed(2)} s`)
      .join(", ")}; best ${(best.allMs / 1000).toFixed(2)} s`,
  );
for (const kind of ["kubelet", "bunlet"] as const) {
  const rs = results[kind].restart;
  if (rs)
    console.log(`${kind} restart: containers ${rs.containersBefore} before, ${rs.containersAfter} after, ${rs.sameContainers ? "the same" : "NOT the same"}`);
}
if (results.bunlet.ramp)
  for (const line of rampSummary({ "kubelet-notify": results.kubelet.ramp, "kubelet-periodic": results.kubelet.rampPeriodic, bunlet: results.bunlet.ramp }))
    console.log(line);
const kubeletVersion = spawnSync(kubeletBin, ["--version"], { encoding: "utf8" }).stdout.trim();
const context = {
  date: new Date().toISOString(),
  bunlet: bunletBin === BINARY ? "dist/bunlet" : bunletBin,
  kubelet: `${kubeletBin} (${kubeletVersion})`,
  bun: Bun.version,
  cpus: cpus().length,
  loadBefore,
  loadAfter: loadAverage(),
  options: { ...o, figures: [...o.figures] },
};
console.log(`${context.bunlet} vs ${context.kubelet}; Bun ${context.bun}; ${context.cpus} CPUs; load ${loadBefore} before, ${context.loadAfter} after`);
if (o.json) writeJson(o.json, { rows, kubelet: results.kubelet, bunlet: results.bunlet, floor, podStartFloorMs, floorErrors, guest, context });
const errors = [...results.kubelet.errors, ...results.bunlet.errors, ...floorErrors, ...(guest ? guestErrors(guest) : [])];
for (const e of errors) console.log(`error: ${e}`);
if (errors.length) process.exit(1);
