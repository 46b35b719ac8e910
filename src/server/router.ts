// Path + method routing as a pure Request → Response function, so the endpoints are tested
// without sockets. Unknown path → 404, known path with another method → 405 + Allow, a throwing
// handler → 500: a bad request never takes the agent down.
import { log, kv } from "../log.ts";

export type Handler = (req: Request, url: URL) => Response | Promise<Response>;

export interface Route {
  path: string;
  /** GET implies HEAD. */
  methods: readonly string[];
  handler: Handler;
  /** Also serves every path below `path` ("/logs" → "/logs/", "/logs/x/y"). */
  prefix?: boolean;
}

export function text(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8", ...headers } });
}

export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** A "%" not followed by two hex digits: net/http refuses such a request URI with 400 before routing. */
export function hasBadEscape(pathname: string): boolean {
  return /%(?![0-9a-fA-F]{2})/.test(pathname);
}

function allowed(route: Route): string[] {
  const m = new Set(route.methods.map((x) => x.toUpperCase()));
  if (m.has("GET")) m.add("HEAD");
  return [...m];
}

/** What the router reports for every request (for request metrics). */
export interface RequestObservation {
  method: string;
  /** The matched route's path, or undefined for an unknown path. */
  route?: string;
  status: number;
  seconds: number;
}

export interface RouterOpts {
  /** Server name for logs. */
  name?: string;
  observe?: (o: RequestObservation) => void;
  nowMs?: () => number;
}

export function createRouter(routes: readonly Route[], opts: RouterOpts | string = {}): (req: Request) => Promise<Response> {
  const { name = "server", observe, nowMs = () => performance.now() } = typeof opts === "string" ? { name: opts } : opts;
  const byPath = new Map(routes.map((r) => [r.path, r]));
  const prefixed = routes.filter((r) => r.prefix);
  const find = (path: string): Route | undefined => byPath.get(path) ?? prefixed.find((r) => path.startsWith(`${r.path}/`));
  const dispatch = async (req: Request, url: URL, route: Route | undefined): Promise<Response> => {
    if (!route) return text("404 page not found\n", 404);
    const methods = allowed(route);
    if (!methods.includes(req.method)) {
      return text(`405: Method Not Allowed\n`, 405, { allow: methods.join(", ") });
    }
    try {
      const res = await route.handler(req, url);
      // HEAD: same status and headers, no body.
      return req.method === "HEAD" ? new Response(null, { status: res.status, headers: res.headers }) : res;
    } catch (err) {
      log.error(`request failed ${kv({ server: name, method: req.method, path: url.pathname, error: String(err) })}`);
      return text(`500: Internal Server Error: ${err instanceof Error ? err.message : String(err)}\n`, 500);
    }
  };
  return async (req) => {
    const start = nowMs();
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return text("400: Bad Request\n", 400);
    }
    if (hasBadEscape(url.pathname)) return text("400: Bad Request\n", 400);
    const route = find(url.pathname);
    const res = await dispatch(req, url, route);
    observe?.({ method: req.method, route: route?.path, status: res.status, seconds: (nowMs() - start) / 1000 });
    return res;
  };
}
