// The kubelet's HTTPS listener. Bun.serve cannot tell a handler which client certificate a
// connection presented, node:tls can (getPeerCertificate + authorized, checked against the client
// CA by OpenSSL). So node:tls terminates TLS on the public address and pipes each connection's
// plaintext to a private Bun.serve on loopback, which serves the routes; the identity travels by
// the pipe's local address:port. A direct connection to the private port carries no certificate
// identity, so it is no more than a connection without a client certificate: same authn/authz.
// Without cert/key the front is plain TCP (the loopback main port), so upgrade requests for the
// streaming endpoints are taken off the connection the same way (streaming/front.ts).
import net from "node:net";
import tls from "node:tls";
import type { Server } from "bun";
import type { ClientCertificate } from "../auth/types.ts";
import { limitConnections, type ConnectionLimits } from "../connections.ts";
import { sniffFirstRequest } from "../streaming/front.ts";
import type { UpgradeHook } from "../streaming/handler.ts";
import { writeRawResponse } from "../streaming/raw-response.ts";
import { kv, log } from "../../log.ts";

export interface SecureServerOpts {
  hostname: string;
  port: number;
  /** Absent (with key) ⇒ plain TCP front, unless `tls`. */
  cert?: Buffer | string;
  key?: Buffer | string;
  /** PEM of authentication.x509.clientCAFile; client certificates are requested only with it. */
  clientCA?: Buffer | string;
  /** TLS front even before a certificate exists (serverTLSBootstrap): handshakes fail until setCertificate. */
  tls?: boolean;
  minVersion?: tls.SecureVersion;
  ciphers?: string;
  /** Serves upgrade requests for the streaming endpoints off the raw connection. */
  upgrade?: UpgradeHook;
  /** How long the first request line/head may take before the connection is handed to Bun as is. */
  sniffTimeoutMs?: number;
  handler: (req: Request, cert: ClientCertificate) => Promise<Response>;
  onError?: (err: Error) => Response;
  /** Connection caps, enforced at accept before the handshake. */
  limits?: ConnectionLimits;
  onRefused?: (cap: "server" | "client") => void;
}

export interface SecureServer {
  hostname: string;
  port: number;
  /** New connections are served with this pair (open ones keep theirs), as Go's GetCertificate. */
  setCertificate(cert: Buffer | string, key: Buffer | string): void;
  stop(): Promise<void>;
}

type PeerCert = { subject?: Record<string, string | string[]> } | undefined;

function first(v: string | string[] | undefined): string {
  return Array.isArray(v) ? (v[0] ?? "") : (v ?? "");
}

/** What the handshake proved about the client certificate. */
export function peerIdentity(socket: tls.TLSSocket, requested: boolean): ClientCertificate {
  if (!requested) return { present: false };
  const pc = socket.getPeerCertificate() as PeerCert;
  if (!pc?.subject || Object.keys(pc).length === 0) return { present: false };
  const subject = pc.subject;
  if (!socket.authorized) {
    const text = Object.entries(subject).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("+") : v}`).join(",");
    return { present: true, verified: false, error: String(socket.authorizationError ?? "unknown authority"), subject: text };
  }
  const o = subject.O;
  return { present: true, verified: true, commonName: first(subject.CN), organizations: Array.isArray(o) ? [...o] : o ? [o] : [] };
}

function listenAsync(server: net.Server, port: number, hostname: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

export async function startSecureServer(o: SecureServerOpts): Promise<SecureServer> {
  const identities = new Map<string, ClientCertificate>();
  const inner: Server<unknown> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req, server) {
      const ip = server.requestIP(req);
      const cert = (ip && identities.get(`${ip.address}:${ip.port}`)) || { present: false as const };
      return o.handler(req, cert);
    },
    error: o.onError,
  });
  const sockets = new Set<net.Socket>();
  const onConnection = (t: net.Socket, identity: ClientCertificate) => {
    const upgrade = o.upgrade;
    if (!upgrade) return pipeToInner(t, identity, Buffer.alloc(0), inner.port!, identities, sockets);
    t.on("error", () => t.destroy());
    sockets.add(t);
    t.on("close", () => sockets.delete(t));
    void sniffFirstRequest(t, upgrade, o.sniffTimeoutMs).then(async (r) => {
      if (r.kind === "closed") return void t.destroy();
      if (r.kind === "refuse") return writeRawResponse(t, r.status, r.body);
      if (r.kind === "pass") return pipeToInner(t, identity, r.bytes, inner.port!, identities, sockets);
      try {
        await upgrade.serve(t, r.head, r.early, identity);
      } catch {
        t.destroy();
      }
    });
  };
  const context = { ca: o.clientCA, minVersion: o.minVersion, ciphers: o.ciphers };
  let hasCert = o.cert !== undefined && o.key !== undefined;
  const useTls = o.tls === true || hasCert;
  const front: net.Server = useTls
    ? tls.createServer(
        // A client stuck in the handshake is let go after 10 s (node's default is 120 s).
        { allowHalfOpen: true, handshakeTimeout: 10_000, ...context, ...(hasCert ? { cert: o.cert, key: o.key } : {}), requestCert: o.clientCA !== undefined, rejectUnauthorized: false },
        (t) => onConnection(t, peerIdentity(t, o.clientCA !== undefined)),
      )
    : net.createServer({ allowHalfOpen: true }, (s) => onConnection(s, { present: false }));
  if (o.limits) limitConnections(front, "main", o.limits, o.onRefused);
  // A failed handshake (plain HTTP on the TLS port, a bad version) only costs that connection.
  let warnedNoCert = false;
  front.on("tlsClientError", (_err, socket) => {
    if (!hasCert && !warnedNoCert) {
      warnedNoCert = true;
      log.warn(`TLS handshake refused: no serving certificate available for the kubelet (serverTLSBootstrap: waiting for the CSR's approval) ${kv({ port: (front.address() as net.AddressInfo | null)?.port })}`);
    }
    socket.destroy();
  });
  try {
    await listenAsync(front, o.port, o.hostname);
  } catch (err) {
    inner.stop(true);
    throw err;
  }
  const addr = front.address() as net.AddressInfo;
  let stopping: Promise<void> | undefined;
  return {
    hostname: o.hostname,
    port: addr.port,
    setCertificate(cert, key) {
      if (!useTls) throw new Error("setCertificate on a plain TCP front");
      (front as tls.Server).setSecureContext({ ...context, cert, key });
      hasCert = true;
    },
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

/** How long a connection may stay half-open after the kubelet's side ended (net/http lingers 500 ms). */
const LINGER_MS = 2000;

function pipeToInner(t: net.Socket, identity: ClientCertificate, prefix: Buffer, innerPort: number, identities: Map<string, ClientCertificate>, sockets: Set<net.Socket>): void {
  t.pause();
  let key: string | undefined;
  const back = net.connect({ host: "127.0.0.1", port: innerPort, localAddress: "127.0.0.1" }, () => {
    key = `127.0.0.1:${back.localPort}`;
    identities.set(key, identity);
    if (prefix.length > 0) back.write(prefix);
    // A client that half-closes after its request (FIN) still gets the answer: Bun.serve drops a
    // request whose connection has ended, so the FIN is not passed on; Bun's own keep-alive and idle
    // limits end the connection.
    t.pipe(back, { end: false });
    back.pipe(t);
    t.resume();
  });
  sockets.add(t);
  sockets.add(back);
  const close = () => {
    if (key && identities.get(key) === identity) identities.delete(key);
    sockets.delete(t);
    sockets.delete(back);
    t.destroy();
    back.destroy();
  };
  // Bun closed its side: what it wrote is flushed (pipe ends t gracefully), then the client goes.
  back.on("close", () => {
    if (!t.writableEnded) t.end();
    setTimeout(close, LINGER_MS).unref();
  });
  back.on("error", close);
  t.on("error", close);
  t.on("close", close);
}
