// The built binary with the KubeletConfiguration `kubeadm init` writes (test/config/fixtures/
// kubeadm-config.yaml, byte for byte: webhook authentication, Webhook authorization, anonymous off,
// every cache TTL 0s → the v1beta1 defaults 2m/5m/30s), TLS files and a --kubeconfig for the
// API-server double: bunlet serves, and every request on its port is authenticated by the client CA
// or a TokenReview and authorized by a SubjectAccessReview the node sends with its own credentials
// (upstream cmd/kubelet/app/auth.go BuildAuth). Paths and ports come from flags, which override the
// file as the kubelet's do. Standalone (no --kubeconfig) the same settings refuse to start with
// upstream's error. With neither TLS files nor serverTLSBootstrap, API-server mode serves TLS all the
// same, with a self-signed <cert-dir>/kubelet.crt (upstream InitializeTLS), never plain HTTP.
// No container runtime: the agent waits for one while serving.
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
import { startApiServer, type ApiServerDouble } from "../support/apiserver/index.ts";
import { issueCert } from "../support/apiserver/pki.ts";

const KUBEADM_CONFIG = resolve(import.meta.dir, "../config/fixtures/kubeadm-config.yaml");
const NODE = `kubeadm-auth-${process.pid}`;

describe("kubeadm's authentication and authorization settings in API-server mode (the binary)", () => {
  let dir: string;
  let api: ApiServerDouble;
  let p: BunletProcess;
  let port: number;
  let flags: string[];
  let apiserverClient: { cert: string; key: string };

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), `bunlet-kubeadm-auth-${process.pid}-`));
    api = await startApiServer({ storage: "memory" });
    const kubeconfig = join(dir, "kubelet.conf");
    await api.writeKubeconfig(kubeconfig, { ...(await api.issueClientCert(`system:node:${NODE}`, ["system:nodes"])), user: "kubelet" });
    const serving = await issueCert(api.ca, dir, `/CN=${NODE}`, { serverAuth: true, sans: ["IP:127.0.0.1"] });
    writeFileSync(join(dir, "kubelet.crt"), serving.certPem);
    writeFileSync(join(dir, "kubelet.key"), serving.keyPem, { mode: 0o600 });
    // kube-apiserver's --kubelet-client-certificate, as kubeadm issues it.
    const c = await api.issueClientCert("kube-apiserver-kubelet-client", ["system:masters"]);
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
      `--client-ca-file=${api.ca.certFile}`,
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
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = async (path: string, who: { token?: string; cert?: { cert: string; key: string } } = {}) => {
    const res = await fetch(`https://127.0.0.1:${port}${path}`, {
      headers: who.token ? { authorization: `Bearer ${who.token}` } : {},
      tls: { rejectUnauthorized: false, ...(who.cert ?? {}) },
    });
    return { status: res.status, body: await res.text() };
  };
  const reviews = (kind: "tokenreviews" | "subjectaccessreviews") =>
    api.requests.filter(
      (r) => r.method === "POST" && r.path.startsWith(`/apis/${kind.startsWith("token") ? "authentication" : "authorization"}.k8s.io/v1/${kind}`),
    );

  test("the kubeadm config is untouched: webhook authn, Webhook authz, anonymous off, TTLs 0s", () => {
    const text = readFileSync(KUBEADM_CONFIG, "utf8");
    expect(text).toContain("webhook:\n    cacheTTL: 0s\n    enabled: true");
    expect(text).toContain("mode: Webhook");
    expect(text).toContain("anonymous:\n    enabled: false");
  });

  test("no credential → 401; an unknown token → 401 (TokenReview says no)", async () => {
    expect(await get("/pods")).toEqual({ status: 401, body: "Unauthorized" });
    expect(await get("/pods", { token: "not-a-token" })).toEqual({ status: 401, body: "Unauthorized" });
    expect(p.proc.exitCode).toBeNull();
  });

  test("bearer tokens: TokenReview names the user, SubjectAccessReview decides; both sent by the node itself", async () => {
    api.registerToken("alice-token", { name: "alice", groups: ["devs"] });
    api.grant("alice", "get nodes/metrics");
    expect((await get("/metrics", { token: "alice-token" })).status).toBe(200);
    expect(await get("/pods", { token: "alice-token" })).toEqual({
      status: 403,
      body: "Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[pods proxy])",
    });
    const admin = await get("/pods", { token: api.adminToken });
    expect(admin.status).toBe(200);
    expect(JSON.parse(admin.body).kind).toBe("PodList");
    expect(new Set(reviews("tokenreviews").map((r) => r.user))).toEqual(new Set([`system:node:${NODE}`]));
    expect(new Set(reviews("subjectaccessreviews").map((r) => r.user))).toEqual(new Set([`system:node:${NODE}`]));
  });

  test("the API server's client certificate (x509, clientCAFile) is authorized by a SubjectAccessReview", async () => {
    const before = reviews("subjectaccessreviews").length;
    const r = await get("/pods", { cert: apiserverClient });
    expect(r.status).toBe(200);
    expect(reviews("subjectaccessreviews").length).toBe(before + 1);
  });

  test("answers are cached for the defaulted TTLs (kubeadm's 0s → 2m / 5m): no second review", async () => {
    await get("/configz", { token: api.adminToken });
    const [tokens, access] = [reviews("tokenreviews").length, reviews("subjectaccessreviews").length];
    for (let i = 0; i < 3; i++) expect((await get("/configz", { token: api.adminToken })).status).toBe(200);
    expect([reviews("tokenreviews").length, reviews("subjectaccessreviews").length]).toEqual([tokens, access]);
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

describe("API-server mode with neither TLS files nor serverTLSBootstrap (the binary)", () => {
  let dir: string;
  let api: ApiServerDouble;
  let p: BunletProcess;
  let port: number;

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), `bunlet-api-selfsigned-${process.pid}-`));
    api = await startApiServer({ storage: "memory" });
    const kubeconfig = join(dir, "kubelet.conf");
    await api.writeKubeconfig(kubeconfig, { ...(await api.issueClientCert(`system:node:${NODE}`, ["system:nodes"])), user: "kubelet" });
    mkdirSync(join(dir, "manifests"));
    // No config file: the v1beta1 defaults (webhook authn, Webhook authz), no TLS files, no client CA.
    ({ p, port } = await startAgentWithoutRuntime(
      dir,
      [`--kubeconfig=${kubeconfig}`, `--cert-dir=${join(dir, "pki")}`, `--hostname-override=${NODE}`, "--address=127.0.0.1"],
      30_000,
    ));
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
    await killAll();
    await api?.close();
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

  test("exec, run, containerLogs and logs: 401 without a credential; with one, authorized by a SubjectAccessReview", async () => {
    const tls = { rejectUnauthorized: false };
    for (const [method, path] of [
      ["POST", "/exec/default/x/c?command=id&output=1"],
      ["POST", "/run/default/x/c?cmd=id"],
      ["GET", "/containerLogs/default/x/c"],
      ["GET", "/logs/"],
    ] as const) {
      expect({ path, status: (await fetch(`https://127.0.0.1:${port}${path}`, { method, tls })).status }).toEqual({ path, status: 401 });
    }
    const admin = await fetch(`https://127.0.0.1:${port}/exec/default/x/c?command=id&output=1`, {
      method: "POST",
      tls,
      headers: { authorization: `Bearer ${api.adminToken}` },
    });
    expect([admin.status, await admin.text()]).toEqual([404, "pod does not exist"]);
  });
});
