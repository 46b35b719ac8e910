// The built binary with the KubeletConfiguration `kubeadm init` writes (test/config/fixtures/
// kubeadm-config.yaml, byte for byte: webhook authentication, Webhook authorization, anonymous off,
// every cache TTL 0s → the v1beta1 defaults 2m/5m/30s), TLS files and a --kubeconfig for a real
// control plane (test/support/upstream, with kube-apiserver's audit log): bunlet serves, and every
// request on its port is authenticated by the client CA or a TokenReview and authorized by a
// SubjectAccessReview the node sends with its own credentials (upstream cmd/kubelet/app/auth.go
// BuildAuth). The reviews are real, answered by the real authenticators and the Node and RBAC
// authorizers, for service-account tokens with and without RBAC for nodes/proxy and for the
// kube-apiserver-kubelet-client certificate; the audit log shows who sent each review, what it asked
// and the answer. (The real API server sending that certificate itself, through exec, logs and
// port-forward: test/integration/upstream/join.test.ts; its nodes/proxy refuses a loopback node
// address.) Paths and ports come from flags, which override the file as the kubelet's do. Standalone
// (no --kubeconfig) the same settings refuse to start with upstream's error. With neither TLS files
// nor serverTLSBootstrap, API-server mode serves TLS all the same, with a self-signed
// <cert-dir>/kubelet.crt (upstream InitializeTLS), never plain HTTP. No container runtime: the agent
// waits for one while serving.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  ensureBuilt,
  freePort,
  killAll,
  runBunlet,
  spawnBunlet,
  startAgentWithoutRuntime,
  waitForHealthz,
  withoutRuntimeFlags,
  type BunletProcess,
} from "../support/binary.ts";
import { issueCert } from "../support/apiserver/pki.ts";
import { startControlPlane, upstreamBinDir, type AuditEvent, type ControlPlane } from "../support/upstream/index.ts";
import { until } from "../support/wait.ts";

const KUBEADM_CONFIG = resolve(import.meta.dir, "../config/fixtures/kubeadm-config.yaml");
const NODE = `kubeadm-auth-${process.pid}`;

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the kubeadm authentication tests: ${bin.why}`);

let cp: ControlPlane;
let cpDir: string;
/** Service-account tokens (kubectl create token): one allowed nodes/metrics only, one allowed nodes/proxy. */
const tokens = { metrics: "", proxy: "" };

/** A service account in `default` bound to a cluster role that may get and create (GET and POST) nodes/<subresource>; its token. */
async function serviceAccountToken(name: string, subresource: string): Promise<string> {
  await cp.kubectl("create", "serviceaccount", name);
  await cp.kubectl("create", "clusterrole", name, "--verb=get,create", `--resource=nodes/${subresource}`);
  await cp.kubectl("create", "clusterrolebinding", name, `--clusterrole=${name}`, `--serviceaccount=default:${name}`);
  return (await cp.kubectl("create", "token", name)).trim();
}

const reviews = (resource: "tokenreviews" | "subjectaccessreviews"): AuditEvent[] =>
  cp.auditEvents().filter((e) => e.verb === "create" && e.objectRef?.resource === resource);
/** The TokenReviews of `token`, as the audit log recorded them (requester, answer). */
const tokenReviews = (token: string) => reviews("tokenreviews").filter((e) => e.requestObject?.spec?.token === token);
/** The SubjectAccessReviews about `user`: what was asked and the answer. */
const accessReviews = (user: string) =>
  reviews("subjectaccessreviews")
    .filter((e) => e.requestObject?.spec?.user === user)
    .map((e) => ({ by: e.user.username, ...e.requestObject.spec.resourceAttributes, allowed: e.responseObject?.status?.allowed ?? false }));

beforeAll(async () => {
  if (!bin.dir) return;
  await ensureBuilt();
  cpDir = `/tmp/bunlet-upstream-kubeadm-auth-${process.pid}`;
  cp = await startControlPlane({ dir: cpDir, binDir: bin.dir, audit: true });
  tokens.metrics = await serviceAccountToken("metrics-reader", "metrics");
  tokens.proxy = await serviceAccountToken("node-proxy", "proxy");
}, 180_000);

afterAll(async () => {
  await cp?.stop();
}, 60_000);

describe.skipIf(!bin.dir)("kubeadm's authentication and authorization settings in API-server mode (the binary)", () => {
  let dir: string;
  let p: BunletProcess;
  let port: number;
  let flags: string[];
  let apiserverClient: { cert: string; key: string };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-kubeadm-auth-${process.pid}-`));
    const kubeconfig = await cp.nodeKubeconfig(join(dir, "kubelet.conf"), NODE);
    const serving = await issueCert(cp.ca, dir, `/CN=${NODE}`, { serverAuth: true, sans: ["IP:127.0.0.1", `DNS:${NODE}`] });
    writeFileSync(join(dir, "kubelet.crt"), serving.certPem);
    writeFileSync(join(dir, "kubelet.key"), serving.keyPem, { mode: 0o600 });
    // kube-apiserver's --kubelet-client-certificate, as kubeadm issues it (control-plane.ts issues its own the same way).
    const c = await issueCert(cp.ca, dir, "/O=system:masters/CN=kube-apiserver-kubelet-client");
    apiserverClient = { cert: c.certPem, key: c.keyPem };
    mkdirSync(join(dir, "manifests"));
    port = freePort();
    const healthz = freePort();
    flags = [
      "--config",
      KUBEADM_CONFIG,
      `--cert-dir=${join(dir, "pki")}`,
      `--hostname-override=${NODE}`,
      "--address=127.0.0.1",
      `--client-ca-file=${cp.caFile}`,
      `--tls-cert-file=${join(dir, "kubelet.crt")}`,
      `--tls-private-key-file=${join(dir, "kubelet.key")}`,
      ...withoutRuntimeFlags(dir, port, healthz),
    ];
    p = spawnBunlet([...flags, `--kubeconfig=${kubeconfig}`]);
    await waitForHealthz(p, `http://127.0.0.1:${healthz}/healthz`, 30_000);
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
    await killAll();
    await cp?.kubectl("delete", "node", NODE, "--ignore-not-found", "--wait=false").catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  const get = async (path: string, who: { token?: string; cert?: { cert: string; key: string } } = {}) => {
    const res = await fetch(`https://127.0.0.1:${port}${path}`, {
      headers: who.token ? { authorization: `Bearer ${who.token}` } : {},
      tls: { rejectUnauthorized: false, ...(who.cert ?? {}) },
    });
    return { status: res.status, body: await res.text() };
  };

  test("the kubeadm config is untouched: webhook authn, Webhook authz, anonymous off, TTLs 0s", () => {
    const text = readFileSync(KUBEADM_CONFIG, "utf8");
    expect(text).toContain("webhook:\n    cacheTTL: 0s\n    enabled: true");
    expect(text).toContain("mode: Webhook");
    expect(text).toContain("anonymous:\n    enabled: false");
  });

  test("no credential → 401; an unknown token → 401: the node's TokenReview, answered not authenticated", async () => {
    expect(await get("/pods")).toEqual({ status: 401, body: "Unauthorized" });
    expect(await get("/pods", { token: "not-a-token" })).toEqual({ status: 401, body: "Unauthorized" });
    const review = await until("the TokenReview in the audit log", () => tokenReviews("not-a-token")[0], 10_000);
    expect(review.user.username).toBe(`system:node:${NODE}`);
    expect(review.responseObject.status.authenticated ?? false).toBe(false);
    expect(p.proc.exitCode).toBeNull();
  });

  test("service-account tokens: TokenReview names the account, SubjectAccessReview decides by its RBAC; both sent by the node", async () => {
    const metricsUser = "system:serviceaccount:default:metrics-reader";
    expect((await get("/metrics", { token: tokens.metrics })).status).toBe(200);
    expect(await get("/pods", { token: tokens.metrics })).toEqual({
      status: 403,
      body: `Forbidden (user=${metricsUser}, verb=get, resource=nodes, subresource(s)=[pods proxy])`,
    });
    const proxied = await get("/pods", { token: tokens.proxy });
    expect(proxied.status).toBe(200);
    expect(JSON.parse(proxied.body).kind).toBe("PodList");
    await until("the reviews in the audit log", () => accessReviews("system:serviceaccount:default:node-proxy").length > 0, 10_000);
    const node = `system:node:${NODE}`;
    expect(tokenReviews(tokens.metrics).map((e) => [e.user.username, e.responseObject.status.user.username])).toEqual([[node, metricsUser]]);
    expect(accessReviews(metricsUser)).toEqual([
      { by: node, verb: "get", resource: "nodes", subresource: "metrics", version: "v1", name: NODE, allowed: true },
      { by: node, verb: "get", resource: "nodes", subresource: "pods", version: "v1", name: NODE, allowed: false },
      { by: node, verb: "get", resource: "nodes", subresource: "proxy", version: "v1", name: NODE, allowed: false },
    ]);
    expect(new Set([...reviews("tokenreviews"), ...reviews("subjectaccessreviews")].map((e) => e.user.username))).toEqual(new Set([node]));
  });

  test("kube-apiserver's kubelet-client certificate (x509, clientCAFile) is authorized by a SubjectAccessReview", async () => {
    const user = "kube-apiserver-kubelet-client";
    expect((await get("/pods", { cert: apiserverClient })).status).toBe(200);
    await until("the review in the audit log", () => accessReviews(user).length > 0, 10_000);
    expect(accessReviews(user)).toHaveLength(1);
    expect(accessReviews(user)[0]).toMatchObject({ by: `system:node:${NODE}`, verb: "get", resource: "nodes", subresource: "pods", allowed: true });
  });

  test("answers are cached for the defaulted TTLs (kubeadm's 0s → 2m / 5m): no second review", async () => {
    const proxyUser = "system:serviceaccount:default:node-proxy";
    await get("/configz", { token: tokens.proxy });
    await until("the /configz review", () => accessReviews(proxyUser).some((r) => r.subresource === "proxy" && r.allowed), 10_000);
    const [tokenCount, accessCount] = [tokenReviews(tokens.proxy).length, accessReviews(proxyUser).length];
    for (let i = 0; i < 3; i++) expect((await get("/configz", { token: tokens.proxy })).status).toBe(200);
    // A fence: a new token's review is logged after any review the three requests above would have caused.
    const fence = `fence-${process.pid}`;
    expect((await get("/configz", { token: fence })).status).toBe(401);
    await until("the fence's TokenReview", () => tokenReviews(fence).length === 1, 10_000);
    expect([tokenReviews(tokens.proxy).length, accessReviews(proxyUser).length]).toEqual([tokenCount, accessCount]);
    expect(tokenCount).toBe(1);
  });

  test("standalone (no --kubeconfig) the same settings stop bunlet with upstream's error", async () => {
    const r = await runBunlet(
      flags.map((f) => f.replace(join(dir, "root"), join(dir, "root-standalone"))),
      { timeoutMs: 30_000 },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error: no client provided, cannot use webhook authentication");
  }, 60_000);
});

describe.skipIf(!bin.dir)("API-server mode with neither TLS files nor serverTLSBootstrap (the binary)", () => {
  const node = `selfsigned-${process.pid}`;
  let dir: string;
  let p: BunletProcess;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-api-selfsigned-${process.pid}-`));
    const kubeconfig = await cp.nodeKubeconfig(join(dir, "kubelet.conf"), node);
    mkdirSync(join(dir, "manifests"));
    // No config file: the v1beta1 defaults (webhook authn, Webhook authz), no TLS files, no client CA.
    ({ p, port } = await startAgentWithoutRuntime(
      dir,
      [`--kubeconfig=${kubeconfig}`, `--cert-dir=${join(dir, "pki")}`, `--hostname-override=${node}`, "--address=127.0.0.1"],
      30_000,
    ));
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
    await killAll();
    await cp?.kubectl("delete", "node", node, "--ignore-not-found", "--wait=false").catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  test("plain HTTP gets no answer; TLS with the self-signed <cert-dir>/kubelet.crt, trusted as the CA it is", async () => {
    expect(
      await fetch(`http://127.0.0.1:${port}/exec/default/x/c?command=id&output=1`, { method: "POST" }).then(
        (r) => r.status,
        () => "no HTTP answer",
      ),
    ).toBe("no HTTP answer");
    const crt = readFileSync(join(dir, "pki", "kubelet.crt"), "utf8");
    const r = await fetch(`https://127.0.0.1:${port}/healthz`, { tls: { ca: crt, checkServerIdentity: () => undefined } });
    expect(r.status).toBe(401);
  });

  test("exec, run, containerLogs and logs: 401 without a credential; with a token allowed nodes/proxy, authorized by a SubjectAccessReview", async () => {
    const tls = { rejectUnauthorized: false };
    for (const [method, path] of [
      ["POST", "/exec/default/x/c?command=id&output=1"],
      ["POST", "/run/default/x/c?cmd=id"],
      ["GET", "/containerLogs/default/x/c"],
      ["GET", "/logs/"],
    ] as const) {
      expect({ path, status: (await fetch(`https://127.0.0.1:${port}${path}`, { method, tls })).status }).toEqual({ path, status: 401 });
    }
    const allowed = await fetch(`https://127.0.0.1:${port}/exec/default/x/c?command=id&output=1`, {
      method: "POST",
      tls,
      headers: { authorization: `Bearer ${tokens.proxy}` },
    });
    expect([allowed.status, await allowed.text()]).toEqual([404, "pod does not exist"]);
    await until(
      "the node's review in the audit log",
      () => reviews("subjectaccessreviews").some((e) => e.user.username === `system:node:${node}` && e.responseObject?.status?.allowed),
      10_000,
    );
  });
});
