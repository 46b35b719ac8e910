// The streaming endpoints (upstream server.go getExec/getAttach/getPortForward/getRun + proxyStream).
// An upgrade request (SPDY/3.1 or WebSocket) for /exec, /attach or /portForward comes with its raw
// socket (node:http's 'upgrade' event, http-on-socket.ts): the auth filter decides it as any request,
// then the runtime's streaming URL is fetched through the CRI and the connection is spliced onto it.
// The same paths without an upgrade reach the router: the runtime is asked as upstream does, then
// 500 "Upgrade request required". /run runs the command (ExecSync) and returns its output.
import type { Socket } from "node:net";
import { GrpcCode, GrpcError } from "../../cri/grpc.ts";
import type { ClientCertificate } from "../auth/types.ts";
import { authorizeRequest, type KubeletAuth } from "../auth/filter.ts";
import { hasBadEscape, text, type RequestObservation, type Route } from "../router.ts";
import { PodNotFoundError, type StreamingHost } from "./host.ts";
import {
  execCommand,
  parsePortForwardPorts,
  parseStreamOptions,
  parseStreamPath,
  runCommand,
  STREAM_METHODS,
  StreamParamError,
  type StreamTarget,
} from "./params.ts";
import { isWebSocketRequest, toRequest, type RequestHead } from "./request-head.ts";
import { writeFetchResponse, writeRawResponse } from "./raw-response.ts";
import { proxyUpgrade } from "./upgrade-proxy.ts";

type Resolved = { location: string } | { status: number; body: string; headers?: Record<string, string> };

/** Upstream streaming.WriteError: gRPC NotFound → 404, ResourceExhausted → 429, else 500. */
export function streamingError(err: unknown): { status: number; body: string; headers?: Record<string, string> } {
  if (err instanceof PodNotFoundError) return { status: 404, body: err.message };
  if (err instanceof StreamParamError) return { status: 400, body: err.message };
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof GrpcError && err.code === GrpcCode.NOT_FOUND) return { status: 404, body: message };
  if (err instanceof GrpcError && err.code === 8) return { status: 429, body: message, headers: { "retry-after": "10" } };
  return { status: 500, body: message };
}

/** Asks the runtime for the streaming URL of one request. */
export async function resolveStream(host: StreamingHost, t: StreamTarget, q: URLSearchParams, webSocket: boolean): Promise<Resolved> {
  try {
    if (t.kind === "exec") return { location: await host.getExec(t, execCommand(q), parseStreamOptions(q)) };
    if (t.kind === "attach") return { location: await host.getAttach(t, parseStreamOptions(q)) };
    if (t.kind === "portForward") return { location: await host.getPortForward(t, parsePortForwardPorts(q, webSocket)) };
    return { status: 404, body: "404 page not found\n" };
  } catch (err) {
    return streamingError(err);
  }
}

/** The router's side: non-upgrade requests to the streaming paths, and /run. */
export function streamingRoutes(host: StreamingHost): Route[] {
  const notFound = () => text("404 page not found\n", 404);
  const stream: Route["handler"] = async (_req, url) => {
    const t = parseStreamPath(url.pathname);
    if (!t) return notFound();
    const r = await resolveStream(host, t, url.searchParams, false);
    if ("status" in r) return text(r.body, r.status, r.headers);
    return text("Upgrade request required", 500);
  };
  const run: Route["handler"] = async (req, url) => {
    const t = parseStreamPath(url.pathname);
    if (!t) return notFound();
    try {
      const out = await host.runInContainer(t, runCommand(url.searchParams), req.signal);
      // Upstream writes the raw output with writeJSONResponse's content type.
      return new Response(new Uint8Array(out), { headers: { "content-type": "application/json" } });
    } catch (err) {
      const e = streamingError(err);
      return text(e.body, e.status, e.headers);
    }
  };
  return [
    ...(["exec", "attach", "portForward"] as const).map((k) => ({ path: `/${k}`, methods: STREAM_METHODS[k], prefix: true, handler: stream })),
    { path: "/run", methods: STREAM_METHODS.run, prefix: true, handler: run },
  ];
}

/** What the HTTP server calls for an upgrade request, with the connection's socket. */
export interface UpgradeHook {
  /** Whether this request is one the hook serves (others are answered as plain requests). */
  wants(method: string, target: string): boolean;
  serve(socket: Socket, head: RequestHead, early: Buffer, cert: ClientCertificate): Promise<void>;
}

export interface StreamingUpgradeOpts {
  host: StreamingHost;
  /** The main port's auth filter (secure serving); absent on plain loopback HTTP. */
  auth?: KubeletAuth;
  /** Request metrics, reported when the connection ends (upstream observes after the handler returns). */
  observe?: (o: RequestObservation) => void;
  nowMs?: () => number;
}

const UPGRADE_PATHS = /^\/(exec|attach|portForward)\//;

export function createStreamingUpgrade(o: StreamingUpgradeOpts): UpgradeHook {
  return {
    wants: (_method, target) => UPGRADE_PATHS.test(target),
    async serve(socket, head, early, cert) {
      const nowMs = o.nowMs ?? (() => performance.now());
      const start = nowMs();
      let status = 0;
      const route = /^\/[^/?]+/.exec(head.target)?.[0];
      socket.once("close", () => o.observe?.({ method: head.method, route, status, seconds: (nowMs() - start) / 1000 }));
      const refuse = (code: number, body: string, headers?: Record<string, string>) => {
        status = code;
        writeRawResponse(socket, code, body, headers);
      };
      const req = toRequest(head, "http://kubelet");
      if (o.auth) {
        const decided = await authorizeRequest(o.auth, req, cert);
        if ("response" in decided) {
          status = decided.response.status;
          return writeFetchResponse(socket, decided.response);
        }
      }
      const url = new URL(req.url);
      if (hasBadEscape(url.pathname)) return refuse(400, "400: Bad Request\n");
      const t = parseStreamPath(url.pathname);
      if (!t) return refuse(404, "404 page not found\n");
      const methods = STREAM_METHODS[t.kind];
      if (!methods.includes(head.method)) return refuse(405, "405: Method Not Allowed\n", { allow: methods.join(", ") });
      const r = await resolveStream(o.host, t, url.searchParams, isWebSocketRequest(head));
      if ("status" in r) return refuse(r.status, r.body, r.headers);
      status = await proxyUpgrade(socket, head, early, r.location, { clientAddress: socket.remoteAddress });
    },
  };
}
