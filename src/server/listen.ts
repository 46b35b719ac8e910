// Starts the kubelet's HTTP listeners with Bun.serve: healthz (healthzBindAddress:healthzPort),
// main (address:port) and read-only (address:readOnlyPort). Upstream serves the main port with TLS
// and authn/authz; we have no authn, so without TLS the main and read-only ports stay on loopback
// when `address` is a wildcard, and say so in the log.
import type { Server } from "bun";
import { log, kv } from "../log.ts";
import { isLoopback, isUnspecified } from "./address.ts";
import { healthzRoutes, kubeletRoutes, type ServerProviders } from "./endpoints.ts";
import { createHttpMetrics, type ServerType } from "./http-metrics.ts";
import { createRouter, type Route } from "./router.ts";

export interface ListenConfig {
  address: string;
  port: number;
  /** 0 disables the read-only server. */
  readOnlyPort: number;
  healthzBindAddress: string;
  /** 0 disables the healthz server (upstream: `if s.HealthzPort > 0`). */
  healthzPort: number;
  /** false disables the main server (upstream --enable-server / enableServer). */
  enableServer?: boolean;
  enableDebuggingHandlers?: boolean;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
}

export type ServerName = "healthz" | "main" | "read-only";

export interface ListeningServer {
  name: ServerName;
  hostname: string;
  port: number;
  url: string;
}

export interface RunningServers {
  servers: ListeningServer[];
  /** Looks up a listener by name (undefined when disabled). */
  get(name: ServerName): ListeningServer | undefined;
  /** Stops accepting, closes open connections. Idempotent. */
  stop(): Promise<void>;
}

export class ListenError extends Error {
  override name = "ListenError";
}

export interface BindDecision {
  hostname: string;
  /** Why the configured address was not used, for the log. */
  reason?: string;
}

/**
 * Where a kubelet port may listen. `authenticated` says whether every request on it goes through
 * authentication and authorization. Without that, a wildcard address falls back to loopback and a
 * specific non-loopback address is refused: nothing unauthenticated is ever served beyond loopback.
 */
export function bindAddress(address: string, authenticated: boolean, what = "the main server"): BindDecision {
  if (isUnspecified(address)) {
    const hostname = address.includes(":") && !address.includes(".") ? "::" : "0.0.0.0";
    if (authenticated) return { hostname };
    return {
      hostname: "127.0.0.1",
      reason: `address ${address || '""'} is every interface, but ${what} has no authentication and authorization: serving on loopback only`,
    };
  }
  if (authenticated || isLoopback(address)) return { hostname: address };
  throw new ListenError(
    `refusing to serve ${what} on ${address}: it has no authentication and authorization there (set address to a loopback IP, or configure tlsCertFile/tlsPrivateKeyFile with authentication and authorization)`,
  );
}

export function startServers(cfg: ListenConfig, providers: ServerProviders): RunningServers {
  const tlsFiles = cfg.tlsCertFile && cfg.tlsPrivateKeyFile ? { cert: cfg.tlsCertFile, key: cfg.tlsPrivateKeyFile } : undefined;
  const started: { info: ListeningServer; server: Server<unknown> }[] = [];
  const observer = createHttpMetrics(providers.metrics);
  const SERVER_TYPE: Record<ServerName, ServerType> = { healthz: "healthz", main: "readwrite", "read-only": "readonly" };

  function listen(name: ServerName, hostname: string, port: number, routes: Route[], tls?: { cert: string; key: string }): void {
    const fetch = createRouter(routes, { name, observe: observer(SERVER_TYPE[name]) });
    let server: Server<unknown>;
    try {
      server = Bun.serve({
        hostname,
        port,
        fetch,
        // Bun calls this if fetch itself throws; the router already maps handler errors to 500.
        error: (err) => new Response(`500: Internal Server Error: ${err.message}\n`, { status: 500 }),
        ...(tls ? { tls: { cert: Bun.file(tls.cert), key: Bun.file(tls.key) } } : {}),
      });
    } catch (err) {
      throw new ListenError(`failed to listen on ${hostname}:${port} for the ${name} server: ${err instanceof Error ? err.message : String(err)}`);
    }
    const actualPort = server.port ?? port;
    const info: ListeningServer = {
      name,
      hostname,
      port: actualPort,
      url: `${tls ? "https" : "http"}://${hostname.includes(":") ? `[${hostname}]` : hostname}:${actualPort}`,
    };
    started.push({ info, server });
    log.info(`Starting to listen ${kv({ server: name, address: hostname, port: actualPort, requestedPort: port !== actualPort ? port : undefined, tls: tls ? true : undefined })}`);
  }

  try {
    if (cfg.healthzPort > 0) listen("healthz", cfg.healthzBindAddress, cfg.healthzPort, healthzRoutes(providers));
    if (cfg.enableServer !== false) {
      // Authentication and authorization are not acted on yet: TLS alone authenticates nobody.
      const main = bindAddress(cfg.address, false);
      if (main.reason) log.warn(`main server: ${main.reason}`);
      listen("main", main.hostname, cfg.port, kubeletRoutes(providers, { debuggingHandlers: cfg.enableDebuggingHandlers !== false }), tlsFiles);
    }
    if (cfg.readOnlyPort > 0) {
      // The read-only port is plain HTTP by design (upstream too), so the loopback rule always applies.
      // A specific IP is the user's explicit choice for it (upstream serves it on `address`).
      const ro = isUnspecified(cfg.address) ? bindAddress(cfg.address, false, "the read-only server") : { hostname: cfg.address, reason: undefined };
      if (ro.reason) log.info(`read-only server: ${ro.reason}`);
      listen("read-only", ro.hostname, cfg.readOnlyPort, kubeletRoutes(providers, { debuggingHandlers: false }));
    }
  } catch (err) {
    for (const s of started) s.server.stop(true);
    throw err;
  }

  let stopping: Promise<void> | undefined;
  return {
    servers: started.map((s) => s.info),
    get: (name) => started.find((s) => s.info.name === name)?.info,
    stop() {
      stopping ??= Promise.all(started.map((s) => s.server.stop(true))).then(() => undefined);
      return stopping;
    },
  };
}
