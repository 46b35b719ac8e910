// Service account tokens for projected volumes (upstream pkg/kubelet/token/token_manager.go): a
// TokenRequest (POST serviceaccounts/<sa>/token, bound to the pod) per pod × audience × lifetime,
// cached and fetched again once the token is older than 80 % of its lifetime or 24 h (each less a
// jitter of up to 10 s). A failed refresh keeps serving the cached token until it expires.
// Expired entries are dropped (at most once a minute, on use); a pod's tokens go with it.
import { z } from "zod";
import type { Clock } from "../../clock.ts";
import type { KubeClient } from "../../kube/index.ts";
import { kv, log } from "../../log.ts";
import { podKeyOf } from "../pod-like.ts";

const MAX_TTL_MS = 24 * 3600_000;
const MAX_JITTER_MS = 10_000;

export interface TokenRequestSpec {
  audiences?: string[];
  expirationSeconds: number;
  boundObjectRef: { apiVersion: "v1"; kind: "Pod"; name: string; uid: string };
}

export interface IssuedToken {
  token: string;
  /** Epoch ms. */
  expirationMs: number;
  /** The lifetime the server granted (spec.expirationSeconds of the response). */
  expirationSeconds: number;
}

const tokenRequestResponse = z.object({
  spec: z.object({ expirationSeconds: z.number().int().positive().optional() }).passthrough(),
  status: z.object({ token: z.string().min(1), expirationTimestamp: z.string() }),
});

/** upstream requiresRefresh: past 24 h since issue, or within 20 % of the lifetime of expiry (less `jitterMs`). */
export function requiresRefresh(t: IssuedToken, nowMs: number, jitterMs: number): boolean {
  const iat = t.expirationMs - t.expirationSeconds * 1000;
  if (nowMs > iat + MAX_TTL_MS - jitterMs) return true;
  return nowMs > t.expirationMs - Math.floor((t.expirationSeconds * 20) / 100) * 1000 - jitterMs;
}

export interface TokenManagerOptions {
  client: () => KubeClient | undefined;
  clock: Clock;
  /** Jitter source in [0, 1) (default Math.random). */
  random?: () => number;
}

export interface TokenManager {
  getServiceAccountToken(namespace: string, serviceAccount: string, spec: TokenRequestSpec): Promise<string>;
  /** Drops the tokens bound to a pod. */
  deleteServiceAccountToken(podUid: string): void;
  /** Cache keys (tests). */
  keys(): string[];
}

export function createTokenManager(opts: TokenManagerOptions): TokenManager {
  const cache = new Map<string, IssuedToken & { podUid: string }>();
  const random = opts.random ?? Math.random;
  let lastGcMs = -Infinity;
  /** upstream's cleanup every gcPeriod (1 min): expired tokens dropped (run on use, not on a timer). */
  function collectGarbage(now: number) {
    if (now - lastGcMs < 60_000) return;
    lastGcMs = now;
    for (const [k, t] of cache) if (now > t.expirationMs) cache.delete(k);
  }

  async function request(ns: string, sa: string, spec: TokenRequestSpec): Promise<IssuedToken> {
    const client = opts.client();
    if (!client) throw new Error("cannot use TokenRequest without a kubeClient");
    const body = {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { ...(spec.audiences ? { audiences: spec.audiences } : {}), expirationSeconds: spec.expirationSeconds, boundObjectRef: spec.boundObjectRef },
    };
    const res = await client.request({ method: "POST", path: `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, body, schema: tokenRequestResponse });
    const expirationMs = Date.parse(res.status.expirationTimestamp);
    if (Number.isNaN(expirationMs)) throw new Error(`TokenRequest: status.expirationTimestamp "${res.status.expirationTimestamp}" is not a time`);
    return { token: res.status.token, expirationMs, expirationSeconds: res.spec.expirationSeconds ?? spec.expirationSeconds };
  }

  return {
    async getServiceAccountToken(ns, sa, spec) {
      const key = `${sa}/${ns}/${(spec.audiences ?? []).join(",")}/${spec.expirationSeconds}/${spec.boundObjectRef.uid}`;
      const now = opts.clock.now();
      collectGarbage(now);
      const cached = cache.get(key);
      if (cached && !requiresRefresh(cached, now, Math.floor(random() * (MAX_JITTER_MS / 1000)) * 1000)) return cached.token;
      try {
        const t = await request(ns, sa, spec);
        cache.set(key, { ...t, podUid: spec.boundObjectRef.uid });
        log.info(
          `service account token ${cached ? "refreshed" : "issued"} ${kv({ pod: podKeyOf(ns, spec.boundObjectRef.name), serviceAccount: sa, expiresAt: new Date(t.expirationMs).toISOString() })}`,
        );
        return t.token;
      } catch (e) {
        const msg = (e as Error).message;
        if (!cached) throw new Error(`failed to fetch token: ${msg}`);
        if (now > cached.expirationMs) throw new Error(`token ${key} expired and refresh failed: ${msg}`);
        log.error(`Couldn't update token ${kv({ cacheKey: key, error: msg })}`);
        return cached.token;
      }
    },
    deleteServiceAccountToken(podUid) {
      for (const [k, t] of cache) if (t.podUid === podUid) cache.delete(k);
    },
    keys: () => [...cache.keys()],
  };
}
