// TokenReview (authentication.k8s.io/v1) and SubjectAccessReview (authorization.k8s.io/v1) as
// kube-apiserver answers a kubelet's webhook authenticator and authorizer (test double):
//   - TokenReview: the tokens the double itself accepts (admin token, bootstrap tokens, TokenRequest
//     service-account tokens it signed) → status.user; anything else → authenticated false. Nothing
//     is stored (the create verb only answers).
//   - SubjectAccessReview: RBAC reduced to what the tests on the double need: system:masters may do
//     anything; everyone else is denied with no opinion (allowed false), as RBAC answers "no RBAC
//     policy matched". Reviews of real RBAC are proven against the real control plane
//     (test/e2e/kubeadm-auth.test.ts).
import { badRequest } from "./status.ts";
import type { AuthConfig, User } from "./auth.ts";
import type { Obj } from "./store.ts";
import type { TokenIssuer } from "./serviceaccounts.ts";

export interface ReviewConfig {
  auth: AuthConfig;
  tokens: TokenIssuer;
}

function tokenUser(token: string, cfg: ReviewConfig): User | undefined {
  if (token === cfg.auth.adminToken) return { name: "kubernetes-admin", groups: ["system:masters", "system:authenticated"] };
  if (cfg.auth.bootstrapTokens.has(token)) return { name: `system:bootstrap:${token.slice(0, 6)}`, groups: ["system:bootstrappers", "system:authenticated"] };
  const claims = cfg.tokens.verify(token);
  if (!claims || (claims.exp && claims.exp * 1000 < Date.now())) return undefined;
  const ns = claims["kubernetes.io"]?.namespace;
  return {
    name: claims.sub,
    uid: claims["kubernetes.io"]?.serviceaccount?.uid,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
  };
}

/** POST /apis/authentication.k8s.io/v1/tokenreviews. */
export function reviewToken(body: Obj | undefined, cfg: ReviewConfig): { code: number; body: unknown } {
  if (body?.kind !== "TokenReview") throw badRequest(`expected TokenReview, got ${body?.kind}`);
  const token: string = body.spec?.token ?? "";
  const user = token ? tokenUser(token, cfg) : undefined;
  const status = user
    ? { authenticated: true, user: { username: user.name, ...(user.uid ? { uid: user.uid } : {}), groups: user.groups }, audiences: body.spec?.audiences ?? [] }
    : { user: {}, error: "[invalid bearer token, token lookup failed]" };
  // kube-apiserver answers with the review it was sent (spec included) and the status filled in.
  return {
    code: 201,
    body: { kind: "TokenReview", apiVersion: "authentication.k8s.io/v1", metadata: { creationTimestamp: null }, spec: body.spec ?? {}, status },
  };
}

/** POST /apis/authorization.k8s.io/v1/subjectaccessreviews. */
export function reviewAccess(body: Obj | undefined): { code: number; body: unknown } {
  if (body?.kind !== "SubjectAccessReview") throw badRequest(`expected SubjectAccessReview, got ${body?.kind}`);
  const spec = body.spec ?? {};
  const groups: string[] = spec.groups ?? [];
  const status = groups.includes("system:masters") ? { allowed: true, reason: "" } : { allowed: false };
  return { code: 201, body: { kind: "SubjectAccessReview", apiVersion: "authorization.k8s.io/v1", metadata: { creationTimestamp: null }, spec, status } };
}
