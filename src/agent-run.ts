// The agent's run (upstream cmd/kubelet/app/server.go run(), RunKubelet and Kubelet.ListenAndServe):
// it owns the start/stop order
//   lock file → (contention watch) → standalone/API mode → components → HTTP servers
// and the reverse on stop. createAgent takes its parts through AgentDeps: the composition root
// (agent.ts) hands it the node's components and providers, tests build small agents.
import pkg from "../package.json" with { type: "json" };
import { hostname } from "node:os";
import type { AgentComponent } from "./agent-component.ts";
import { ConfigError } from "./config/errors.ts";
import type { KubeletConfiguration } from "./config/kubelet-config.ts";
import { acquireLockFile, watchLockContention, type ContentionWatch, type LockFile } from "./lockfile.ts";
import { kv, log } from "./log.ts";
import type { AuthClient } from "./server/auth/index.ts";
import type { HealthCheck, ServerProviders } from "./server/endpoints.ts";
import { startServers, type DynamicServingCertificate, type RunningServers } from "./server/listen.ts";
import { createRegistry, type Registry } from "./server/metrics.ts";
import { processCollector } from "./server/process-metrics.ts";
import { resolveServing } from "./server/serving.ts";
import type { Summary } from "./stats/summary.ts";

/** The part of CONFIG's LoadedConfig the agent reads (LoadedConfig is assignable to it). */
export interface AgentInput {
  config: KubeletConfiguration;
  flags: { kubeconfig?: string; lockFile?: string; exitOnLockContention?: boolean; certDir?: string; unsafeLoopbackDebugHandlers?: boolean };
}

export interface AgentDeps {
  /** Pods bound to this node (v1 Pod objects) for /pods; default: none. */
  getPods?: () => readonly object[] | Promise<readonly object[]>;
  /** Summary API provider; without it /stats/summary is 404. */
  getSummary?: () => Summary | Promise<Summary>;
  /** The /configz body (CONFIG's configz(config)); without it /configz is 404. */
  configz?: (config: KubeletConfiguration) => unknown;
  /** Shared metrics registry; one is created (with process_* metrics) if absent. */
  metrics?: Registry;
  /** The prober's registry, served on /metrics/probes; absent ⇒ 404. */
  probeMetrics?: Registry;
  /** /metrics/cadvisor's figures; absent ⇒ 404. */
  getCadvisor?: ServerProviders["getCadvisor"];
  healthChecks?: HealthCheck[];
  /** JSON debugging endpoints on the main port, e.g. { "/debug/eviction": () => manager.explain() }. */
  debugEndpoints?: Record<string, () => unknown>;
  /** Started in order after the lock is held, stopped in reverse before the servers close. */
  components?: AgentComponent[];
  /** Running pods from the runtime, for /runningpods/. */
  getRunningPods?: ServerProviders["getRunningPods"];
  /** exec/attach/portForward/run through the CRI streaming API. */
  streaming?: ServerProviders["streaming"];
  /** Node name for authorization attributes and the self-signed serving cert (default: hostname). */
  nodeName?: string;
  /** TokenReview / SubjectAccessReview calls for webhook authn/authz (cluster mode's API client). */
  authClient?: AuthClient;
  /** Poll interval while another process holds the lock file. */
  lockPollMs?: number;
  /** serverTLSBootstrap's serving certificate (API-server mode). */
  servingCertificates?: DynamicServingCertificate;
}

export type ExitReason = { kind: "lock-contention"; event: string } | { kind: "stopped" } | { kind: "fatal"; error: string };

export interface Agent {
  /** Acquires the lock (waiting if held), starts components and servers. Rejects on a fatal error. */
  start(): Promise<void>;
  /** Stops everything started, releases the lock. Idempotent; safe before start() finished. */
  stop(): Promise<void>;
  /** Resolves when the agent decides to exit by itself (lock contention) or after stop(). */
  readonly done: Promise<ExitReason>;
  readonly metrics: Registry;
  /** Listening servers once started. */
  servers(): RunningServers | undefined;
  /** A component found the node unusable after start (e.g. another agent owns the runtime): done resolves "fatal". */
  fail(error: Error): void;
}

/** A registry with the process_* metrics and bunlet_build_info, as every agent serves them. */
export function createAgentRegistry(): Registry {
  const metrics = createRegistry();
  metrics.collect(processCollector());
  // Like kubernetes_build_info: a constant 1 whose labels say what is running.
  metrics
    .gauge({
      name: "bunlet_build_info",
      help: "A metric with a constant '1' value labeled by the bunlet and Bun versions.",
      labelNames: ["version", "bun_version"],
    })
    .set(1, { version: `v${pkg.version}`, bun_version: Bun.version });
  return metrics;
}

/** An agent over the given parts: nothing is touched until start(). */
export function createAgent(input: AgentInput, deps: AgentDeps = {}): Agent {
  const { config, flags } = input;
  const metrics = deps.metrics ?? createAgentRegistry();
  const components = deps.components ?? [];

  const providers: ServerProviders = {
    getPods: deps.getPods ?? (() => []),
    getSummary: deps.getSummary,
    configz: deps.configz ? () => deps.configz!(config) : undefined,
    metrics,
    probeMetrics: deps.probeMetrics,
    getCadvisor: deps.getCadvisor,
    healthChecks: deps.healthChecks,
    debugEndpoints: deps.debugEndpoints,
    podLogsDir: config.podLogsDir,
    getRunningPods: deps.getRunningPods,
    streaming: deps.streaming,
  };

  const abort = new AbortController();
  let lock: LockFile | undefined;
  let watch: ContentionWatch | undefined;
  let servers: RunningServers | undefined;
  const started: AgentComponent[] = [];
  let resolveDone!: (r: ExitReason) => void;
  const done = new Promise<ExitReason>((r) => (resolveDone = r));
  let stopping: Promise<void> | undefined;

  async function start(): Promise<void> {
    // Same order and texts as upstream run(): checked before anything is touched.
    if (flags.exitOnLockContention && !flags.lockFile) {
      throw new ConfigError("cannot exit on lock file contention: no lock file specified", {
        source: "--exit-on-lock-contention",
        field: "exitOnLockContention",
        value: true,
      });
    }
    if (flags.lockFile) {
      log.info(`Acquiring file lock ${kv({ path: flags.lockFile })}`);
      lock = await acquireLockFile(flags.lockFile, { pollMs: deps.lockPollMs, signal: abort.signal });
      log.info(`Acquired file lock ${kv({ path: flags.lockFile })}`);
      if (flags.exitOnLockContention) {
        log.info(`Watching for inotify events ${kv({ path: flags.lockFile })}`);
        watch = watchLockContention(flags.lockFile, (ev) => {
          log.info(`Inotify event on the lock file: another instance wants it, exiting ${kv({ path: flags.lockFile, event: ev.kind })}`);
          resolveDone({ kind: "lock-contention", event: ev.kind });
        });
      }
    }
    if (abort.signal.aborted) return;

    if (!flags.kubeconfig) {
      log.info("Standalone mode, no API client");
      log.info("No API server defined - no node status update will be sent");
    }

    // The serving pair is made while the components start (a self-signed one is two RSA keys from openssl,
    // a second on a busy node), so the main port listens once they have started, before the first pod
    // runs: upstream makes its pair before the kubelet runs (InitializeTLS).
    const serving = resolveServing(config, {
      nodeName: deps.nodeName ?? hostname().toLowerCase(),
      certDir: flags.certDir ?? "/var/lib/kubelet/pki",
      authClient: deps.authClient,
      servingCertificates: deps.servingCertificates,
      apiServerMode: !!flags.kubeconfig,
    });
    serving.catch(() => {}); // its error is thrown below, once the components have started
    for (const c of components) {
      if (abort.signal.aborted) return;
      await c.start();
      started.push(c);
    }
    if (abort.signal.aborted) return;

    const secure = await serving;
    servers = await startServers(
      {
        address: config.address,
        port: config.port,
        readOnlyPort: config.readOnlyPort,
        healthzBindAddress: config.healthzBindAddress,
        healthzPort: config.healthzPort,
        enableServer: config.enableServer,
        enableDebuggingHandlers: config.enableDebuggingHandlers,
        secure,
        unsafeLoopbackDebugHandlers: flags.unsafeLoopbackDebugHandlers,
      },
      providers,
    );
  }

  function stop(): Promise<void> {
    stopping ??= (async () => {
      abort.abort(new Error("agent stopping"));
      const step = async (what: string, fn: () => unknown) => {
        try {
          await fn();
        } catch (err) {
          log.error(`shutdown step failed ${kv({ step: what, error: String(err) })}`);
        }
      };
      await step("servers", () => servers?.stop());
      for (const c of started.reverse()) await step(c.name, () => c.stop());
      await step("lock watch", () => watch?.close());
      await step("lock", () => lock?.release());
      if (lock) log.info(`Released file lock ${kv({ path: lock.path })}`);
      resolveDone({ kind: "stopped" });
    })();
    return stopping;
  }

  return { start, stop, done, metrics, servers: () => servers, fail: (e) => resolveDone({ kind: "fatal", error: e.message }) };
}
