// The kubelet's HTTP endpoints over injected providers (upstream pkg/kubelet/server/server.go).
// The main port serves the debugging handlers (/configz) when enableDebuggingHandlers is on; the
// read-only port never does, as upstream.
import type { Summary } from "../stats/summary.ts";
import { CONTENT_TYPE, type Registry } from "./metrics.ts";
import { containerLogsHandler } from "./container-logs.ts";
import { nodeLogsHandler } from "./node-logs.ts";
import { renderResourceMetrics } from "./resource-metrics.ts";
import { renderCadvisorMetrics } from "./cadvisor-metrics.ts";
import type { CadvisorSnapshot } from "../stats/cadvisor.ts";
import { json, text, type Route } from "./router.ts";
import { streamingRoutes, type StreamingHost } from "./streaming/index.ts";

/** A named health check; returns an error text when unhealthy (upstream healthz.HealthChecker). */
export interface HealthCheck {
  name: string;
  check(): string | undefined;
}

/** What the servers read from the rest of the agent. Later issues fill in the optional parts. */
export interface ServerProviders {
  /** Pods bound to this node, as v1 Pod objects. */
  getPods(): readonly object[] | Promise<readonly object[]>;
  /** Summary API; absent ⇒ /stats/summary answers 404. */
  getSummary?(): Summary | Promise<Summary>;
  /** The object served under "kubeletconfig" by /configz. */
  configz?(): unknown;
  metrics: Registry;
  /** The prober's registry (prober_probe_total, …): /metrics/probes, as upstream. */
  probeMetrics?: Registry;
  /** The container_* / machine_* figures for /metrics/cadvisor; absent ⇒ 404. */
  getCadvisor?(): Promise<CadvisorSnapshot>;
  healthChecks?: readonly HealthCheck[];
  /** Pods with running containers as the runtime sees them, for /runningpods/. */
  getRunningPods?(): Promise<readonly { uid: string; name: string; namespace: string; containers: readonly { name: string }[] }[]>;
  /** podLogsDir: where /containerLogs/ finds the CRI log files; absent ⇒ /containerLogs/ is 404. */
  podLogsDir?: string;
  /** exec/attach/portForward/run through the CRI streaming API; absent ⇒ those paths are 404. */
  streaming?: StreamingHost;
  /** The node's log directory served under /logs/ (upstream: /var/log/). */
  nodeLogDir?: string;
  /**
   * JSON debugging endpoints of other subsystems, by path ("/debug/eviction" → the eviction
   * manager's live explain report). Main port only, with the other debugging handlers.
   */
  debugEndpoints?: Readonly<Record<string, () => unknown>>;
}

export interface EndpointOpts {
  /** Main port: /configz (debugging handlers). Read-only port: false. */
  debuggingHandlers: boolean;
  /**
   * The debugging handlers that reach into containers and logs (CONTAINER_ACCESS_PATHS). false on
   * the plain loopback port, where nobody is authenticated, unless --unsafe-loopback-debug-handlers:
   * they answer 403. Default true.
   */
  containerAccess?: boolean;
}

/** Debugging handlers that run commands in containers or read container and node logs. */
export const CONTAINER_ACCESS_PATHS = ["/exec", "/attach", "/portForward", "/run", "/containerLogs", "/logs"] as const;

/** Why CONTAINER_ACCESS_PATHS answer 403 on the plain loopback port (kept short: it is a response body). */
export const CONTAINER_ACCESS_REFUSED =
  "Forbidden: exec, attach, portForward, run, containerLogs and logs are not served without authentication; serve TLS (tlsCertFile, clientCAFile or --kubeconfig) or start bunlet with --unsafe-loopback-debug-handlers\n";

function containerAccessRefusedRoutes(): Route[] {
  const handler = () => text(CONTAINER_ACCESS_REFUSED, 403);
  const all = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
  return CONTAINER_ACCESS_PATHS.map((path) => ({ path, methods: all, prefix: true, handler }));
}

/**
 * /healthz as the kubelet's: "ok", or 500 naming failed checks; ?verbose lists every check. As
 * upstream's healthz.InstallHandler, /healthz/<check> (ping, syncloop, …) runs that check alone.
 */
export function healthz(checks: readonly HealthCheck[]): Route["handler"] {
  return (_req, url) => {
    const all = [{ name: "ping", check: () => undefined }, ...checks];
    if (url.pathname !== "/healthz") {
      const one = all.find((c) => `/healthz/${c.name}` === url.pathname);
      if (!one) return text("404 page not found\n", 404);
      const error = one.check();
      return error === undefined ? text("ok") : text(`internal server error: ${error}\n`, 500);
    }
    const results = all.map((c) => ({ name: c.name, error: c.check() }));
    const failed = results.some((r) => r.error !== undefined);
    const verbose = url.searchParams.has("verbose");
    if (!failed && !verbose) return text("ok");
    const lines = results.map((r) => (r.error === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.error}`));
    lines.push(failed ? "healthz check failed" : "healthz check passed");
    return text(lines.join("\n") + "\n", failed ? 500 : 200);
  };
}

/** Keeps only CPU and memory stats, as upstream's ?only_cpu_and_memory=true. */
export function onlyCpuAndMemory(s: Summary): Summary {
  const pick = <T extends { cpu?: unknown; memory?: unknown }>(o: T) => ({ cpu: o.cpu, memory: o.memory });
  return {
    node: {
      nodeName: s.node.nodeName,
      startTime: s.node.startTime,
      ...pick(s.node),
      systemContainers: s.node.systemContainers?.map((c) => ({ name: c.name, startTime: c.startTime, ...pick(c) })),
    } as Summary["node"],
    pods: s.pods.map(
      (p) =>
        ({
          podRef: p.podRef,
          startTime: p.startTime,
          ...pick(p),
          containers: p.containers?.map((c) => ({ name: c.name, startTime: c.startTime, ...pick(c) })),
        }) as Summary["pods"][number],
    ),
  };
}

/** Header values sent to staticPodURL are credentials (e.g. "Authorization: Bearer …"): never served. */
export const REDACTED = "[REDACTED]";

/** The /configz object with staticPodURLHeader values replaced; header names stay visible. */
export function redactConfigz(config: unknown): unknown {
  if (config === null || typeof config !== "object") return config;
  const headers = (config as { staticPodURLHeader?: unknown }).staticPodURLHeader;
  if (headers === null || typeof headers !== "object") return config;
  const redacted = Object.fromEntries(Object.entries(headers).map(([name, values]) => [name, Array.isArray(values) ? values.map(() => REDACTED) : REDACTED]));
  return { ...config, staticPodURLHeader: redacted };
}

export function kubeletRoutes(p: ServerProviders, opts: EndpointOpts): Route[] {
  const routes: Route[] = [
    { path: "/healthz", methods: ["GET"], handler: healthz(p.healthChecks ?? []), prefix: true },
    {
      path: "/pods",
      methods: ["GET"],
      handler: async () => json({ kind: "PodList", apiVersion: "v1", metadata: {}, items: await p.getPods() }),
    },
    {
      path: "/metrics",
      methods: ["GET"],
      handler: () => new Response(p.metrics.render(), { headers: { "content-type": CONTENT_TYPE } }),
    },
  ];
  const probeMetrics = p.probeMetrics;
  if (probeMetrics) {
    routes.push({
      path: "/metrics/probes",
      methods: ["GET"],
      handler: () => new Response(probeMetrics.render(), { headers: { "content-type": CONTENT_TYPE } }),
    });
  }
  const getCadvisor = p.getCadvisor;
  if (getCadvisor) {
    routes.push({
      path: "/metrics/cadvisor",
      methods: ["GET"],
      handler: async () => {
        const snap = await getCadvisor().catch(() => ({ containers: [], error: true }));
        return new Response(renderCadvisorMetrics(snap, Date.now()), { headers: { "content-type": CONTENT_TYPE } });
      },
    });
  }
  const getSummary = p.getSummary;
  if (getSummary) {
    routes.push({
      path: "/stats/summary",
      methods: ["GET", "POST"],
      handler: async (_req, url) => {
        const summary = await getSummary();
        return json(url.searchParams.get("only_cpu_and_memory") === "true" ? onlyCpuAndMemory(summary) : summary);
      },
    });
  }
  if (getSummary) {
    routes.push({
      path: "/metrics/resource",
      methods: ["GET"],
      handler: async () => {
        let summary: Summary | undefined;
        try {
          summary = await getSummary();
        } catch {
          summary = undefined; // resource_scrape_error 1
        }
        return new Response(renderResourceMetrics(summary), { headers: { "content-type": CONTENT_TYPE } });
      },
    });
  }
  if (opts.debuggingHandlers) {
    const containerAccess = opts.containerAccess !== false;
    if (containerAccess) routes.push({ path: "/logs", methods: ["GET"], prefix: true, handler: nodeLogsHandler(p.nodeLogDir ?? "/var/log") });
    else routes.push(...containerAccessRefusedRoutes());
    const running = p.getRunningPods;
    if (running) {
      // Upstream encodes runtime pods as v1 Pods: name/namespace/uid and container names only.
      const toPod = (x: Awaited<ReturnType<typeof running>>[number]) => ({
        metadata: { name: x.name, namespace: x.namespace, uid: x.uid, creationTimestamp: null },
        spec: { containers: x.containers.map((c) => ({ name: c.name, resources: {} })) },
        status: {},
      });
      routes.push({
        path: "/runningpods",
        methods: ["GET"],
        prefix: true,
        handler: async () => json({ kind: "PodList", apiVersion: "v1", metadata: {}, items: (await running()).map(toPod) }),
      });
    }
    if (p.streaming && containerAccess) routes.push(...streamingRoutes(p.streaming));
    if (p.podLogsDir && containerAccess)
      routes.push({ path: "/containerLogs", methods: ["GET"], prefix: true, handler: containerLogsHandler({ getPods: p.getPods, podLogsDir: p.podLogsDir }) });
  } else {
    routes.push(...debuggingDisabledRoutes());
  }
  const configz = p.configz;
  if (opts.debuggingHandlers && configz) {
    routes.push({ path: "/configz", methods: ["GET"], handler: () => json({ kubeletconfig: redactConfigz(configz()) }) });
  }
  if (opts.debuggingHandlers) {
    for (const [path, get] of Object.entries(p.debugEndpoints ?? {})) {
      routes.push({ path, methods: ["GET"], handler: async () => json(await get()) });
    }
  }
  return routes;
}

/** Paths upstream answers 405 "Debug endpoints are disabled." when enableDebuggingHandlers is false. */
export const DEBUGGING_PATHS = ["/run", "/exec", "/attach", "/portForward", "/containerLogs", "/runningpods", "/debug/pprof", "/logs"] as const;

function debuggingDisabledRoutes(): Route[] {
  const handler = () => text("Debug endpoints are disabled.\n", 405);
  const all = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
  return DEBUGGING_PATHS.map((path) => ({ path, methods: all, prefix: true, handler }));
}

/** The healthz port serves /healthz only. */
export function healthzRoutes(p: Pick<ServerProviders, "healthChecks">): Route[] {
  return [{ path: "/healthz", methods: ["GET"], handler: healthz(p.healthChecks ?? []), prefix: true }];
}
