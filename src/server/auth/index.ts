// The kubelet API's authentication and authorization (upstream cmd/kubelet/app/auth.go BuildAuth),
// built from the KubeletConfiguration's `authentication`/`authorization` and the API-server reviews
// the cluster mode injects. Without an API client, webhook modes fail with upstream's errors.
import { durationMs } from "../../config/duration.ts";
import type { KubeletConfiguration } from "../../config/kubelet-config.ts";
import { createAuthenticator } from "./authenticate.ts";
import { alwaysAllow, createWebhookAuthorizer } from "./authorize.ts";
import type { KubeletAuth } from "./filter.ts";
import type { AuthClient } from "./types.ts";

export { requestAttributes, isSubpath } from "./attributes.ts";
export { createAuthenticator, bearerToken, ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, type Authenticator } from "./authenticate.ts";
export { alwaysAllow, createWebhookAuthorizer, type Authorizer } from "./authorize.ts";
export { authorizeRequest, withAuth, type KubeletAuth } from "./filter.ts";
export { apiReviews, ReviewClientError } from "./api-reviews.ts";
export type * from "./types.ts";

export class AuthConfigError extends Error {
  override name = "AuthConfigError";
}

type AuthConfig = Pick<KubeletConfiguration, "authentication" | "authorization" | "featureGates">;

export function buildAuth(config: AuthConfig, nodeName: string, client: AuthClient = {}, nowMs?: () => number): KubeletAuth {
  const { authentication: authn, authorization: authz } = config;
  if (authn.webhook.enabled && !client.tokenReview) throw new AuthConfigError("no client provided, cannot use webhook authentication");
  const authenticate = createAuthenticator({
    x509: Boolean(authn.x509.clientCAFile),
    tokenReview: authn.webhook.enabled ? client.tokenReview : undefined,
    cacheTTLMs: durationMs(authn.webhook.cacheTTL),
    anonymous: authn.anonymous.enabled === true,
    nowMs,
  });
  let authorize = alwaysAllow;
  if (authz.mode === "Webhook") {
    if (!client.subjectAccessReview) throw new AuthConfigError("no client provided, cannot use webhook authorization");
    authorize = createWebhookAuthorizer({
      review: client.subjectAccessReview,
      cacheAuthorizedTTLMs: durationMs(authz.webhook.cacheAuthorizedTTL),
      cacheUnauthorizedTTLMs: durationMs(authz.webhook.cacheUnauthorizedTTL),
      nowMs,
    });
  } else if (authz.mode !== "AlwaysAllow") {
    throw new AuthConfigError(`unknown authorization mode ${authz.mode}`);
  }
  return { authenticate, authorize, nodeName, fineGrained: config.featureGates?.KubeletFineGrainedAuthz !== false };
}

/** True when anyone who can connect may do anything: anonymous requests and AlwaysAllow. */
export function allowsEveryone(config: AuthConfig): boolean {
  return config.authentication.anonymous.enabled === true && config.authorization.mode === "AlwaysAllow";
}
