// The reviews webhook authn/authz send through the node's API client (src/server/auth/api-reviews.ts):
// what is POSTed where, how the answer maps, and what happens before the client exists.
import { describe, expect, test } from "bun:test";
import type { KubeClient, RequestOpts } from "../../../src/kube/index.ts";
import { apiReviews, buildAuth, ReviewClientError } from "../../../src/server/auth/index.ts";
import { defaultKubeletConfiguration } from "../../../src/config/defaults.ts";

function fakeClient(answer: (o: RequestOpts<unknown>) => unknown) {
  const sent: RequestOpts<unknown>[] = [];
  const client = {
    async request(o: RequestOpts<unknown>) {
      sent.push(o);
      const raw = answer(o);
      return o.schema ? o.schema.parse(raw) : raw;
    },
  } as unknown as KubeClient;
  return { client, sent };
}

describe("apiReviews", () => {
  test("TokenReview: POST authentication.k8s.io/v1 tokenreviews with the spec; the status comes back", async () => {
    const { client, sent } = fakeClient(() => ({
      kind: "TokenReview",
      status: { authenticated: true, user: { username: "bob", uid: "u1", groups: ["ops"] } },
    }));
    const status = await apiReviews(() => client).tokenReview({ token: "t0k" });
    expect(sent[0]).toMatchObject({
      method: "POST",
      path: "/apis/authentication.k8s.io/v1/tokenreviews",
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token: "t0k" } },
    });
    expect(sent[0]!.timeoutMs).toBeGreaterThan(0);
    expect(status).toMatchObject({ authenticated: true, user: { username: "bob", uid: "u1", groups: ["ops"] } });
  });

  test("SubjectAccessReview: POST authorization.k8s.io/v1 subjectaccessreviews; a missing status is not allowed", async () => {
    const { client, sent } = fakeClient((o) => ((o.body as { spec: { user: string } }).spec.user === "root" ? { status: { allowed: true } } : {}));
    const spec = {
      resourceAttributes: { namespace: "", verb: "get", group: "", version: "v1", resource: "nodes", subresource: "proxy", name: "n" },
      user: "root",
      groups: [],
    };
    expect(await apiReviews(() => client).subjectAccessReview(spec)).toMatchObject({ allowed: true });
    expect(await apiReviews(() => client).subjectAccessReview({ ...spec, user: "eve" })).toMatchObject({ allowed: false });
    expect(sent[0]).toMatchObject({ method: "POST", path: "/apis/authorization.k8s.io/v1/subjectaccessreviews", body: { kind: "SubjectAccessReview", spec } });
  });

  test("before the node has a client (TLS bootstrap pending) a review fails: 401 / authorization error, never allowed", async () => {
    const reviews = apiReviews(() => undefined);
    await expect(reviews.tokenReview({ token: "x" })).rejects.toBeInstanceOf(ReviewClientError);
    const auth = buildAuth(defaultKubeletConfiguration(), "n", reviews);
    expect(await auth.authenticate({ clientCertificate: { present: false }, authorization: "Bearer x" })).toEqual({
      error: expect.stringContaining("API client is not ready"),
    });
    await expect(
      auth.authorize({
        user: { name: "u", groups: [] },
        verb: "get",
        namespace: "",
        apiGroup: "",
        apiVersion: "v1",
        resource: "nodes",
        subresource: "proxy",
        name: "n",
        resourceRequest: true,
        path: "/pods",
      }),
    ).rejects.toThrow("API client is not ready");
  });
});
