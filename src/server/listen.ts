// Starts the kubelet's HTTP listeners: healthz (healthzBindAddress:healthzPort), main
// (address:port) and read-only (address:readOnlyPort). The main port is secured (TLS + the auth
// filter, upstream's shape) when serving.ts says so (always in API-server mode); otherwise it is
// plain HTTP kept on loopback, where exec/attach/portForward/run/containerLogs/logs answer 403
// unless --unsafe-loopback-debug-handlers. Nothing without authentication and authorization is
// served beyond loopback, except the read-only port on an address the user names explicitly (its
// whole point upstream).
import { readFile } from "node:fs/promises";
import type { SecureVersion } from "node:tls";
import { withAuth, type KubeletAuth } from "./auth/index.ts";
import { startSecureServer } from "./tls/secure-server.ts";
import { log, kv } from "../log.ts";
import { isLoopback, isUnspecified } from "./address.ts";
import { healthzRoutes, kubeletRoutes, type ServerProviders } from "./endpoints.ts";
import { createHttpMetrics, type ServerType } from "./http-metrics.ts";
import { createRouter, type Route } from "./router.ts";
import { defaultConnectionLimits, startPlainServer, type ConnectionLimits } from "./connections.ts";
import { getrlimit, RLIMIT_NOFILE } from "../../ffi/libc.ts";
import { createStreamingUpgrade, type UpgradeHook } from "./streaming/index.ts";

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
  /** TLS + authentication/authorization for the main port (see serving.ts); absent ⇒ plain HTTP on loopback. */
  secure?: SecureServing;
  /** --unsafe-loopback-debug-handlers: the plain loopback port also serves exec, attach, portForward, run, containerLogs, logs. */
  unsafeLoopbackDebugHandlers?: boolean;
  /** Per-server and per-client connection caps; default from the fd limit (connections.ts). */
  connectionLimits?: ConnectionLimits;
}

/** How the main port serves when it is secured. */
export interface SecureServing {
  /** Empty with `certificates` (serverTLSBootstrap). */
  certFile: string;
  keyFile: string;
  /** The serving pair from the certificate manager, replaced on rotation without a restart. */
  certificates?: DynamicServingCertificate;
  clientCAFile?: string;
  minVersion: SecureVersion;
  /** OpenSSL cipher list (TLS ≤ 1.2); undefined ⇒ defaults. */
  ciphers?: string;
  auth: KubeletAuth;
  /** anonymous + AlwaysAllow: anyone may do anything, so the port still stays on loopback. */
  allowsEveryone: boolean;
}

export interface DynamicServingCertificate {
  current(): { certPem: string; keyPem: string } | undefined;
  subscribe(fn: (pair: { certPem: string; keyPem: string }) => void): () => void;
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

type Fetch = (req: Request) => Promise<Response>;

function urlOf(scheme: string, hostname: string, port: number): string {
  return `${scheme}://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
}

const serverError = (err: Error) => new Response(`500: Internal Server Error: ${err.message}\n`, { status: 500 });

function openFilesSoftLimit(): number {
  try {
    return getrlimit(RLIMIT_NOFILE).cur;
  } catch {
    return 1024;
  }
}

/**
 * The plain main port when it serves the container-access handlers: node:http on the accepted
 * socket (upgrade requests for the streaming endpoints get the socket; a logs -f is not cut by
 * Bun.serve's 10 s idle timeout while the container is quiet).
 */
function frontedServer(
  hostname: string,
  port: number,
  fetch: Fetch,
  upgrade: UpgradeHook | undefined,
  limits: ConnectionLimits,
  onRefused: (cap: "server" | "client") => void,
): Promise<{ port: number; stop(): Promise<void> }> {
  return startSecureServer({
    hostname,
    port,
    upgrade,
    handler: (req) => fetch(req),
    onError: serverError,
    limits,
    onRefused,
  });
}

/** The main port over TLS with the auth filter in front of the routes (and of upgrade requests). */
async function secureServer(
  hostname: string,
  port: number,
  fetch: Fetch,
  secure: SecureServing,
  limits: ConnectionLimits,
  onRefused: (cap: "server" | "client") => void,
  upgrade?: UpgradeHook,
): Promise<{ port: number; stop(): Promise<void> }> {
  const dynamic = secure.certificates;
  const initial = dynamic?.current();
  const [cert, key, clientCA] = await Promise.all([
    dynamic ? initial?.certPem : readFile(secure.certFile),
    dynamic ? initial?.keyPem : readFile(secure.keyFile),
    secure.clientCAFile ? readFile(secure.clientCAFile) : undefined,
  ]);
  const server = await startSecureServer({
    hostname,
    port,
    cert,
    key,
    tls: true,
    clientCA,
    minVersion: secure.minVersion,
    ciphers: secure.ciphers,
    upgrade,
    handler: withAuth(secure.auth, fetch),
    onError: serverError,
    limits,
    onRefused,
  });
  if (!dynamic) return server;
  const unsubscribe = dynamic.subscribe((p) => {
    server.setCertificate(p.certPem, p.keyPem);
    log.info(`Serving with the rotated certificate ${kv({ port: server.port })}`);
  });
  // One issued while the listener was starting.
  const latest = dynamic.current();
  if (latest && latest !== initial) server.setCertificate(latest.certPem, latest.keyPem);
  return { port: server.port, stop: () => (unsubscribe(), server.stop()) };
}

/**
 * Whether the main port serves the handlers that reach into containers and logs: always behind the
 * auth filter; on the plain loopback port (nobody authenticated, any local process may connect)
 * only with --unsafe-loopback-debug-handlers. Says so in the log either way.
 */
function containerAccessOnMain(cfg: ListenConfig, debugging: boolean): boolean {
  if (cfg.secure) {
    if (cfg.unsafeLoopbackDebugHandlers) log.info("--unsafe-loopback-debug-handlers has no effect: the main port is TLS with authentication and authorization");
    return true;
  }
  if (!debugging) return false;
  if (cfg.unsafeLoopbackDebugHandlers) {
    log.warn(
      `main server: --unsafe-loopback-debug-handlers: exec, attach, portForward, run, containerLogs and logs are served without authentication to every local process ${kv({ port: cfg.port })}`,
    );
    return true;
  }
  log.info(
    "main server: plain HTTP on loopback without authentication: exec, attach, portForward, run, containerLogs and logs answer 403 (serve TLS, or pass --unsafe-loopback-debug-handlers)",
  );
  return false;
}

export async function startServers(cfg: ListenConfig, providers: ServerProviders): Promise<RunningServers> {
  const started: { info: ListeningServer; server: { stop(force?: boolean): unknown } }[] = [];
  const observer = createHttpMetrics(providers.metrics);
  const SERVER_TYPE: Record<ServerName, ServerType> = { healthz: "healthz", main: "readwrite", "read-only": "readonly" };
  const limits = cfg.connectionLimits ?? defaultConnectionLimits(openFilesSoftLimit());
  const refused = providers.metrics.counter({
    name: "bunlet_http_connections_refused_total",
    help: "Connections closed at accept because the server's (cap=server) or the client address's (cap=client) connection cap was reached",
    labelNames: ["server_type", "cap"],
  });

  async function listen(name: ServerName, hostname: string, port: number, routes: Route[], secure?: SecureServing, containerAccess = false): Promise<void> {
    const observe = observer(SERVER_TYPE[name]);
    const fetch = createRouter(routes, { name, observe });
    // exec/attach/portForward upgrade requests: main port with the debugging handlers only, as upstream.
    const upgrade = containerAccess && providers.streaming ? createStreamingUpgrade({ host: providers.streaming, auth: secure?.auth, observe }) : undefined;
    let server: { port: number | undefined; stop(force?: boolean): unknown };
    try {
      const onRefused = (cap: "server" | "client") => refused.inc({ server_type: SERVER_TYPE[name], cap });
      if (secure) server = await secureServer(hostname, port, fetch, secure, limits, onRefused, upgrade);
      else
        server = containerAccess
          ? await frontedServer(hostname, port, fetch, upgrade, limits, onRefused)
          : await startPlainServer({ hostname, port, name, fetch, error: serverError, limits, onRefused });
    } catch (err) {
      throw new ListenError(`failed to listen on ${hostname}:${port} for the ${name} server: ${err instanceof Error ? err.message : String(err)}`);
    }
    const actualPort = server.port ?? port;
    const info: ListeningServer = { name, hostname, port: actualPort, url: urlOf(secure ? "https" : "http", hostname, actualPort) };
    started.push({ info, server });
    log.info(
      `Starting to listen ${kv({ server: name, address: hostname, port: actualPort, requestedPort: port !== actualPort ? port : undefined, tls: secure ? true : undefined, maxConnections: limits.maxConnections, maxPerClient: limits.maxPerClient })}`,
    );
  }

  try {
    if (cfg.healthzPort > 0) await listen("healthz", cfg.healthzBindAddress, cfg.healthzPort, healthzRoutes(providers));
    if (cfg.enableServer !== false) {
      // Beyond loopback only with TLS + authn/authz, and not when they let everyone in.
      const main = bindAddress(cfg.address, cfg.secure !== undefined && !cfg.secure.allowsEveryone);
      if (main.reason) log.warn(`main server: ${main.reason}`);
      const debugging = cfg.enableDebuggingHandlers !== false;
      const containerAccess = containerAccessOnMain(cfg, debugging);
      await listen(
        "main",
        main.hostname,
        cfg.port,
        kubeletRoutes(providers, { debuggingHandlers: debugging, containerAccess }),
        cfg.secure,
        debugging && containerAccess,
      );
    }
    if (cfg.readOnlyPort > 0) {
      // The read-only port is plain HTTP by design (upstream too), so the loopback rule always applies.
      // A specific IP is the user's explicit choice for it (upstream serves it on `address`).
      const ro = isUnspecified(cfg.address) ? bindAddress(cfg.address, false, "the read-only server") : { hostname: cfg.address, reason: undefined };
      if (ro.reason) log.info(`read-only server: ${ro.reason}`);
      await listen("read-only", ro.hostname, cfg.readOnlyPort, kubeletRoutes(providers, { debuggingHandlers: false }));
    }
  } catch (err) {
    await Promise.all(started.map((s) => s.server.stop(true)));
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
