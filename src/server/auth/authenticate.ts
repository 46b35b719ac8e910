// Request authentication as the kubelet builds it (upstream DelegatingAuthenticatorConfig):
//   union(x509 client certificate, webhook bearer token) → add group system:authenticated
//   → if anonymous is enabled and nothing above answered (and nothing failed): system:anonymous.
// A presented but invalid credential (certificate not signed by clientCAFile, token the
// TokenReview rejects) is an error, never a fallback to anonymous: the request gets 401.
import { createHash } from "node:crypto";
import { createTtlCache } from "./ttl-cache.ts";
import type { ClientCertificate, TokenReviewer, TokenReviewStatus, UserInfo } from "./types.ts";

export const ANONYMOUS_USER = "system:anonymous";
export const UNAUTHENTICATED_GROUP = "system:unauthenticated";
export const AUTHENTICATED_GROUP = "system:authenticated";

export interface AuthnRequest {
  clientCertificate: ClientCertificate;
  /** The Authorization header, if any. */
  authorization?: string | null;
}

/** A user, or none (401), with the reason when a credential was rejected (for the log only). */
export type AuthnResult = { user: UserInfo } | { user?: undefined; error?: string };

export type Authenticator = (req: AuthnRequest) => Promise<AuthnResult>;

export interface AuthenticatorOpts {
  /** authentication.x509.clientCAFile is set: verified client certificates authenticate. */
  x509: boolean;
  /** authentication.webhook.enabled with an API client: bearer tokens go to a TokenReview. */
  tokenReview?: TokenReviewer;
  /** authentication.webhook.cacheTTL in ms. */
  cacheTTLMs: number;
  /** authentication.anonymous.enabled. */
  anonymous: boolean;
  nowMs?: () => number;
}

type Answer = { user: UserInfo } | { error: string } | undefined;

/** x509.CommonNameUserConversion: CN is the user, O the groups. */
function fromCertificate(cert: ClientCertificate): Answer {
  if (!cert.present) return undefined;
  if (!cert.verified) return { error: `verifying certificate ${cert.subject} failed: ${cert.error}` };
  if (cert.commonName === "") return undefined;
  return { user: { name: cert.commonName, groups: [...cert.organizations] } };
}

/** The bearer token of an "Authorization: Bearer <token>" header (upstream bearertoken). */
export function bearerToken(header: string | null | undefined): string | undefined {
  const parts = (header ?? "").trim().split(" ");
  if (parts.length < 2 || parts[0]!.toLowerCase() !== "bearer") return undefined;
  return parts[1] || undefined;
}

function createTokenAuthenticator(review: TokenReviewer, ttlMs: number, nowMs: () => number) {
  const cache = createTtlCache<TokenReviewStatus>(nowMs);
  return async (token: string): Promise<Answer> => {
    const key = createHash("sha256").update(token).digest("hex");
    let status = cache.get(key);
    if (!status) {
      try {
        status = await review({ token });
      } catch (err) {
        return { error: `webhook token review failed: ${err instanceof Error ? err.message : String(err)}` };
      }
      // Errors are not cached (upstream cached token authenticator); answers are.
      cache.set(key, status, ttlMs);
    }
    if (!status.authenticated || !status.user?.username) return { error: status.error ? `invalid bearer token: ${status.error}` : "invalid bearer token" };
    const u = status.user;
    return { user: { name: u.username!, uid: u.uid, groups: [...(u.groups ?? [])], extra: u.extra } };
  };
}

export function createAuthenticator(opts: AuthenticatorOpts): Authenticator {
  const nowMs = opts.nowMs ?? (() => Date.now());
  const token = opts.tokenReview ? createTokenAuthenticator(opts.tokenReview, opts.cacheTTLMs, nowMs) : undefined;
  return async (req) => {
    const errors: string[] = [];
    const answers: (() => Promise<Answer> | Answer)[] = [];
    if (opts.x509) answers.push(() => fromCertificate(req.clientCertificate));
    if (token) {
      const t = bearerToken(req.authorization);
      if (t !== undefined) answers.push(() => token(t));
    }
    for (const a of answers) {
      const r = await a();
      if (r && "user" in r) {
        const groups = r.user.groups.includes(AUTHENTICATED_GROUP) ? r.user.groups : [...r.user.groups, AUTHENTICATED_GROUP];
        return { user: { ...r.user, groups } };
      }
      if (r) errors.push(r.error);
    }
    if (errors.length > 0) return { error: errors.join("; ") };
    if (opts.anonymous) return { user: { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] } };
    return {};
  };
}
