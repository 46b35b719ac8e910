// kube-apiserver's paths to the kubelet (test infrastructure): the node proxy
// /api/v1/nodes/{name}/proxy/{path} and the pod subresources exec, attach, portforward and log,
// which kube-apiserver turns into kubelet URLs (pkg/registry/core/pod ExecLocation/LogLocation …)
// on the node's address and status.daemonEndpoints.kubeletEndpoint.Port. It authenticates to the
// kubelet with its own client certificate (--kubelet-client-certificate) and does not verify the
// kubelet's serving certificate (no --kubelet-certificate-authority). Plain requests are forwarded
// and their responses streamed back; upgrade requests (SPDY/3.1, WebSocket) are re-issued on a new
// connection to the kubelet and the two sockets spliced (UpgradeAwareHandler).
import https from "node:https";
import tls from "node:tls";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { findResource } from "./resources.ts";
import { ApiStatus, badRequest, notFound } from "./status.ts";
import type { Obj, Store } from "./store.ts";

export interface KubeletClientCert {
  certPem: string;
  keyPem: string;
}

export interface ProxyTarget {
  /** What is authorized: nodes/proxy or pods/<sub>. */
  resource: "nodes" | "pods";
  subresource: string;
  namespace: string;
  name: string;
  host: string;
  port: number;
  /** Path and query on the kubelet. */
  path: string;
}

const NODE_PROXY = /^\/api\/v1\/nodes\/([^/]+)\/proxy(\/.*)?$/;
const POD_SUB = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach|portforward|log)$/;

/** Whether a path is one the proxy serves (before anything is read). */
export function isProxyPath(pathname: string): boolean {
  return NODE_PROXY.test(pathname) || POD_SUB.test(pathname);
}

/** kube-apiserver's preferred address types, kubeadm's order: InternalIP, then Hostname. */
async function kubeletAddress(store: Store, nodeName: string): Promise<{ host: string; port: number }> {
  const node = await store.get(`nodes//${nodeName}`);
  if (!node) throw notFound(findResource("", "v1", "nodes")!, nodeName);
  const addresses: { type: string; address: string }[] = node.status?.addresses ?? [];
  const host = (addresses.find((a) => a.type === "InternalIP") ?? addresses.find((a) => a.type === "Hostname"))?.address;
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  if (!host || !port) throw new ApiStatus(503, "ServiceUnavailable", `no preferred addresses found; known addresses: ${JSON.stringify(addresses)}`);
  return { host, port };
}

/** PodExecOptions/PodAttachOptions booleans → the kubelet's "1" flags under core/v1's Exec*Param names (pkg/registry/core/pod streamParams). */
function streamQuery(q: URLSearchParams, withCommand: boolean): URLSearchParams {
  const out = new URLSearchParams();
  if (withCommand) for (const c of q.getAll("command")) out.append("command", c);
  const names = { stdin: "input", stdout: "output", stderr: "error", tty: "tty" } as const;
  for (const [k, param] of Object.entries(names)) if (q.get(k) === "true" || q.get(k) === "1") out.set(param, "1");
  return out;
}

function containerOf(pod: Obj, q: URLSearchParams): string {
  const asked = q.get("container");
  if (asked) return asked;
  const names: string[] = (pod.spec?.containers ?? []).map((c: Obj) => c.name);
  if (names.length === 1) return names[0]!;
  throw badRequest(`a container name must be specified for pod ${pod.metadata.name}, choose one of: [${names.join(" ")}]`);
}

export async function resolveProxyTarget(store: Store, url: URL): Promise<ProxyTarget | undefined> {
  const node = NODE_PROXY.exec(url.pathname);
  if (node) {
    const name = decodeURIComponent(node[1]!);
    return { resource: "nodes", subresource: "proxy", namespace: "", name, ...(await kubeletAddress(store, name)), path: `${node[2] ?? "/"}${url.search}` };
  }
  const m = POD_SUB.exec(url.pathname);
  if (!m) return undefined;
  const [ns, name, sub] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), m[3]!];
  const pod = await store.get(`pods/${ns}/${name}`);
  if (!pod) throw notFound(findResource("", "v1", "pods")!, name);
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) throw badRequest(`pod ${name} does not have a host assigned`);
  const at = await kubeletAddress(store, nodeName);
  const q = url.searchParams;
  const seg = (s: string) => encodeURIComponent(s);
  let path: string;
  if (sub === "exec") path = `/exec/${seg(ns)}/${seg(name)}/${seg(containerOf(pod, q))}?${streamQuery(q, true)}`;
  else if (sub === "attach") path = `/attach/${seg(ns)}/${seg(name)}/${seg(containerOf(pod, q))}?${streamQuery(q, false)}`;
  else if (sub === "portforward") {
    const ports = new URLSearchParams(
      q
        .getAll("ports")
        .flatMap((p) => p.split(","))
        .map((p) => ["port", p]),
    );
    path = `/portForward/${seg(ns)}/${seg(name)}${ports.size ? `?${ports}` : ""}`;
  } else {
    const logQ = new URLSearchParams();
    for (const k of ["follow", "previous", "timestamps", "sinceSeconds", "sinceTime", "tailLines", "limitBytes"]) {
      const v = q.get(k);
      if (v !== null) logQ.set(k, v);
    }
    path = `/containerLogs/${seg(ns)}/${seg(name)}/${seg(containerOf(pod, q))}${logQ.size ? `?${logQ}` : ""}`;
  }
  return { resource: "pods", subresource: sub, namespace: ns, name, ...at, path };
}

const HOP = new Set(["host", "authorization", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"]);

/** A plain request: forwarded to the kubelet, the response (status, headers, streamed body) relayed. */
export function proxyRequest(req: IncomingMessage, res: ServerResponse, t: ProxyTarget, cert: KubeletClientCert): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
  const up = https.request(
    { host: t.host, port: t.port, method: req.method, path: t.path, headers, cert: cert.certPem, key: cert.keyPem, rejectUnauthorized: false },
    (r) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(r.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
      res.writeHead(r.statusCode ?? 502, out);
      r.pipe(res);
    },
  );
  up.on("error", (e) => {
    if (!res.headersSent) res.writeHead(503, { "content-type": "application/json" });
    res.end(JSON.stringify(new ApiStatus(503, "ServiceUnavailable", `error trying to reach service: ${e.message}`).body()));
  });
  res.on("close", () => up.destroy());
  req.pipe(up);
}

/** An upgrade request: a new TLS connection to the kubelet, the request re-issued, then both sockets spliced. */
export function proxyUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, t: ProxyTarget, cert: KubeletClientCert): void {
  const backend = tls.connect({ host: t.host, port: t.port, cert: cert.certPem, key: cert.keyPem, rejectUnauthorized: false }, () => {
    const lines = [`${req.method} ${t.path} HTTP/1.1`, `Host: ${t.host}:${t.port}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const k = req.rawHeaders[i]!;
      if (k.toLowerCase() === "host" || k.toLowerCase() === "authorization") continue;
      lines.push(`${k}: ${req.rawHeaders[i + 1]}`);
    }
    backend.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length) backend.write(head);
    backend.pipe(socket);
    socket.pipe(backend);
  });
  const close = () => {
    backend.destroy();
    socket.destroy();
  };
  backend.on("error", (e) => {
    if (!socket.destroyed && backend.bytesRead === 0) {
      const body = JSON.stringify(new ApiStatus(503, "ServiceUnavailable", `error dialing backend: ${e.message}`).body());
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    backend.destroy();
  });
  backend.on("close", close);
  socket.on("close", close);
  socket.on("error", close);
}
