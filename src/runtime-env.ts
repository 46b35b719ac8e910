// The runtime's own idle tuning (docs/adr/0010-runtime-env.md). Bun's GC timer and mimalloc read
// their settings from the environment once, when the process starts, before any of our code runs —
// so the agent sets them by re-executing itself (execve: same pid, same argv, the environment plus
// the values below), once, before it loads anything else. The added keys are then removed from
// process.env (what node:child_process hands on; Bun.spawn's default is the environment the process
// started with, and a Bun program it starts would get the same tuning — harmless).
// A value the operator set already is kept; BUNLET_RUNTIME_ENV=0 turns the whole thing off.
//
// What each value saves was measured with scripts/bench/idle.ts --variant (docs/benchmarks.md#idle-cost).
import { readFileSync } from "node:fs";

export const RUNTIME_ENV: Readonly<Record<string, string>> = {
  // Bun's repeating GC timer runs a collection every second while the heap changes at all, which an
  // agent relisting the runtime every second always does; JSC's own allocation-paced collector
  // (GCActivityCallback) still collects as the heap grows.
  BUN_GC_TIMER_DISABLE: "1",
  // mimalloc's scavenger thread wakes to return freed pages to the kernel; without it the allocating
  // thread does so as it goes (same RSS at 100 pods, one thread fewer).
  MIMALLOC_SCAVENGER: "0",
  // JSC's top JIT tier (FTL): its compiles ran on the same cores as the runtime while 100 pods start
  // (a third of the agent's CPU in the burst, JITWorker threads); without it the burst took 1.6–1.8 s
  // of agent CPU instead of 2.3–3.0 s, and the idle agent's CPU stayed within the noise (ADR 0010).
  // DFG still optimizes.
  BUN_JSC_useFTLJIT: "0",
};

/** Set by the first process for the re-executed one: the keys it added (comma-separated), or "0": off. */
export const RUNTIME_ENV_MARKER = "BUNLET_RUNTIME_ENV";

export type RuntimeEnvStep =
  | { kind: "none" }
  /** Re-execute with this environment. */
  | { kind: "exec"; env: Record<string, string> }
  /** The re-executed process: remove these keys (and the marker) from its environment. */
  | { kind: "cleanup"; keys: string[] };

/** What to do at startup with environment `env` for the tuning `want` (pure: tested by table). */
export function runtimeEnvStep(env: Readonly<Record<string, string | undefined>>, want: Readonly<Record<string, string>> = RUNTIME_ENV): RuntimeEnvStep {
  const marker = env[RUNTIME_ENV_MARKER];
  if (marker === "0") return { kind: "none" };
  if (marker !== undefined) return { kind: "cleanup", keys: marker.split(",").filter((k) => k in want) };
  const missing = Object.keys(want).filter((k) => env[k] === undefined);
  if (missing.length === 0) return { kind: "none" };
  const next: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) next[k] = v;
  for (const k of missing) next[k] = want[k]!;
  next[RUNTIME_ENV_MARKER] = missing.join(",");
  return { kind: "exec", env: next };
}

/**
 * Applies runtimeEnvStep to this process: re-executes it (does not return) or cleans the environment
 * of the re-executed one. Any failure (no /proc, no execve) leaves the process running untuned.
 */
export function applyRuntimeEnv(): void {
  const step = runtimeEnvStep(process.env);
  if (step.kind === "cleanup") {
    for (const k of step.keys) delete process.env[k];
    delete process.env[RUNTIME_ENV_MARKER];
    return;
  }
  if (step.kind !== "exec" || typeof process.execve !== "function") return;
  try {
    // The process's own argv as the kernel holds it: a compiled binary's process.argv carries an
    // extra entry (its bundled entry point) that must not be passed again.
    const argv = readFileSync("/proc/self/cmdline", "utf8").split("\0").slice(0, -1);
    if (argv.length === 0) return;
    process.execve(process.execPath, argv, step.env);
  } catch {
    // untuned, still correct
  }
}
