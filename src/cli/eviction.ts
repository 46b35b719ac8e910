// `bunlet eviction simulate|explain`: run the real eviction manager over recorded or live stats.
// Own flags (--pods, repeatable --summary, …) are split off here; every other argument is a kubelet
// flag read by loadKubeletConfig, so thresholds come out exactly as the agent would build them.
// The work is in src/eviction/simulate.ts and explain.ts. Exit code 1 and one clear line on stderr on bad input.
import { defineCommand } from "citty";
import { clearCommand } from "./eviction-clear.ts";
import { readFile } from "node:fs/promises";
import { ConfigError } from "../config/errors.ts";
import { loadKubeletConfig } from "./load-config.ts";
import { completePods, parsePodsText, PodsFileError } from "../eviction/pods-file.ts";
import { evictionConfigFromKubelet, type EvictionKubeletFields, type EvictionSources } from "../eviction/settings.ts";
import { explain, renderExplain, type ExplainReport } from "../eviction/explain.ts";
import { simulate, type SimulateOutput } from "../eviction/simulate.ts";
import { ThresholdParseError } from "../eviction/thresholds-parse.ts";
import { formatAmount } from "../eviction/message.ts";
import { signalIsCount, type Signal } from "../eviction/signals.ts";
import type { EvictionConfig, Logger } from "../eviction/types.ts";
import { parseSummaryText, SummaryParseError } from "../stats/summary-schema.ts";
import type { Summary } from "../stats/summary.ts";

export interface CliIO {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

const processIO: CliIO = {
  stdout: (s) => void process.stdout.write(s),
  stderr: (s) => void process.stderr.write(s),
};

export class CliUsageError extends Error {
  override name = "CliUsageError";
}

type Kind = "string" | "repeat" | "bool";

const OWN_FLAGS: Record<string, Kind> = { output: "string", quiet: "bool" };

/**
 * Splits argv into this command's own flags and everything else, which is kubelet flags for
 * loadKubeletConfig (--config, --eviction-*, --evict-static-pods, any other kubelet flag).
 */
export function splitArgs(argv: readonly string[], own: Record<string, Kind>): { own: Map<string, string[]>; kubelet: string[] } {
  const out = new Map<string, string[]>();
  const kubelet: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([^=]+)(?:=(.*))?$/s.exec(arg);
    const name = m?.[1]?.replaceAll("_", "-");
    const kind = name ? own[name] : undefined;
    if (!m || !name || !kind) {
      kubelet.push(arg);
      continue;
    }
    let value: string;
    if (m[2] !== undefined) value = m[2];
    else if (kind === "bool") value = "true";
    else if (i + 1 < argv.length) value = argv[++i]!;
    else throw new CliUsageError(`flag needs an argument: --${name}`);
    if (kind === "bool" && value !== "true" && value !== "false")
      throw new CliUsageError(`invalid argument ${JSON.stringify(value)} for "--${name}" flag: want true or false`);
    const list = kind === "repeat" ? (out.get(name) ?? []) : [];
    list.push(value);
    out.set(name, list);
  }
  return { own: out, kubelet };
}

const one = (args: Map<string, string[]>, name: string) => args.get(name)?.[0];

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    throw new CliUsageError(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/**
 * Eviction settings from kubelet flags exactly as the agent builds them (loadKubeletConfig:
 * defaults < --config file < --config-dir < flags, thresholds validated). `base` supplies a
 * running agent's /configz when no kubelet flags are given.
 */
export async function evictionConfigFromArgs(kubeletArgs: readonly string[], io: CliIO, quiet: boolean, base?: EvictionKubeletFields): Promise<EvictionConfig> {
  if (base && kubeletArgs.length === 0) return evictionConfigFromKubelet(base);
  const loaded = await loadKubeletConfig(kubeletArgs);
  if (!quiet) for (const w of loaded.warnings) io.stderr(`W ${w}\n`);
  const label = (field: string) => loaded.sources[field] ?? field;
  const sources: EvictionSources = {
    hardSource: label("evictionHard"),
    softSource: label("evictionSoft"),
    gracePeriodSource: label("evictionSoftGracePeriod"),
    minReclaimSource: label("evictionMinimumReclaim"),
    transitionSource: label("evictionPressureTransitionPeriod"),
  };
  return evictionConfigFromKubelet(loaded.config as EvictionKubeletFields, sources);
}

function cliLogger(io: CliIO, quiet: boolean): Logger {
  const w = (level: string) => (msg: string) => {
    if (!quiet) io.stderr(`${level} ${msg}\n`);
  };
  return { info: w("I"), warn: w("W"), error: w("E"), debug: () => {} };
}

async function loadSummary(path: string): Promise<Summary> {
  return parseSummaryText(await readText(path, "summary"), path);
}

function renderSimulateText(out: SimulateOutput): string {
  const amount = (signal: string, v: { quantity?: number; percentage?: number }) =>
    v.percentage !== undefined ? `${+(v.percentage * 100).toPrecision(6)}%` : formatAmount(v.quantity!, signalIsCount(signal as Signal));
  const lines: string[] = ["thresholds:"];
  for (const t of out.thresholds) {
    const mr = t.minReclaim ? ` minReclaim=${amount(t.signal, t.minReclaim)}` : "";
    lines.push(`  ${t.signal} < ${amount(t.signal, t.value)} ${t.gracePeriodSeconds === 0 ? "hard" : `soft grace=${t.gracePeriodSeconds}s`}${mr}`);
  }
  out.steps.forEach((s, i) => {
    lines.push(`step ${i + 1} at ${s.time} (${s.source})`);
    for (const [sig, o] of Object.entries(s.observations)) {
      const count = signalIsCount(sig as Signal);
      lines.push(`  observed ${sig} available=${formatAmount(o.available, count)} capacity=${formatAmount(o.capacity, count)}`);
    }
    lines.push(`  met: ${s.thresholdsMet.join(", ") || "none"}`);
    lines.push(`  conditions: ${s.nodeConditions.join(", ") || "none"}`);
    lines.push(`  reclaim: ${s.reclaim ? `${s.reclaim.signal} (${s.reclaim.resource})` : "none"}`);
    if (s.ranked.length) lines.push(`  ranked: ${s.ranked.join(", ")}`);
    for (const e of [s.evicted, ...(s.alsoEvicted ?? [])]) {
      if (e) lines.push(`  evicted: ${e.pod} grace=${e.gracePeriodSeconds}s: ${e.message.trim()}`);
    }
    if (!s.evicted) lines.push(`  evicted: none${s.note ? ` (${s.note})` : ""}`);
    for (const [pod, a] of Object.entries(s.admission)) lines.push(`  admit ${pod}: ${a.admit ? "yes" : `no (${a.reason}: ${a.message?.trim()})`}`);
  });
  return lines.join("\n");
}

/** Runs `eviction simulate` with the given argv; returns the exit code. */
export async function runSimulate(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  try {
    const { own: args, kubelet } = splitArgs(argv, { ...OWN_FLAGS, pods: "string", summary: "repeat", admit: "string" });
    const quiet = one(args, "quiet") === "true";
    const output = one(args, "output") ?? "json";
    if (output !== "json" && output !== "text") throw new CliUsageError(`--output must be json or text, not ${JSON.stringify(output)}`);
    const podsPath = one(args, "pods");
    const summaryPaths = args.get("summary") ?? [];
    if (!podsPath) throw new CliUsageError("--pods PODS.json is required");
    if (summaryPaths.length === 0) throw new CliUsageError("at least one --summary S.json is required");
    const config = await evictionConfigFromArgs(kubelet, io, quiet);
    const steps = [];
    for (const p of summaryPaths) steps.push({ source: p, summary: await loadSummary(p) });
    const pods = completePods(parsePodsText(await readText(podsPath, "pods file"), podsPath), steps[0]!.summary);
    const admitPath = one(args, "admit");
    const candidates = admitPath ? completePods(parsePodsText(await readText(admitPath, "candidates file"), admitPath), undefined) : [];
    const logger = cliLogger(io, quiet);
    const out = await simulate({ config, pods, steps, candidates, logger });
    io.stdout(output === "json" ? `${JSON.stringify(out, null, 2)}\n` : `${renderSimulateText(out)}\n`);
    return 0;
  } catch (e) {
    return reportError(e, io);
  }
}

function reportError(e: unknown, io: CliIO): number {
  const known = [CliUsageError, ConfigError, ThresholdParseError, SummaryParseError, PodsFileError];
  if (known.some((k) => e instanceof k)) {
    io.stderr(`error: ${(e as Error).message}\n`);
    return 1;
  }
  io.stderr(`error: ${(e as Error)?.message ?? String(e)}\n`);
  return 1;
}

async function fetchJson(url: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  } catch (e) {
    throw new CliUsageError(`cannot reach ${url}: ${(e as Error).message} (is bunlet running? use --server or --pods/--summary files)`);
  }
  if (!res.ok) throw new CliUsageError(`${url}: HTTP ${res.status}`);
  return res.text();
}

async function liveReport(server: string): Promise<ExplainReport | undefined> {
  try {
    const res = await fetch(`${server}/debug/eviction`, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) return undefined;
    const x = (await res.json()) as ExplainReport;
    return x && x.mode === "live" && Array.isArray(x.thresholds) ? x : undefined;
  } catch {
    return undefined;
  }
}

/** Eviction settings of the running agent from /configz, when no flags or --config say otherwise. */
async function configzFields(server: string): Promise<EvictionKubeletFields | undefined> {
  try {
    const doc = JSON.parse(await fetchJson(`${server}/configz`)) as { kubeletconfig?: EvictionKubeletFields };
    return doc.kubeletconfig;
  } catch {
    return undefined;
  }
}

/** Runs `eviction explain`; returns the exit code. */
export async function runExplain(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  try {
    const { own: args, kubelet } = splitArgs(argv, { ...OWN_FLAGS, server: "string", pods: "string", summary: "string" });
    const output = one(args, "output") ?? "text";
    if (output !== "json" && output !== "text") throw new CliUsageError(`--output must be json or text, not ${JSON.stringify(output)}`);
    const server = (one(args, "server") ?? "http://127.0.0.1:10250").replace(/\/+$/, "");
    const summaryPath = one(args, "summary");
    const podsPath = one(args, "pods");
    // A running agent that serves its manager's live state (real grace clocks, kills in flight)
    // answers /debug/eviction; otherwise one cycle is computed here from /pods and /stats/summary.
    if (!summaryPath && !podsPath && kubelet.length === 0) {
      const live = await liveReport(server);
      if (live) {
        io.stdout(output === "json" ? `${JSON.stringify(live, null, 2)}\n` : `${renderExplain(live)}\n`);
        return 0;
      }
    }
    const summary = summaryPath ? await loadSummary(summaryPath) : parseSummaryText(await fetchJson(`${server}/stats/summary`), `${server}/stats/summary`);
    const podsText = podsPath ? await readText(podsPath, "pods file") : await fetchJson(`${server}/pods`);
    const pods = completePods(parsePodsText(podsText, podsPath ?? `${server}/pods`), summary);
    const usesFiles = summaryPath !== undefined && podsPath !== undefined;
    const base = usesFiles || kubelet.length > 0 ? undefined : await configzFields(server);
    const config = await evictionConfigFromArgs(kubelet, io, true, base);
    const report = await explain({ config, pods, summary, logger: cliLogger(io, true) });
    io.stdout(output === "json" ? `${JSON.stringify(report, null, 2)}\n` : `${renderExplain(report)}\n`);
    return 0;
  } catch (e) {
    return reportError(e, io);
  }
}

const evictionFlagHelp = {
  config: { type: "string", description: "KubeletConfiguration file; any other kubelet flag is accepted too (read as the agent reads them)" },
  "eviction-hard": { type: "string", description: "e.g. memory.available<100Mi,nodefs.available<10% (replaces the defaults)" },
  "eviction-soft": { type: "string", description: "e.g. memory.available<1.5Gi" },
  "eviction-soft-grace-period": { type: "string", description: "e.g. memory.available=1m30s" },
  "eviction-minimum-reclaim": { type: "string", description: "e.g. memory.available=500Mi" },
  "eviction-pressure-transition-period": { type: "string", description: "default 5m0s" },
  "eviction-max-pod-grace-period": { type: "string", description: "seconds, default 0" },
  "enforce-node-allocatable": { type: "string", description: "default pods (hard memory thresholds also apply to allocatable)" },
  "evict-static-pods": { type: "boolean", description: "bunlet: rank and evict static pods like other pods" },
  "local-storage-capacity-isolation": { type: "boolean", description: "ephemeral-storage limit evictions (default true)" },
  output: { type: "string", description: "json or text" },
  quiet: { type: "boolean", description: "no decision log on stderr" },
} as const;

const simulateCommand = defineCommand({
  meta: { name: "simulate", description: "Run the eviction manager over recorded Summary documents, one synchronize per file" },
  args: {
    pods: { type: "string", description: "v1 PodList or JSON array of Pods: the active pods" },
    summary: { type: "string", description: "Summary API document; repeat for one cycle per file (time = node.memory.time)" },
    admit: { type: "string", description: "pods to ask the admission handler about after each step" },
    ...evictionFlagHelp,
  },
  async run({ rawArgs }) {
    process.exitCode = await runSimulate(rawArgs);
  },
});

const explainCommand = defineCommand({
  meta: { name: "explain", description: "Explain the eviction manager's view of the live node: observations, thresholds, ranking, next victim" },
  args: {
    server: { type: "string", description: "bunlet read-only endpoint (default http://127.0.0.1:10250)" },
    pods: { type: "string", description: "pods file instead of the agent's /pods" },
    summary: { type: "string", description: "Summary file instead of the agent's /stats/summary" },
    ...evictionFlagHelp,
  },
  async run({ rawArgs }) {
    process.exitCode = await runExplain(rawArgs);
  },
});

export default defineCommand({
  meta: { name: "eviction", description: "Node-pressure eviction: simulate over recorded stats, explain the live node, clear evicted static pods" },
  subCommands: { simulate: simulateCommand, explain: explainCommand, clear: clearCommand },
});
