// The webhook authenticator's and authorizer's calls to the API server (upstream
// cmd/kubelet/app/auth.go BuildAuth: client.AuthenticationV1() and client.AuthorizationV1() of the
// kubelet's own client, handed to DelegatingAuthenticatorConfig / DelegatingAuthorizerConfig):
//   TokenReview         POST /apis/authentication.k8s.io/v1/tokenreviews         → status
//   SubjectAccessReview POST /apis/authorization.k8s.io/v1/subjectaccessreviews  → status
// The client is looked up per call: in API-server mode it exists once the node has credentials (a
// TLS bootstrap may still be waiting for approval); until then a review fails, so a bearer token is
// 401 and an authorization 500, never a fallback to "allowed". Caching is the callers' (authenticate.ts,
// authorize.ts, with the configured TTLs).
import { z } from "zod";
import type { KubeClient } from "../../kube/index.ts";
import type { AuthClient, SubjectAccessReviewSpec, SubjectAccessReviewStatus, TokenReviewSpec, TokenReviewStatus } from "./types.ts";

/** A review that hangs would hold the request, and its connection, for as long: bounded. */
const REVIEW_TIMEOUT_MS = 10_000;

const tokenReviewSchema = z.object({
  status: z
    .object({
      authenticated: z.boolean().optional(),
      user: z
        .object({
          username: z.string().optional(),
          uid: z.string().optional(),
          groups: z.array(z.string()).nullish(),
          extra: z.record(z.string(), z.array(z.string())).nullish(),
        })
        .optional(),
      audiences: z.array(z.string()).nullish(),
      error: z.string().optional(),
    })
    .optional(),
});

const subjectAccessReviewSchema = z.object({
  status: z
    .object({
      allowed: z.boolean().optional(),
      denied: z.boolean().optional(),
      reason: z.string().optional(),
      evaluationError: z.string().optional(),
    })
    .optional(),
});

export class ReviewClientError extends Error {
  override name = "ReviewClientError";
}

function clientOrThrow(client: () => KubeClient | undefined, what: string): KubeClient {
  const c = client();
  if (!c) throw new ReviewClientError(`cannot send a ${what}: the API client is not ready yet (the node has no credentials yet)`);
  return c;
}

/** A review kind: where it is POSTed and the schema of the answer. */
interface ReviewKind<T> {
  kind: "TokenReview" | "SubjectAccessReview";
  apiVersion: string;
  path: string;
  schema: z.ZodType<T>;
}

const TOKEN_REVIEW = {
  kind: "TokenReview",
  apiVersion: "authentication.k8s.io/v1",
  path: "/apis/authentication.k8s.io/v1/tokenreviews",
  schema: tokenReviewSchema,
} as const;
const SUBJECT_ACCESS_REVIEW = {
  kind: "SubjectAccessReview",
  apiVersion: "authorization.k8s.io/v1",
  path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
  schema: subjectAccessReviewSchema,
} as const;

/** POSTs a review with `spec` through the client and returns the answer (its status read by the caller). */
function postReview<T>(client: () => KubeClient | undefined, timeoutMs: number, review: ReviewKind<T>, spec: unknown): Promise<T> {
  const body = { apiVersion: review.apiVersion, kind: review.kind, spec };
  return clientOrThrow(client, review.kind).request({ method: "POST", path: review.path, body, schema: review.schema, timeoutMs });
}

/** TokenReview and SubjectAccessReview through the node's API client (looked up per call). */
export function apiReviews(client: () => KubeClient | undefined, timeoutMs = REVIEW_TIMEOUT_MS): Required<AuthClient> {
  return {
    async tokenReview(spec: TokenReviewSpec): Promise<TokenReviewStatus> {
      const s = (await postReview(client, timeoutMs, TOKEN_REVIEW, spec)).status ?? {};
      return {
        authenticated: s.authenticated,
        user: s.user && { username: s.user.username, uid: s.user.uid, groups: s.user.groups ?? undefined, extra: s.user.extra ?? undefined },
        audiences: s.audiences ?? undefined,
        error: s.error,
      };
    },
    async subjectAccessReview(spec: SubjectAccessReviewSpec): Promise<SubjectAccessReviewStatus> {
      const s = (await postReview(client, timeoutMs, SUBJECT_ACCESS_REVIEW, spec)).status ?? {};
      return { allowed: s.allowed === true, denied: s.denied, reason: s.reason, evaluationError: s.evaluationError };
    },
  };
}
