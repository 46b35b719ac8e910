// Chaos scenario harness: runs the compiled dist/bunlet on a private containerd with static pods in a
// throw-away node (temp root dir, manifests dir, trace file, cgroupRoot /bunlet-chaos-<pid>-<n> with a
// memory limit), lets a scenario drive and watch it (/pods, /debug/eviction, --eviction-trace, logs,
// cgroup files), records named checks, and ALWAYS tears everything down: bunlet, the node's pods
// (through the CRI), cgroups, mounts, temp dirs — on success, failure, timeout and Ctrl-C.
//
//   const result = await runScenario(besteffortHog);     // from a test
//   await cli(besteffortHog);                            // from scripts/chaos/<name>.ts
//
// Memory is fenced twice so the 24 GB host is never exhausted: node allocatable (systemReserved =
// MemTotal − allocatable) makes bunlet write that limit on <cgroupRoot>/kubepods, and the harness
// itself caps <cgroupRoot> a little above it before bunlet starts.
import { canRunContainerd } from "../../test/support/containerd.ts";
import { chaosTimeScale, createHarness, type Check, type Harness } from "./lib/harness.ts";
import { formatTraceRecord, type TraceRecord } from "./lib/pods.ts";

export * from "./lib/host.ts";
export * from "./lib/pods.ts";
export * from "./lib/harness.ts";

export interface RunOptions {
  /** Whole-scenario bound (setup + run + verify; cleanup comes after). Default 60 s × chaosTimeScale(). */
  timeoutMs?: number;
  /** Print progress lines as they happen (CLI). */
  verbose?: boolean;
  /** Start the agent with this command instead of dist/bunlet (createHarness). */
  agentCommand?: readonly string[];
}

export interface ScenarioResult {
  name: string;
  pass: boolean;
  checks: Check[];
  trace: TraceRecord[];
  durationMs: number;
  error?: string;
  /** bunlet's stderr (all runs), for a failing scenario's report. */
  logs: string;
  cleanupProblems: string[];
  /** How the scenario ran, for the reader (e.g. no kernel notifier on this host). */
  notes: string[];
  /** Not run, and why (Scenario.unavailable). */
  skipped?: string;
}

export interface Scenario {
  name: string;
  description: string;
  /** Its bound when the caller gives none (default 60 s); × chaosTimeScale(). */
  timeoutMs?: number;
  /** Why it cannot run on this host (e.g. the upstream binaries not built), or undefined: it is skipped, saying so. */
  unavailable?(): string | undefined;
  run(h: Harness): Promise<void>;
}

let active: Harness | undefined;

/** A harness outside runScenario (benchmarks): the caller runs `cleanupActive()` in a finally. */
export function openHarness(name: string, verbose = true): Harness {
  const h = createHarness(name, verbose);
  active = h;
  return h;
}

/** Ctrl-C / SIGTERM → clean up the active harness, then exit 130. */
export function cleanupOnSignals(): void {
  let interrupted = false;
  const onSignal = (sig: string) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    console.log(`\n${sig}: cleaning up…`);
    void cleanupActive().then((problems) => {
      for (const p of problems) console.log(`cleanup problem: ${p}`);
      process.exit(130);
    });
  };
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
}

/** Cleans up the scenario still running, if any (a test's afterAll after a timeout; Ctrl-C). */
export async function cleanupActive(): Promise<string[]> {
  const h = active;
  active = undefined;
  return h ? await h.cleanup() : [];
}

/** Runs one scenario with a bounded duration and guaranteed cleanup. */
export async function runScenario(s: Scenario, opts: RunOptions = {}): Promise<ScenarioResult> {
  const timeoutMs = opts.timeoutMs ?? (s.timeoutMs ?? 60_000) * chaosTimeScale();
  const started = performance.now();
  const notRun = { name: s.name, checks: [], trace: [], durationMs: 0, logs: "", cleanupProblems: [], notes: [] };
  if (!canRunContainerd()) return { ...notRun, pass: false, error: "chaos scenarios need root on Linux (cgroups, mounts, containerd)" };
  const skipped = s.unavailable?.();
  if (skipped) return { ...notRun, pass: true, skipped };
  const h = createHarness(s.name, opts.verbose ?? false, opts.agentCommand);
  active = h;
  let error: string | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`scenario exceeded ${timeoutMs} ms`)), timeoutMs)));
    await Promise.race([s.run(h), timeout]);
  } catch (e) {
    error = (e as Error).message;
    h.say(`ERROR ${error}`);
  } finally {
    clearTimeout(timer);
  }
  const durationMs = performance.now() - started;
  const trace = safe(() => h.trace(), []);
  const bunletLogs = h.bunletLogs();
  const cleanupProblems = await h.cleanup();
  active = undefined;
  const { checks, notes } = h.result();
  const pass = !error && checks.length > 0 && checks.every((c) => c.ok) && cleanupProblems.length === 0;
  return { name: s.name, pass, checks, trace, durationMs, error, logs: bunletLogs, cleanupProblems, notes };
}

function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

export function printResult(r: ScenarioResult): void {
  if (r.skipped) {
    console.log(`\n=== ${r.name}: SKIP (${r.skipped}) ===`);
    return;
  }
  console.log(`\n=== ${r.name}: ${r.pass ? "PASS" : "FAIL"} (${(r.durationMs / 1000).toFixed(1)} s) ===`);
  for (const c of r.checks) console.log(`  ${c.ok ? "✓" : "✗"} ${c.name}${c.detail ? ` — ${c.detail}` : ""}`);
  for (const n of r.notes) console.log(`  note: ${n}`);
  if (r.error) console.log(`  error: ${r.error}`);
  for (const p of r.cleanupProblems) console.log(`  cleanup problem: ${p}`);
  console.log(`--- eviction trace (${r.trace.length} record${r.trace.length === 1 ? "" : "s"}) ---`);
  for (const t of r.trace) console.log(`  ${formatTraceRecord(t)}`);
  for (const t of r.trace) console.log(JSON.stringify(t));
  if (process.env.BUNLET_CHAOS_SHOW_LOG) console.log(`--- bunlet log ---\n${r.logs}`);
  else if (!r.pass) {
    const tail = r.logs.split("\n").slice(-80).join("\n");
    console.log(`--- bunlet log (last 80 lines) ---\n${tail}`);
  }
}

/** `bun scripts/chaos/<name>.ts`: run, print PASS/FAIL and the trace, exit 0/1; Ctrl-C still cleans up. */
export async function cli(s: Scenario): Promise<void> {
  console.log(`scenario ${s.name}: ${s.description}`);
  cleanupOnSignals();
  const r = await runScenario(s, { verbose: true });
  printResult(r);
  process.exit(r.pass ? 0 : 1);
}
