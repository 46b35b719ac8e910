// vs-kubelet.ts's result: its figures per agent, turned into one table — figure | kubelet | bunlet |
// ratio (bunlet ÷ kubelet) | goal | met — printed and written as JSON.
import { writeFileSync } from "node:fs";
import type { Burst, Floor, IdleFigures, Readoption } from "./agent-figures.ts";

export type { Floor };
import { CLUSTER_PODS, type ClusterFigures } from "./cluster-figures.ts";
import type { RampSeries } from "./ramp-figure.ts";
import { percentile } from "./scratch-node.ts";

/** What one agent's runs gave; a figure not measured (or failed) is absent. */
export interface AgentResult {
  idle0?: IdleFigures;
  idle100?: IdleFigures;
  burst?: Burst;
  restart?: Readoption;
  /** Figure 3, one sample a run. */
  podStartMs: number[];
  /** Figure 5: the memory ramp, kernel notification on (bunlet's default). */
  ramp?: RampSeries;
  /** Figure 5, the kubelet with kernelMemcgNotification off (its 10 s loop alone). */
  rampPeriodic?: RampSeries;
  /** Figure 6, cluster mode. */
  cluster?: ClusterFigures;
  errors: string[];
}

export interface Row {
  figure: string;
  unit: string;
  kubelet?: number;
  bunlet?: number;
  /** bunlet ÷ kubelet. */
  ratio?: number;
  goal: string;
  met?: boolean;
}

type Goal = { kind: "ratio"; max: number } | { kind: "bunlet"; max: number; unit: string } | { kind: "none" };

const ratioText = (x: number) => (x < 0.1 ? x.toPrecision(2) : x.toFixed(2));

function row(figure: string, unit: string, k: number | undefined, b: number | undefined, goal: Goal): Row {
  const ratio = k !== undefined && b !== undefined && k > 0 ? b / k : undefined;
  const r: Row = { figure, unit, kubelet: k, bunlet: b, ratio, goal: "—" };
  if (goal.kind === "ratio") {
    r.goal = `≤ ${ratioText(goal.max)}×`;
    r.met = ratio !== undefined && ratio <= goal.max;
  } else if (goal.kind === "bunlet") {
    r.goal = `bunlet ≤ ${goal.max} ${goal.unit}`;
    r.met = b !== undefined && b <= goal.max;
  }
  return r;
}

function idleRows(pods: number, k: IdleFigures | undefined, b: IdleFigures | undefined, rssGoal: number): Row[] {
  const at = `1. idle, ${pods} pods`;
  return [
    row(`${at}: CPU`, "% of a core", k?.cpuPct, b?.cpuPct, { kind: "ratio", max: 0.5 }),
    row(`${at}: RSS`, "MB", k?.rssMb, b?.rssMb, { kind: "ratio", max: rssGoal }),
    row(`${at}: PSS`, "MB", k?.pssMb, b?.pssMb, { kind: "none" }),
    row(`${at}: wake-ups`, "/s", k?.wakeupsPerS, b?.wakeupsPerS, { kind: "none" }),
  ];
}

const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
const median = (xs: number[] | undefined) => (xs?.length ? percentile(xs, 50) : undefined);
const p90 = (xs: number[] | undefined) => (xs?.length ? percentile(xs, 90) : undefined);

function clusterRows(k: ClusterFigures | undefined, b: ClusterFigures | undefined): Row[] {
  return [
    row("6. cluster: start → Node Ready (TLS bootstrap), median", "s", seconds(median(k?.readyMs)), seconds(median(b?.readyMs)), { kind: "ratio", max: 1.0 }),
    row("6. cluster: API pod created → Running, median", "ms", median(k?.podRunningMs), median(b?.podRunningMs), { kind: "ratio", max: 0.7 }),
    row("6. cluster: API pod created → Running, p90", "ms", p90(k?.podRunningMs), p90(b?.podRunningMs), { kind: "none" }),
    row(`6. cluster: ${CLUSTER_PODS} API pods at once → all Running`, "s", seconds(k?.allRunningMs), seconds(b?.allRunningMs), { kind: "none" }),
    row(`6. cluster: node's API requests, ${CLUSTER_PODS} pods, steady`, "/min", k?.requests?.perMin, b?.requests?.perMin, { kind: "ratio", max: 1.0 }),
  ];
}

/** The best (lowest) all-running time of the floor, with its concurrency. */
export function bestFloor(floor: Floor): { concurrency: number; allMs: number } | undefined {
  const all = Object.entries(floor).map(([c, f]) => ({ concurrency: Number(c), allMs: f.allMs }));
  return all.length ? all.reduce((a, b) => (b.allMs < a.allMs ? b : a)) : undefined;
}

/** Figure 3 against its bare-CRI floor (the same pod by CRI calls, no agent): the floor's median, and each agent's median over it. */
function podStartFloorRows(k: number[], b: number[], floorMs: number[]): Row[] {
  if (!floorMs.length) return [];
  const f = percentile(floorMs, 50);
  const over = (xs: number[]) => (xs.length ? percentile(xs, 50) - f : undefined);
  const floorRow = row("3. one pod by bare CRI calls (the floor), median", "ms", f, f, { kind: "none" });
  floorRow.ratio = undefined;
  return [floorRow, row("3. one static pod: median over the floor", "ms", over(k), over(b), { kind: "none" })];
}

/** The rows of what was measured; `pods` is the count of figures 1 and 2 (100 on the host). */
export function tableRows(k: AgentResult, b: AgentResult, floor: Floor, podStartFloorMs: number[] = [], pods = 100): Row[] {
  const best = bestFloor(floor)?.allMs;
  const perFloor = (ms: number | undefined) => (ms === undefined || best === undefined ? undefined : ms / best);
  const restart = row("4. restart, 100 pods: start → all re-adopted", "s", seconds(k.restart?.ms), seconds(b.restart?.ms), { kind: "ratio", max: 0.5 });
  if (restart.met && !b.restart?.sameContainers) restart.met = false;
  return [
    ...idleRows(0, k.idle0, b.idle0, 1.0),
    ...idleRows(pods, k.idle100, b.idle100, 0.8),
    row(`2. ${pods} manifests at once: first running`, "s", seconds(k.burst?.firstMs), seconds(b.burst?.firstMs), { kind: "bunlet", max: 1, unit: "s" }),
    row(`2. ${pods} manifests at once: all running`, "s", seconds(k.burst?.allMs), seconds(b.burst?.allMs), { kind: "ratio", max: 0.8 }),
    row("2. the agent's own CPU time meanwhile", "s", seconds(k.burst?.agentCpuMs), seconds(b.burst?.agentCpuMs), { kind: "none" }),
    row("2. all running ÷ best bare-CRI floor", "×", perFloor(k.burst?.allMs), perFloor(b.burst?.allMs), { kind: "bunlet", max: 1.15, unit: "×" }),
    row("3. one static pod: manifest → running, median", "ms", median(k.podStartMs), median(b.podStartMs), { kind: "ratio", max: 0.5 }),
    row("3. one static pod: manifest → running, p90", "ms", p90(k.podStartMs), p90(b.podStartMs), { kind: "none" }),
    ...podStartFloorRows(k.podStartMs, b.podStartMs, podStartFloorMs),
    restart,
    ...rampRows(k, b),
    ...clusterRows(k.cluster, b.cluster),
  ].filter((r) => r.kubelet !== undefined || r.bunlet !== undefined);
}

/** Figure 5's samples: crossing → victim got SIGTERM (runs where it did), kernel OOM kills, runs. */
function rampFigures(s: RampSeries | undefined) {
  if (!s) return undefined;
  const got = s.runs.flatMap((r) => (r.receivedMs === undefined ? [] : [r.receivedMs]));
  const pct = (p: number) => (got.length ? percentile(got, p) : undefined);
  return { p50: pct(50), p99: pct(99), oomKills: s.runs.reduce((n, r) => n + r.oomKills, 0), signalled: got.length };
}

/** Figure 5 against the kubelet with notification on (the goal: bunlet's p99 ≤ 0.01×, no OOM kill), then off. */
function rampRows(k: AgentResult, b: AgentResult): Row[] {
  const bn = rampFigures(b.ramp);
  const rows: Row[] = [];
  for (const [what, ks, goal] of [
    ["kubelet notification on", k.ramp, 0.01],
    ["kubelet notification off", k.rampPeriodic, undefined],
  ] as const) {
    const kn = rampFigures(ks);
    if (!kn && !bn) continue;
    const at = `5. memory ramp (${what}): crossing → SIGTERM`;
    const p99 = row(`${at}, p99`, "ms", kn?.p99, bn?.p99, goal === undefined ? { kind: "none" } : { kind: "ratio", max: goal });
    if (p99.met && bn?.oomKills !== 0) p99.met = false;
    rows.push(
      row(`${at}, p50`, "ms", kn?.p50, bn?.p50, { kind: "none" }),
      p99,
      row(`5. memory ramp (${what}): kernel OOM kills`, "kills", kn?.oomKills, bn?.oomKills, { kind: "bunlet", max: 0, unit: "kills" }),
      row(`5. memory ramp (${what}): runs with SIGTERM`, "runs", kn?.signalled, bn?.signalled, { kind: "none" }),
    );
  }
  return rows;
}

const fmt = (x: number | undefined, unit: string): string => {
  if (x === undefined || Number.isNaN(x)) return "—";
  const digits = unit === "ms" ? (x < 10 ? 1 : 0) : unit === "MB" || unit === "/s" || unit === "/min" ? 1 : unit === "kills" || unit === "runs" ? 0 : 2;
  return `${x.toFixed(digits)} ${unit}`;
};

/** The table as Markdown, one line a row. */
export function formatTable(rows: Row[]): string {
  const cells = [
    ["figure", "kubelet", "bunlet", "ratio", "goal", "met"],
    ...rows.map((r) => [
      r.figure,
      fmt(r.kubelet, r.unit),
      fmt(r.bunlet, r.unit),
      r.ratio === undefined ? "—" : `${ratioText(r.ratio)}×`,
      r.goal,
      r.met === undefined ? "—" : r.met ? "yes" : "no",
    ]),
  ];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join(" | ")} |`;
  return [
    line(cells[0]!),
    `|${widths.map((w, i) => (i === 0 ? `${"-".repeat(w + 1)}-` : `${"-".repeat(w + 1)}:`)).join("|")}|`,
    ...cells.slice(1).map(line),
  ].join("\n");
}

export function writeJson(
  path: string,
  doc: {
    rows: Row[];
    kubelet: AgentResult;
    bunlet: AgentResult;
    floor: Floor;
    podStartFloorMs: number[];
    floorErrors: string[];
    /** Figure 7, as the guest reported it. */
    guest?: unknown;
    context: Record<string, unknown>;
  },
): void {
  writeFileSync(path, `${JSON.stringify(doc, null, 2)}\n`);
}
