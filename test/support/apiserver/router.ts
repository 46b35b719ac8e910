// URL → (resource, namespace, name, subresource) and verb dispatch, as kube-apiserver's request
// info resolver splits /api/v1/… and /apis/<group>/<version>/… paths.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import { authenticate, authorize, type AuthConfig, type User } from "./auth.ts";
import { apiGroupList, apiVersions, findResource, resourceList, VERSION_INFO, RESOURCES } from "./resources.ts";
import * as rest from "./rest.ts";
import { ApiStatus, badRequest } from "./status.ts";
import type { Obj, Store } from "./store.ts";
import { serveWatch, type WatchOpts } from "./watch.ts";
import { createToken, type TokenIssuer } from "./serviceaccounts.ts";
import { authorizeNodeObject } from "./node-authorizer.ts";
import { admitCreate } from "./admission.ts";
import { isProxyPath, proxyRequest, proxyUpgrade, resolveProxyTarget, type KubeletClientCert, type ProxyTarget } from "./proxy.ts";
import type { Duplex } from "node:stream";
import { reviewAccess, reviewToken, type ReviewConfig } from "./reviews.ts";

export interface RouterDeps {
  store: Store;
  auth: AuthConfig;
  watch: WatchOpts;
  serverAddress(): string;
  /** Signs TokenRequest tokens (serviceaccounts/<name>/token). */
  tokens: TokenIssuer;
  /** The certificate the double presents to kubelets (node proxy, pods/exec|attach|portforward|log). */
  kubeletClient?: KubeletClientCert;
  /** TokenReview / SubjectAccessReview answers (reviews.ts). */
  reviews: ReviewConfig;
  /** Every authenticated request, for tests that count what a client sent. */
  onRequest?(r: { method: string; path: string; user: string; userAgent?: string; upgrade?: string }): void;
}

function parseTarget(segs: string[], group: string, version: string): rest.Target | undefined {
  let ns = "";
  if (segs[0] === "namespaces" && segs.length >= 3 && RESOURCES.some((r) => r.namespaced && r.resource === segs[2] && r.group === group)) {
    ns = segs[1]!;
    segs = segs.slice(2);
  }
  const def = findResource(group, version, segs[0] ?? "");
  if (!def || segs.length > 3) return undefined;
  return { def, ns, name: segs[1], sub: segs[2] };
}

const VERB: Record<string, string> = { POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" };

function discovery(path: string, deps: RouterDeps): unknown {
  if (path === "/version") return VERSION_INFO;
  if (path === "/api") return apiVersions(deps.serverAddress());
  if (path === "/apis") return apiGroupList();
  if (path === "/healthz" || path === "/livez" || path === "/readyz") return "ok";
  const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (m) return m[1] ? resourceList("", "v1") : resourceList(m[2]!, m[3]!);
  return undefined;
}

async function dispatch(req: IncomingMessage, res: ServerResponse, user: User, body: unknown, deps: RouterDeps): Promise<rest.Reply | "streaming"> {
  const url = new URL(req.url ?? "/", "https://x");
  const q = url.searchParams;
  const disc = discovery(url.pathname, deps);
  if (disc !== undefined) return { code: 200, body: disc };
  const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))\/(.+)$/.exec(url.pathname);
  const t = m ? parseTarget(m[4]!.split("/").filter(Boolean), m[1] ? "" : m[2]!, m[1] ?? m[3]!) : undefined;
  if (!t) throw new ApiStatus(404, "NotFound", "the server could not find the requested resource");
  const isWatch = q.get("watch") === "true" || q.get("watch") === "1";
  const verb = req.method === "GET" ? (isWatch ? "watch" : t.name ? "get" : "list") : (VERB[req.method ?? ""] ?? "unknown");
  authorize(user, verb, t.def, t.ns, t.name, t.sub);
  await authorizeNodeObject(deps.store, user, verb, t.def.resource, t.ns, t.name, t.sub, q);
  if (t.sub && !t.def.subresources.includes(t.sub)) throw new ApiStatus(404, "NotFound", "the server could not find the requested resource");
  const accept = req.headers.accept;
  if (t.sub === "token") {
    if (verb !== "create") throw new ApiStatus(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
    return createToken(deps.store, deps.tokens, t.ns, t.name!, body as Obj | undefined);
  }
  if (t.sub === "eviction") {
    if (verb !== "create") throw new ApiStatus(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
    return rest.evict(deps.store, t, body as Obj | undefined);
  }
  if (t.def.resource === "tokenreviews" || t.def.resource === "subjectaccessreviews") {
    if (verb !== "create" || t.name) throw new ApiStatus(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
    return t.def.resource === "tokenreviews" ? reviewToken(body as Obj | undefined, deps.reviews) : reviewAccess(body as Obj | undefined);
  }
  switch (verb) {
    case "watch":
      await serveWatch(deps.store, t, q, res, deps.watch);
      return "streaming";
    case "list":
      return rest.list(deps.store, t, q, accept);
    case "get":
      return rest.get(deps.store, t, accept);
    case "create":
      if (t.name) break;
      await admitCreate(user, t.def, body as Obj, (n) => deps.store.get(`nodes//${n}`));
      return rest.create(deps.store, t, body as Obj, user);
    case "update":
      if (!t.name) break;
      return rest.update(deps.store, t, body as Obj);
    case "patch":
      if (!t.name) break;
      return rest.patch(deps.store, t, body, req.headers["content-type"] ?? "");
    case "delete":
      if (!t.name) break;
      return rest.remove(deps.store, t, body as Obj | undefined);
  }
  throw new ApiStatus(405, "MethodNotAllowed", `the server does not allow this method on the requested resource`);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`error decoding request body: ${(e as Error).message}`);
  }
}

/** Authorizes and locates a request for the kubelet (nodes/proxy, pods/exec …). */
async function proxyTarget(req: IncomingMessage, user: User, deps: RouterDeps): Promise<ProxyTarget> {
  const url = new URL(req.url ?? "/", "https://x");
  const t = await resolveProxyTarget(deps.store, url);
  if (!t) throw new ApiStatus(404, "NotFound", "the server could not find the requested resource");
  authorize(user, req.method === "GET" ? "get" : (VERB[req.method ?? ""] ?? "unknown"), findResource("", "v1", t.resource), t.namespace, t.name, t.subresource);
  if (!deps.kubeletClient) throw new ApiStatus(503, "ServiceUnavailable", "no kubelet client certificate configured");
  return t;
}

/** The server's "upgrade" listener: upgrade requests to the kubelet, spliced; anything else refused. */
export function createUpgradeHandler(deps: RouterDeps) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on("error", () => {});
    const refuse = (e: unknown) => {
      const st = e instanceof ApiStatus ? e : new ApiStatus(500, "InternalError", `Internal error occurred: ${(e as Error).message}`);
      const body = JSON.stringify(st.body());
      socket.end(
        `HTTP/1.1 ${st.code} ${st.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    void (async () => {
      const user = authenticate(socket as TLSSocket, req.headers.authorization, deps.auth);
      const protocol = req.headers["sec-websocket-protocol"];
      deps.onRequest?.({
        method: req.method ?? "",
        path: req.url ?? "",
        user: user.name,
        userAgent: req.headers["user-agent"],
        upgrade: `${req.headers.upgrade ?? ""}${protocol ? ` ${protocol}` : ""}`,
      });
      if (!isProxyPath(new URL(req.url ?? "/", "https://x").pathname))
        throw new ApiStatus(400, "BadRequest", "upgrade is only supported for the kubelet's streaming subresources");
      proxyUpgrade(req, socket, head, await proxyTarget(req, user, deps), deps.kubeletClient!);
    })().catch(refuse);
  };
}

export function createRouter(deps: RouterDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const send = (code: number, body: unknown) => {
      if (res.headersSent) return void res.end();
      res.writeHead(code, { "content-type": "application/json" });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    };
    try {
      const user = authenticate(req.socket as TLSSocket, req.headers.authorization, deps.auth);
      deps.onRequest?.({ method: req.method ?? "", path: req.url ?? "", user: user.name, userAgent: req.headers["user-agent"] });
      if (isProxyPath(new URL(req.url ?? "/", "https://x").pathname)) return proxyRequest(req, res, await proxyTarget(req, user, deps), deps.kubeletClient!);
      const body = await readBody(req);
      const r = await dispatch(req, res, user, body, deps);
      if (r !== "streaming") send(r.code, r.body);
    } catch (e) {
      if (e instanceof ApiStatus) send(e.code, e.body());
      else send(500, new ApiStatus(500, "InternalError", `Internal error occurred: ${(e as Error).message}`).body());
    }
  };
}
