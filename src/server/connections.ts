// Connection caps for the kubelet's listeners (beyond upstream, whose Go servers accept without
// bound: 20,000 half-open connections would take every fd and blind the eviction manager). Each server accepts at most `maxConnections` concurrent connections and at most
// `maxPerClient` from one client address; beyond that a new connection is closed at accept, before
// TLS or HTTP cost anything, and one warning per server per minute says so. A connection that proves
// a client certificate verified against clientCAFile (the API server's kubelet client, which carries
// every tenant's exec and logs -f) is then no longer counted against its address: one tenant's
// long-running streams through the API server must not shut everyone else out of theirs. It still
// counts against the server's cap, the fd protection.
//
// Bun.serve exposes no accept hook, so the plain listeners without the container-access handlers
// (the default loopback main port, healthz, read-only) are a node:net front piping each connection to
// a private Bun.serve on loopback; nothing there depends on who the client is. The TLS listener (and
// the opted-in plain one) accept on node:net/node:tls and serve with node:http on the socket itself.
import net from "node:net";
import type { Server } from "bun";
import { kv, log } from "../log.ts";

export interface ConnectionLimits {
  /** Concurrent connections per server. */
  maxConnections: number;
  /** Concurrent connections per client address per server. */
  maxPerClient: number;
}

/**
 * Defaults from the fd limit: a proxied connection costs up to three fds and three servers may run,
 * so together they stay under half the limit, leaving the rest to the runtime client, cgroup files
 * and the eviction path. At most 4096 per server, 512 per client.
 */
export function defaultConnectionLimits(openFilesLimit: number): ConnectionLimits {
  const maxConnections = Math.max(16, Math.min(4096, Math.floor(openFilesLimit / 18)));
  return { maxConnections, maxPerClient: Math.max(4, Math.min(512, Math.floor(maxConnections / 4))) };
}

export interface ConnectionGate {
  active(): number;
  refused(): number;
  /** The connection from address:port authenticated with a verified client certificate: its address's cap no longer applies to it. */
  exemptFromClientCap(address: string | undefined, port: number | undefined): void;
}

/** Enforces `limits` on `server`'s accepted connections (listen on 'connection', before TLS). */
export function limitConnections(
  server: net.Server,
  name: string,
  limits: ConnectionLimits,
  onRefused?: (cap: "server" | "client") => void,
  nowMs: () => number = Date.now,
): ConnectionGate {
  const perClient = new Map<string, number>();
  /** Open connections by "address:port": their client address, and whether they were exempted. */
  const open = new Map<string, { client: string; exempt: boolean }>();
  const release = (client: string) => {
    const n = (perClient.get(client) ?? 1) - 1;
    if (n <= 0) perClient.delete(client);
    else perClient.set(client, n);
  };
  let active = 0;
  let refused = 0;
  let refusedSinceLog = 0;
  let lastLogMs = -Infinity;
  server.on("connection", (sock: net.Socket) => {
    const client = sock.remoteAddress ?? "unknown";
    const mine = perClient.get(client) ?? 0;
    if (active >= limits.maxConnections || mine >= limits.maxPerClient) {
      refused++;
      refusedSinceLog++;
      sock.destroy();
      onRefused?.(active >= limits.maxConnections ? "server" : "client");
      if (nowMs() - lastLogMs >= 60_000) {
        lastLogMs = nowMs();
        log.warn(
          `connection refused: too many connections ${kv({ server: name, client, fromClient: mine, active, maxConnections: limits.maxConnections, maxPerClient: limits.maxPerClient, refusedSinceLastLog: refusedSinceLog })}`,
        );
        refusedSinceLog = 0;
      }
      return;
    }
    active++;
    perClient.set(client, mine + 1);
    const key = `${client}:${sock.remotePort}`;
    const entry = { client, exempt: false };
    open.set(key, entry);
    sock.once("close", () => {
      active--;
      if (open.get(key) === entry) open.delete(key);
      if (!entry.exempt) release(client);
    });
  });
  return {
    active: () => active,
    refused: () => refused,
    exemptFromClientCap(address, port) {
      const entry = open.get(`${address ?? "unknown"}:${port}`);
      if (!entry || entry.exempt) return;
      entry.exempt = true;
      release(entry.client);
    },
  };
}

export interface PlainServer {
  port: number;
  gate: ConnectionGate;
  stop(force?: boolean): Promise<void>;
}

/** Plain HTTP on hostname:port with the caps; the routes run on a private Bun.serve. */
export async function startPlainServer(o: {
  hostname: string;
  port: number;
  name: string;
  fetch: (req: Request) => Promise<Response>;
  error: (err: Error) => Response;
  limits: ConnectionLimits;
  onRefused?: (cap: "server" | "client") => void;
}): Promise<PlainServer> {
  const inner: Server<unknown> = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: o.fetch, error: o.error });
  const sockets = new Set<net.Socket>();
  const front = net.createServer();
  const gate = limitConnections(front, o.name, o.limits, o.onRefused);
  // Registered after the gate: a refused socket is already destroyed here.
  front.on("connection", (sock: net.Socket) => {
    if (!sock.destroyed) pipe(sock, inner.port!, sockets);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      front.once("error", reject);
      front.listen(o.port, o.hostname, () => {
        front.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    inner.stop(true);
    throw err;
  }
  front.on("error", (e) => log.warn(`listener error ${kv({ server: o.name, error: e.message })}`));
  let stopping: Promise<void> | undefined;
  return {
    port: (front.address() as net.AddressInfo).port,
    gate,
    stop() {
      stopping ??= (async () => {
        const closed = new Promise<void>((r) => front.close(() => r()));
        for (const s of sockets) s.destroy();
        await Promise.all([closed, inner.stop(true)]);
      })();
      return stopping;
    },
  };
}

function pipe(client: net.Socket, innerPort: number, sockets: Set<net.Socket>): void {
  client.pause();
  const back = net.connect({ host: "127.0.0.1", port: innerPort }, () => {
    client.pipe(back);
    back.pipe(client);
    client.resume();
  });
  sockets.add(client);
  sockets.add(back);
  const close = () => {
    sockets.delete(client);
    sockets.delete(back);
    client.destroy();
    back.destroy();
  };
  for (const s of [client, back]) {
    s.on("error", close);
    s.on("close", close);
  }
}
