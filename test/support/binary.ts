// Whole-binary test helpers: build dist/bunlet once (only when a source is newer), spawn it,
// wait for /healthz, stop it. Every process spawned here is tracked so afterEach/afterAll can
// kill what a failing test left behind (killAll).
import type { Subprocess } from "bun";
import { readdirSync, statSync } from "node:fs";
import { constants } from "node:os";
import { join, resolve } from "node:path";
import { pollUntil } from "./wait.ts";

export { pollUntil };

export const ROOT = resolve(import.meta.dir, "../..");
export const BINARY = join(ROOT, "dist", "bunlet");

/** Newest mtime (ms) of the files the binary is built from. */
function newestSourceMtime(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const d of ["src", "ffi"]) walk(join(ROOT, d));
  for (const f of ["package.json", "scripts/build.sh"]) newest = Math.max(newest, statSync(join(ROOT, f)).mtimeMs);
  return newest;
}

function isFresh(binary: string): boolean {
  try {
    return statSync(binary).mtimeMs >= newestSourceMtime();
  } catch {
    return false;
  }
}

const building = new Map<string, Promise<string>>();

/**
 * Builds dist/bunlet (or, for `arch`, the cross-built dist/bunlet-linux-<arch>) unless it is newer than
 * every source; returns its path. Once per process.
 */
export function ensureBuilt(arch?: "x64" | "arm64"): Promise<string> {
  const binary = arch ? join(ROOT, "dist", `bunlet-linux-${arch}`) : BINARY;
  let b = building.get(binary);
  if (!b) {
    b = (async () => {
      if (isFresh(binary)) return binary;
      const proc = Bun.spawn(["bash", join(ROOT, "scripts/build.sh"), ...(arch ? ["--arch", arch] : [])], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
      const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      if (code !== 0) throw new Error(`scripts/build.sh${arch ? ` --arch ${arch}` : ""} failed (exit ${code}):\n${out}\n${err}`);
      return binary;
    })();
    building.set(binary, b);
  }
  return b;
}

const handedOut = new Set<number>();

/**
 * A free TCP port on loopback: the kernel picks one for a throwaway listener. The kernel may hand
 * the same port to two listeners in a row (measured: about 1 pair in 5,000), so a port this process
 * was already given is asked for again: two ports taken for one server (etcd's client and peer, an
 * agent's port and healthz port) are never the same.
 */
export function freePort(): number {
  for (;;) {
    const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = s.port;
    s.stop(true);
    if (handedOut.has(port)) continue;
    if (handedOut.size >= 4096) handedOut.clear(); // a long bench: the range holds ~28k ports
    handedOut.add(port);
    return port;
  }
}

export interface BunletProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  pid: number;
  /** Output so far (collected continuously). */
  stdout(): string;
  stderr(): string;
  /** Exit code once exited (signal deaths are 128+n). */
  exited: Promise<number>;
  /** Sends `signal` and waits for exit (bounded); kills with SIGKILL after the timeout. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number>;
}

const live = new Set<BunletProcess>();

function collect(stream: ReadableStream<Uint8Array>, sink: string[]): Promise<void> {
  return (async () => {
    const dec = new TextDecoder();
    for await (const chunk of stream) sink.push(dec.decode(chunk, { stream: true }));
  })();
}

export interface SpawnOpts {
  cwd?: string;
  env?: Record<string, string>;
  /** Binary path (e.g. a copy outside the tree); default dist/bunlet. */
  binary?: string;
  /** A command that runs the agent, the flags appended (e.g. the arm64 binary under scripts/host/arm64.sh); instead of `binary`. */
  command?: readonly string[];
}

/** Spawns the binary with `args`; tracked until it exits. */
export function spawnBunlet(args: string[], opts: SpawnOpts = {}): BunletProcess {
  const out: string[] = [];
  const err: string[] = [];
  const proc = Bun.spawn([...(opts.command ?? [opts.binary ?? BINARY]), ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, NO_COLOR: "1", ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const drained = Promise.all([collect(proc.stdout, out), collect(proc.stderr, err)]);
  const exited = proc.exited.then(async (code) => {
    await drained.catch(() => {});
    return proc.signalCode ? 128 + (constants.signals[proc.signalCode as NodeJS.Signals] ?? 0) : code;
  });
  const bp: BunletProcess = {
    proc,
    pid: proc.pid,
    stdout: () => out.join(""),
    stderr: () => err.join(""),
    exited,
    async stop(signal = "SIGTERM", timeoutMs = 5000) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  live.add(bp);
  void exited.then(() => live.delete(bp));
  return bp;
}

/** Runs the binary to completion (for one-shot subcommands). */
export async function runBunlet(args: string[], opts: SpawnOpts & { timeoutMs?: number } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = spawnBunlet(args, opts);
  const timer = setTimeout(() => p.proc.kill("SIGKILL"), opts.timeoutMs ?? 15_000);
  try {
    const code = await p.exited;
    return { code, stdout: p.stdout(), stderr: p.stderr() };
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `url` answers 200 "ok"; fails early, with the output, if the process exits. */
export async function waitForHealthz(p: BunletProcess, url: string, timeoutMs = 10_000): Promise<void> {
  let exitCode: number | undefined;
  void p.exited.then((c) => (exitCode = c));
  try {
    await pollUntil(
      async () => {
        if (exitCode !== undefined) throw new Error(`bunlet exited with ${exitCode} before ${url} was healthy`);
        try {
          const res = await fetch(url);
          return res.status === 200 && (await res.text()) === "ok";
        } catch {
          return false;
        }
      },
      `${url} to answer ok`,
      timeoutMs,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- stdout ---\n${p.stdout()}\n--- stderr ---\n${p.stderr()}`);
  }
}

/**
 * The flags of an agent with no container runtime (it serves while it waits for one): its root and
 * static pod directories under `dir`, the kubelet port on `port`, /healthz on `healthzPort`, no read-only port.
 */
export function withoutRuntimeFlags(dir: string, port: number, healthzPort: number): string[] {
  return [
    `--root-dir=${join(dir, "root")}`,
    `--port=${port}`,
    `--healthz-port=${healthzPort}`,
    "--read-only-port=0",
    `--container-runtime-endpoint=unix://${join(dir, "no-runtime.sock")}`,
    `--pod-manifest-path=${join(dir, "manifests")}`,
  ];
}

/** Spawns the binary with `flags` and withoutRuntimeFlags on two free ports; resolves once /healthz answers. */
export async function startAgentWithoutRuntime(dir: string, flags: string[] = [], healthzTimeoutMs?: number): Promise<{ p: BunletProcess; port: number }> {
  const port = freePort();
  const healthz = freePort();
  const p = spawnBunlet([...flags, ...withoutRuntimeFlags(dir, port, healthz)]);
  await waitForHealthz(p, `http://127.0.0.1:${healthz}/healthz`, healthzTimeoutMs);
  return { p, port };
}

/** SIGKILLs every spawned process still running and waits for them (for afterEach/afterAll). */
export async function killAll(): Promise<void> {
  const all = [...live];
  for (const p of all) p.proc.kill("SIGKILL");
  await Promise.all(all.map((p) => p.exited.catch(() => 0)));
}
