// Bare `bunlet [kubelet flags]`: load and validate the configuration, build the agent, run it
// until SIGTERM/SIGINT (or lock contention), then shut down within the deadline.
// Mirrors cmd/kubelet/app/server.go: config errors exit 1 before anything is started.
import { createNodeAgent } from "../agent.ts";
import { configz } from "../config/load.ts";
import { loadKubeletConfig } from "./load-config.ts";
import { flushLog, kv, log, setVerbosity } from "../log.ts";
import { checkSwap } from "../wire/swap.ts";
import { createCriClient } from "../cri/client.ts";
import { withCgroupDriverFromCRI } from "../pod/cgroups-driver.ts";
import { VERSION } from "./version.ts";

export interface RunOpts {
  /** The whole shutdown (loops, servers, lock) must finish within this; default 2 s. */
  shutdownTimeoutMs?: number;
  /** Where fatal errors are printed; default stderr. */
  printError?: (line: string) => void;
  /** Reads /proc/swaps (tests); default the real file. */
  readProcSwaps?: (path: string) => string;
}

const SIGNALS = ["SIGTERM", "SIGINT"] as const;

/** Runs the agent; resolves to the process exit code. */
export async function runAgent(argv: readonly string[], opts: RunOpts = {}): Promise<number> {
  const printError = opts.printError ?? ((line: string) => (flushLog(), process.stderr.write(`${line}\n`)));
  const shutdownTimeoutMs = opts.shutdownTimeoutMs ?? 2000;

  let loaded;
  try {
    loaded = await loadKubeletConfig([...argv]);
  } catch (err) {
    // A ConfigError names source, field and value; anything else is still a refusal to start.
    printError(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  setVerbosity(loaded.flags.v);
  for (const w of new Set(loaded.warnings)) log.warn(w);
  log.info(`Starting bunlet ${kv({ version: `v${VERSION}`, bun: Bun.version, pid: process.pid, config: loaded.configFile })}`);

  // Upstream checks swap while building the container manager, before anything runs: same exit.
  const swapError = checkSwap(loaded.config.failSwapOn ?? true, opts.readProcSwaps);
  if (swapError) {
    printError(`error: ${swapError}`);
    return 1;
  }

  // Upstream asks the runtime for its cgroup driver before building the container manager (v1.31
  // KubeletCgroupDriverFromCRI): a reported driver overrides cgroupDriver; an unknown one is fatal.
  try {
    const config = await withCgroupDriverFromCRI(loaded.config, (endpoint) => createCriClient({ endpoint, timeoutMs: 10_000, retryBudgetMs: 0 }));
    if (config !== loaded.config) loaded = { ...loaded, config };
  } catch (err) {
    printError(`error: failed to get cgroup driver from the container runtime: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }

  // Building the kubelet can refuse a setting (e.g. an allowedUnsafeSysctls pattern that is not
  // namespaced): upstream's "failed to run Kubelet" exit, not a crash.
  let agent: ReturnType<typeof createNodeAgent>;
  try {
    agent = createNodeAgent(loaded, { configz: (c) => configz(c).kubeletconfig });
  } catch (err) {
    printError(`error: failed to run Kubelet: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }

  // A node agent must not die on one bad runtime reply or a bug in one loop: log and keep running
  // (every loop also catches its own errors; this is the last line).
  const onRejection = (reason: unknown) =>
    log.error(`unhandled error, continuing ${kv({ error: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) })}`);
  process.on("unhandledRejection", onRejection);

  let signalled: string | undefined;
  const onSignal = (sig: string) => {
    if (signalled) {
      log.warn(`Received second signal, exiting immediately ${kv({ signal: sig })}`);
      process.exit(1);
    }
    signalled = sig;
    log.info(`Received signal, shutting down ${kv({ signal: sig })}`);
    void agent.stop();
  };
  const handlers = SIGNALS.map((sig) => [sig, () => onSignal(sig)] as const);
  for (const [sig, h] of handlers) process.on(sig, h);
  // The agent's loops run on unref'ed timers (src/clock.ts) so they never hold a stopping agent;
  // the process lives until the agent is done because this command waits for it, even with every
  // server disabled.
  const keepAlive = setInterval(() => {}, 1 << 30);

  try {
    try {
      await agent.start();
    } catch (err) {
      if (signalled) return await shutdown(); // the wait for the lock was cut short by the signal
      printError(`error: ${err instanceof Error ? err.message : String(err)}`);
      await agent.stop();
      return 1;
    }
    const reason = await agent.done;
    if (reason.kind === "lock-contention") log.info("Lock file contention: exiting so the other instance takes over");
    if (reason.kind === "fatal") {
      printError(`error: ${reason.error}`);
      await shutdown();
      return 1;
    }
    return await shutdown();
  } finally {
    clearInterval(keepAlive);
    for (const [sig, h] of handlers) process.off(sig, h);
    process.off("unhandledRejection", onRejection);
  }

  async function shutdown(): Promise<number> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), shutdownTimeoutMs)));
    const result = await Promise.race([agent.stop().then(() => "ok" as const), timedOut]);
    clearTimeout(timer);
    if (result === "timeout") {
      log.error(`Shutdown did not finish in time, exiting anyway ${kv({ timeoutMs: shutdownTimeoutMs })}`);
      return 1;
    }
    log.info("Shutdown complete");
    return 0;
  }
}
