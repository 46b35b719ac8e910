// Who made a request and what it asks for, in the shapes of k8s.io/apiserver's user.Info and
// authorizer.Attributes, and the two API-server reviews the webhook modes delegate to, with the
// field names of authentication.k8s.io/v1 TokenReview and authorization.k8s.io/v1 SubjectAccessReview.
// The reviews are injected functions: the API client (cluster mode) provides them.

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** authorizer.AttributesRecord for a kubelet API request (always a resource request on nodes). */
export interface Attributes {
  user: UserInfo;
  verb: string;
  namespace: "";
  apiGroup: "";
  apiVersion: "v1";
  resource: "nodes";
  subresource: string;
  name: string;
  resourceRequest: true;
  path: string;
}

/** TokenReviewSpec. */
export interface TokenReviewSpec {
  token: string;
  audiences?: string[];
}

/** TokenReviewStatus. */
export interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  audiences?: string[];
  error?: string;
}

/** Creates a TokenReview on the API server and returns its status; rejects on a transport error. */
export type TokenReviewer = (spec: TokenReviewSpec) => Promise<TokenReviewStatus>;

/** SubjectAccessReviewSpec (resource attributes only: the kubelet never sends non-resource ones). */
export interface SubjectAccessReviewSpec {
  resourceAttributes: {
    namespace: string;
    verb: string;
    group: string;
    version: string;
    resource: string;
    subresource: string;
    name: string;
  };
  user: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

/** SubjectAccessReviewStatus. */
export interface SubjectAccessReviewStatus {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

export type SubjectAccessReviewer = (spec: SubjectAccessReviewSpec) => Promise<SubjectAccessReviewStatus>;

/** The API-server calls webhook authentication/authorization use (from the cluster-mode client). */
export interface AuthClient {
  tokenReview?: TokenReviewer;
  subjectAccessReview?: SubjectAccessReviewer;
}

/** What the TLS layer learnt about the client certificate of the connection a request came on. */
export type ClientCertificate =
  | { present: false }
  | { present: true; verified: true; commonName: string; organizations: string[] }
  | { present: true; verified: false; error: string; subject: string };
