// Request authorization (upstream BuildAuthz): AlwaysAllow, or Webhook = a SubjectAccessReview per
// attributes, answers cached for cacheAuthorizedTTL (allowed) / cacheUnauthorizedTTL (otherwise).
// A review that could not be sent or answered is an error (500), as upstream.
import { createTtlCache } from "./ttl-cache.ts";
import type { Attributes, SubjectAccessReviewer, SubjectAccessReviewSpec, SubjectAccessReviewStatus } from "./types.ts";

export type Decision = "allow" | "deny" | "no-opinion";

export interface AuthzResult {
  decision: Decision;
  reason?: string;
}

/** Resolves to a decision; rejects on an authorization error. */
export type Authorizer = (attrs: Attributes) => Promise<AuthzResult>;

export const alwaysAllow: Authorizer = async () => ({ decision: "allow" });

export interface WebhookAuthorizerOpts {
  review: SubjectAccessReviewer;
  cacheAuthorizedTTLMs: number;
  cacheUnauthorizedTTLMs: number;
  nowMs?: () => number;
}

export function subjectAccessReviewSpec(a: Attributes): SubjectAccessReviewSpec {
  return {
    resourceAttributes: {
      namespace: a.namespace,
      verb: a.verb,
      group: a.apiGroup,
      version: a.apiVersion,
      resource: a.resource,
      subresource: a.subresource,
      name: a.name,
    },
    user: a.user.name,
    groups: a.user.groups,
    ...(a.user.uid ? { uid: a.user.uid } : {}),
    ...(a.user.extra ? { extra: a.user.extra } : {}),
  };
}

export function createWebhookAuthorizer(opts: WebhookAuthorizerOpts): Authorizer {
  const cache = createTtlCache<SubjectAccessReviewStatus>(opts.nowMs ?? (() => Date.now()));
  return async (attrs) => {
    const spec = subjectAccessReviewSpec(attrs);
    const key = JSON.stringify(spec);
    let status = cache.get(key);
    if (!status) {
      status = await opts.review(spec);
      cache.set(key, status, status.allowed ? opts.cacheAuthorizedTTLMs : opts.cacheUnauthorizedTTLMs);
    }
    // An evaluationError with neither allowed nor denied is a no-opinion, as upstream's webhook.
    if (status.allowed) return { decision: "allow", reason: status.reason };
    return { decision: status.denied ? "deny" : "no-opinion", reason: status.reason };
  };
}
