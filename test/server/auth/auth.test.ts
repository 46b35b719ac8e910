import { describe, expect, test } from "bun:test";
import { defaultKubeletConfiguration } from "../../../src/config/defaults.ts";
import {
  authorizeRequest,
  bearerToken,
  buildAuth,
  createAuthenticator,
  createWebhookAuthorizer,
  requestAttributes,
  type ClientCertificate,
  type KubeletAuth,
  type SubjectAccessReviewSpec,
  type TokenReviewSpec,
} from "../../../src/server/auth/index.ts";

const NO_CERT: ClientCertificate = { present: false };
const ALICE: ClientCertificate = { present: true, verified: true, commonName: "alice", organizations: ["devs"] };
const FORGED: ClientCertificate = { present: true, verified: false, error: "self-signed certificate", subject: "CN=mallory" };

describe("request attributes (upstream GetRequestAttributes)", () => {
  const u = { name: "u", groups: [] };
  test.each([
    ["GET", "/stats/summary", ["stats"], "get"],
    ["POST", "/stats/summary", ["stats"], "create"],
    ["GET", "/stats", ["stats"], "get"],
    ["GET", "/metrics", ["metrics"], "get"],
    ["GET", "/metrics/cadvisor", ["metrics"], "get"],
    ["GET", "/metrics/resource", ["metrics"], "get"],
    ["GET", "/logs/syslog", ["log"], "get"],
    ["GET", "/pods", ["pods", "proxy"], "get"],
    ["GET", "/runningpods/", ["pods", "proxy"], "get"],
    ["GET", "/healthz", ["healthz", "proxy"], "get"],
    ["GET", "/configz", ["configz", "proxy"], "get"],
    ["POST", "/exec/ns/pod/c", ["proxy"], "create"],
    ["GET", "/containerLogs/ns/pod/c", ["proxy"], "get"],
    ["GET", "/statsfoo", ["proxy"], "get"],
    ["HEAD", "/pods", ["pods", "proxy"], ""],
    ["DELETE", "/debug/eviction", ["proxy"], "delete"],
  ])("%s %s → nodes/%j verb %j", (method, path, subs, verb) => {
    const attrs = requestAttributes(u, method, path, "node-1");
    expect(attrs.map((a) => a.subresource)).toEqual(subs);
    for (const a of attrs) expect(a).toMatchObject({ verb, resource: "nodes", name: "node-1", apiVersion: "v1", namespace: "", apiGroup: "", path });
  });

  test("without KubeletFineGrainedAuthz /configz asks for nodes/proxy only", () => {
    expect(requestAttributes(u, "GET", "/configz", "n", false).map((a) => a.subresource)).toEqual(["proxy"]);
  });
});

describe("bearerToken", () => {
  test.each([
    ["Bearer abc", "abc"],
    ["bearer abc", "abc"],
    ["  Bearer abc  ", "abc"],
    ["Basic abc", undefined],
    ["Bearer", undefined],
    ["Bearer ", undefined],
    [null, undefined],
  ])("%j → %j", (h, t) => expect(bearerToken(h)).toBe(t));
});

describe("authentication (x509 ∪ token webhook, then anonymous)", () => {
  const reviews: TokenReviewSpec[] = [];
  const tokenReview = async (spec: TokenReviewSpec) => {
    reviews.push(spec);
    if (spec.token === "good")
      return { authenticated: true, user: { username: "system:serviceaccount:kube-system:metrics", uid: "1", groups: ["system:serviceaccounts"] } };
    if (spec.token === "boom") throw new Error("connection refused");
    return { authenticated: false, error: "token expired" };
  };
  const authn = (anonymous: boolean) => createAuthenticator({ x509: true, tokenReview, cacheTTLMs: 120_000, anonymous });

  test.each([
    // cert, Authorization, anonymous → user or undefined, groups
    [ALICE, null, false, "alice", ["devs", "system:authenticated"]],
    [ALICE, "Bearer bad", false, "alice", ["devs", "system:authenticated"]],
    [NO_CERT, "Bearer good", false, "system:serviceaccount:kube-system:metrics", ["system:serviceaccounts", "system:authenticated"]],
    [NO_CERT, null, true, "system:anonymous", ["system:unauthenticated"]],
    [NO_CERT, null, false, undefined, undefined],
    // A presented credential that fails is a 401 even with anonymous on (FailOnError).
    [FORGED, null, true, undefined, undefined],
    [NO_CERT, "Bearer bad", true, undefined, undefined],
    [NO_CERT, "Bearer boom", true, undefined, undefined],
    // Not a bearer header at all: no credential, so anonymous.
    [NO_CERT, "Basic Zm9vOmJhcg==", true, "system:anonymous", ["system:unauthenticated"]],
  ] as const)("cert=%p auth=%p anonymous=%p → %p", async (cert, header, anonymous, name, groups) => {
    const r = await authn(anonymous)({ clientCertificate: cert, authorization: header });
    expect(r.user?.name).toBe(name);
    expect(r.user?.groups).toEqual(groups as string[] | undefined);
  });

  test("rejections say why (for the log)", async () => {
    expect(await authn(true)({ clientCertificate: FORGED })).toEqual({ error: "verifying certificate CN=mallory failed: self-signed certificate" });
    expect(await authn(true)({ clientCertificate: NO_CERT, authorization: "Bearer bad" })).toEqual({ error: "invalid bearer token: token expired" });
  });

  test("token reviews are cached for cacheTTL; errors are not", async () => {
    let now = 0;
    const calls: string[] = [];
    const a = createAuthenticator({
      x509: false,
      cacheTTLMs: 120_000,
      anonymous: false,
      nowMs: () => now,
      tokenReview: async (s) => {
        calls.push(s.token);
        if (s.token === "boom") throw new Error("down");
        return { authenticated: true, user: { username: "bob" } };
      },
    });
    const req = (t: string) => a({ clientCertificate: NO_CERT, authorization: `Bearer ${t}` });
    await req("t1");
    await req("t1");
    now = 119_999;
    await req("t1");
    now = 120_000;
    await req("t1");
    await req("boom");
    await req("boom");
    expect(calls).toEqual(["t1", "t1", "boom", "boom"]);
  });

  test("x509 off: a client certificate is ignored", async () => {
    const a = createAuthenticator({ x509: false, cacheTTLMs: 0, anonymous: false });
    expect((await a({ clientCertificate: ALICE })).user).toBeUndefined();
  });
});

describe("webhook authorization", () => {
  test("SubjectAccessReview spec and the two cache TTLs", async () => {
    let now = 0;
    const specs: SubjectAccessReviewSpec[] = [];
    const authz = createWebhookAuthorizer({
      cacheAuthorizedTTLMs: 300_000,
      cacheUnauthorizedTTLMs: 30_000,
      nowMs: () => now,
      review: async (spec) => {
        specs.push(spec);
        return { allowed: spec.resourceAttributes.subresource === "stats" };
      },
    });
    const user = { name: "alice", groups: ["devs", "system:authenticated"] };
    const [stats] = requestAttributes(user, "GET", "/stats/summary", "node-1");
    const [, proxy] = requestAttributes(user, "GET", "/pods", "node-1");
    expect(await authz(stats!)).toEqual({ decision: "allow", reason: undefined });
    expect(await authz(proxy!)).toEqual({ decision: "no-opinion", reason: undefined });
    expect(specs[0]).toEqual({
      resourceAttributes: { namespace: "", verb: "get", group: "", version: "v1", resource: "nodes", subresource: "stats", name: "node-1" },
      user: "alice",
      groups: ["devs", "system:authenticated"],
    });
    now = 29_999;
    await authz(stats!);
    await authz(proxy!);
    expect(specs.length).toBe(2);
    now = 30_000;
    await authz(proxy!);
    await authz(stats!);
    expect(specs.length).toBe(3);
    now = 300_000;
    await authz(stats!);
    expect(specs.length).toBe(4);
  });
});

describe("the filter: 401 / 403 / 500 bodies as upstream", () => {
  const auth = (over: Partial<KubeletAuth> = {}): KubeletAuth => ({
    authenticate: createAuthenticator({ x509: true, cacheTTLMs: 0, anonymous: true }),
    authorize: async (a) => ({ decision: a.user.name === "alice" && a.subresource !== "proxy" ? "allow" : "deny" }),
    nodeName: "node-1",
    fineGrained: true,
    ...over,
  });
  const run = async (a: KubeletAuth, path: string, cert: ClientCertificate, method = "GET") => {
    const r = await authorizeRequest(a, new Request(`https://x${path}`, { method }), cert);
    if ("user" in r) return { status: 200, body: r.user.name };
    return { status: r.response.status, body: await r.response.text() };
  };

  test.each([
    ["/stats/summary", ALICE, 200, "alice"],
    ["/configz", ALICE, 200, "alice"],
    ["/pods", NO_CERT, 403, "Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[pods proxy])"],
    ["/exec/a/b/c", ALICE, 403, "Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[proxy])"],
    ["/stats/summary", FORGED, 401, "Unauthorized"],
  ] as const)("%s cert=%p → %d", async (path, cert, status, body) => {
    expect(await run(auth(), path, cert)).toEqual({ status, body });
  });

  test("anonymous off and no credential → 401", async () => {
    const a = auth({ authenticate: createAuthenticator({ x509: true, cacheTTLMs: 0, anonymous: false }) });
    expect(await run(a, "/healthz", NO_CERT)).toEqual({ status: 401, body: "Unauthorized" });
  });

  test("an authorizer error → 500 naming the attributes", async () => {
    const a = auth({ authorize: async () => Promise.reject(new Error("apiserver down")) });
    expect(await run(a, "/metrics/resource", ALICE)).toEqual({
      status: 500,
      body: "Authorization error (user=alice, verb=get, resource=nodes, subresource=metrics)",
    });
  });
});

describe("buildAuth from the configuration", () => {
  test("v1beta1 defaults (webhook authn + Webhook authz) need an API client: upstream's errors", () => {
    const c = defaultKubeletConfiguration();
    expect(() => buildAuth(c, "n")).toThrow("no client provided, cannot use webhook authentication");
    c.authentication.webhook.enabled = false;
    expect(() => buildAuth(c, "n")).toThrow("no client provided, cannot use webhook authorization");
  });

  test("with injected reviews the webhook chain works end to end", async () => {
    const c = defaultKubeletConfiguration();
    const a = buildAuth(c, "node-1", {
      tokenReview: async (s) => (s.token === "t" ? { authenticated: true, user: { username: "kube-apiserver" } } : { authenticated: false }),
      subjectAccessReview: async (s) => ({ allowed: s.user === "kube-apiserver" }),
    });
    const ok = await authorizeRequest(a, new Request("https://x/containerLogs/a/b/c", { headers: { authorization: "Bearer t" } }), NO_CERT);
    expect("user" in ok && ok.user.name).toBe("kube-apiserver");
    const anon = await authorizeRequest(a, new Request("https://x/pods"), NO_CERT);
    expect("response" in anon && anon.response.status).toBe(401);
  });

  test("AlwaysAllow + anonymous needs no client", async () => {
    const c = defaultKubeletConfiguration();
    c.authentication.webhook.enabled = false;
    c.authentication.anonymous.enabled = true;
    c.authorization.mode = "AlwaysAllow";
    const r = await authorizeRequest(buildAuth(c, "n"), new Request("https://x/pods"), NO_CERT);
    expect("user" in r && r.user.name).toBe("system:anonymous");
  });
});
