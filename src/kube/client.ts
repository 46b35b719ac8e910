// A small REST client over Bun's fetch (client-go's rest.RESTClient, the part the kubelet uses).
// Why not @kubernetes/client-node: under Bun it silently ignores a custom CA and client certificate
// (its undici dispatcher is a stub there), so TLS goes through fetch's own `tls: { ca, cert, key }`.
//   request → token bucket (kubeAPIQPS/kubeAPIBurst) → credentials (cert, token, tokenFile, exec)
//   → fetch with timeout → 429/5xx with Retry-After retried (client-go: up to 10) → JSON or ApiError
import { readFile } from "node:fs/promises";
import type { z } from "zod";
import type { Clock } from "../clock.ts";
import { ApiError } from "./errors.ts";
import { parseJsonQuietly } from "../json.ts";
import { execCredentialSource } from "./exec-credential.ts";
import type { RestConfig } from "./kubeconfig.ts";
import { unlimited, type RateLimiter } from "./rate-limiter.ts";

export interface RequestOpts<T> {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Absolute API path, e.g. /api/v1/nodes/n1/status. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Default application/json; patches name their type. */
  contentType?: string;
  /** Validates the response body (zod); without it the parsed JSON is returned as is. */
  schema?: z.ZodType<T>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface KubeClient {
  readonly config: RestConfig;
  request<T = unknown>(opts: RequestOpts<T>): Promise<T>;
  /** A streaming GET (watch); the caller reads res.body. Errors as request(). */
  stream(opts: Omit<RequestOpts<never>, "schema" | "body">): Promise<Response>;
  /** New client credentials (cert rotation); later requests use them. */
  setClientCertificate(certPem: string, keyPem: string): void;
}

export interface ClientOpts {
  clock: Clock;
  rateLimiter?: RateLimiter;
  /** Per-request timeout (client-go rest.Config.Timeout); 0 = none. */
  timeoutMs?: number;
  userAgent?: string;
  /** Retries after 429/5xx with Retry-After (client-go's default 10). */
  maxRetries?: number;
  /** Told of every attempt (client-go's metrics adapters); the client knows nothing of metrics. */
  observer?: RequestObserver;
}

/** One HTTP attempt as client-go reports it to tools/metrics: RequestResult and RequestLatency. */
export interface RequestAttempt {
  /** HTTP method ("GET", "PATCH", …), client-go's verb. */
  method: string;
  /** host[:port] of the server URL. */
  host: string;
  /** The status code as a string, or "<error>" when no response came (client-go's convention). */
  code: string;
  /** From sending the request to the response headers (a watch: until its stream opened). */
  durationSeconds: number;
}

export interface RequestObserver {
  observe(a: RequestAttempt): void;
}

const TOKEN_FILE_TTL_MS = 60_000; // client-go re-reads tokenFile at most once a minute

function buildUrl(server: string, path: string, query?: RequestOpts<unknown>["query"]): string {
  const u = new URL(server + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
  return u.toString();
}

async function toApiError(res: Response, method: string, path: string): Promise<ApiError> {
  const text = await res.text().catch(() => "");
  let reason = res.statusText || "Unknown";
  let message = text.trim() || `the server responded with the status code ${res.status}`;
  try {
    const s = JSON.parse(text);
    if (s?.kind === "Status") {
      reason = s.reason ?? reason;
      message = s.message ?? message;
    }
  } catch {}
  return new ApiError(res.status, reason, message, method, path);
}

export function createKubeClient(config: RestConfig, opts: ClientOpts): KubeClient {
  const limiter = opts.rateLimiter ?? unlimited;
  const maxRetries = opts.maxRetries ?? 10;
  let cert = config.certPem;
  let key = config.keyPem;
  let tokenFromFile: { token: string; readAtMs: number } | undefined;
  const exec = config.exec ? execCredentialSource(config.exec, config, opts.clock) : undefined;
  const host = URL.canParse(config.server) ? new URL(config.server).host : config.server;

  async function credentials(): Promise<{ token?: string; cert?: string; key?: string }> {
    if (exec) {
      const c = await exec.get();
      return { token: c.token, cert: c.certPem ?? cert, key: c.keyPem ?? key };
    }
    let token = config.token;
    if (!token && config.tokenFile) {
      if (!tokenFromFile || opts.clock.now() - tokenFromFile.readAtMs > TOKEN_FILE_TTL_MS) {
        tokenFromFile = { token: (await readFile(config.tokenFile, "utf8")).trim(), readAtMs: opts.clock.now() };
      }
      token = tokenFromFile.token;
    }
    return { token, cert, key };
  }

  async function send(o: RequestOpts<unknown>, stream: boolean): Promise<Response> {
    const method = o.method ?? "GET";
    const url = buildUrl(config.server, o.path, o.query);
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    for (let attempt = 0, refreshed = false; ; attempt++) {
      await limiter.wait(o.signal);
      const cred = await credentials();
      const headers: Record<string, string> = { accept: "application/json", "user-agent": opts.userAgent ?? "bunlet" };
      if (body !== undefined) headers["content-type"] = o.contentType ?? "application/json";
      if (cred.token) headers.authorization = `Bearer ${cred.token}`;
      const timeoutMs = o.timeoutMs ?? opts.timeoutMs ?? 0;
      const signals = [o.signal, !stream && timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined].filter((s): s is AbortSignal => !!s);
      const started = performance.now();
      const observe = (code: string) => opts.observer?.observe({ method, host, code, durationSeconds: (performance.now() - started) / 1000 });
      const res = await fetch(url, {
        method,
        headers,
        body,
        signal: signals.length ? AbortSignal.any(signals) : undefined,
        tls: {
          ...(config.caPem ? { ca: config.caPem } : {}),
          ...(cred.cert && cred.key ? { cert: cred.cert, key: cred.key } : {}),
          rejectUnauthorized: !config.insecureSkipTLSVerify,
          ...(config.tlsServerName ? { serverName: config.tlsServerName } : {}),
        },
      } as RequestInit).catch((e) => {
        observe("<error>");
        throw e;
      });
      observe(String(res.status));
      if (res.status === 401 && exec && !refreshed) {
        exec.invalidate();
        refreshed = true;
        continue;
      }
      const retryAfter = Number(res.headers.get("retry-after"));
      if ((res.status === 429 || res.status >= 500) && res.headers.has("retry-after") && attempt < maxRetries) {
        await res.body?.cancel();
        await new Promise((r) => opts.clock.setTimeout(() => r(undefined), Math.max(1, retryAfter || 1) * 1000));
        continue;
      }
      if (!res.ok) throw await toApiError(res, method, o.path);
      return res;
    }
  }

  return {
    config,
    async request<T>(o: RequestOpts<T>): Promise<T> {
      const res = await send(o as RequestOpts<unknown>, false);
      const text = await res.text();
      const json = text ? parseJsonQuietly(text, `response to ${o.method ?? "GET"} ${o.path}`) : undefined;
      if (!o.schema) return json as T;
      const parsed = o.schema.safeParse(json);
      if (!parsed.success) {
        const i = parsed.error.issues[0]!;
        throw new Error(`unexpected response from ${o.method ?? "GET"} ${o.path}: field ${i.path.join(".")}: ${i.message}`);
      }
      return parsed.data;
    },
    stream: (o) => send(o as RequestOpts<unknown>, true),
    setClientCertificate(c, k) {
      cert = c;
      key = k;
    },
  };
}
