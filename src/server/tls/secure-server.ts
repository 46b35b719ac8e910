// The kubelet's HTTPS listener. node:tls terminates TLS (Bun.serve cannot tell a handler which
// client certificate a connection presented; node:tls can: getPeerCertificate + authorized, checked
// against the client CA by OpenSSL) and node:http serves the requests on that very socket
// (http-on-socket.ts), so each request carries its own connection's identity, and upgrade requests
// for the streaming endpoints get the socket itself. Without cert/key the front is plain TCP (the
// loopback main port when it serves the streaming endpoints).
import net from "node:net";
import tls from "node:tls";
import type { ClientCertificate } from "../auth/types.ts";
import { limitConnections, type ConnectionLimits } from "../connections.ts";
import { createHttpOnSocket } from "../http-on-socket.ts";
import type { UpgradeHook } from "../streaming/handler.ts";
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

/** Go's pkix.Name.FillFromRDNSequence keeps the last CommonName of a subject with several. */
function lastCommonName(v: string | string[] | undefined): string {
  return Array.isArray(v) ? (v.at(-1) ?? "") : (v ?? "");
}

/** What the handshake proved about the client certificate. */
export function peerIdentity(socket: tls.TLSSocket, requested: boolean): ClientCertificate {
  if (!requested) return { present: false };
  const pc = socket.getPeerCertificate() as PeerCert;
  if (!pc?.subject || Object.keys(pc).length === 0) return { present: false };
  const subject = pc.subject;
  if (!socket.authorized) {
    const text = Object.entries(subject)
      .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("+") : v}`)
      .join(",");
    return { present: true, verified: false, error: String(socket.authorizationError ?? "unknown authority"), subject: text };
  }
  const o = subject.O;
  return { present: true, verified: true, commonName: lastCommonName(subject.CN), organizations: Array.isArray(o) ? [...o] : o ? [o] : [] };
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
  const http = createHttpOnSocket({ handler: o.handler, onError: o.onError, upgrade: o.upgrade });
  const sockets = new Set<net.Socket>();
  const onConnection = (t: net.Socket, identity: ClientCertificate) => {
    sockets.add(t);
    t.on("close", () => sockets.delete(t));
    t.on("error", () => t.destroy());
    http.serve(t, identity);
  };
  const context = { ca: o.clientCA, minVersion: o.minVersion, ciphers: o.ciphers };
  let hasCert = o.cert !== undefined && o.key !== undefined;
  const useTls = o.tls === true || hasCert;
  const front: net.Server = useTls
    ? tls.createServer(
        // A client stuck in the handshake is let go after 10 s (node's default is 120 s).
        {
          allowHalfOpen: true,
          handshakeTimeout: 10_000,
          ...context,
          ...(hasCert ? { cert: o.cert, key: o.key } : {}),
          requestCert: o.clientCA !== undefined,
          rejectUnauthorized: false,
        },
        (t) => {
          const identity = peerIdentity(t, o.clientCA !== undefined);
          // The API server's connections (a verified client certificate) leave their address's cap.
          if (identity.present && identity.verified) gate?.exemptFromClientCap(t.remoteAddress, t.remotePort);
          onConnection(t, identity);
        },
      )
    : net.createServer({ allowHalfOpen: true }, (s) => onConnection(s, { present: false }));
  const gate = o.limits ? limitConnections(front, "main", o.limits, o.onRefused) : undefined;
  // A failed handshake (plain HTTP on the TLS port, a bad version) only costs that connection.
  let warnedNoCert = false;
  front.on("tlsClientError", (_err, socket) => {
    if (!hasCert && !warnedNoCert) {
      warnedNoCert = true;
      log.warn(
        `TLS handshake refused: no serving certificate available for the kubelet (serverTLSBootstrap: waiting for the CSR's approval) ${kv({ port: (front.address() as net.AddressInfo | null)?.port })}`,
      );
    }
    socket.destroy();
  });
  await listenAsync(front, o.port, o.hostname);
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
        await closed;
      })();
      return stopping;
    },
  };
}
