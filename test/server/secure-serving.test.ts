// The main port secured as upstream's: TLS (self-signed pair in certDir), x509 client certificates,
// bearer tokens through a (fake) TokenReview, SubjectAccessReview authorization (fake), checked with
// real clients: curl and openssl s_client.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultKubeletConfiguration } from "../../src/config/defaults.ts";
import type { KubeletConfiguration } from "../../src/config/kubelet-config.ts";
import { startServers, type ListenConfig, type RunningServers } from "../../src/server/listen.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { resolveServing, wantsSecureServing } from "../../src/server/serving.ts";
import type { AuthClient } from "../../src/server/auth/index.ts";
import { curl, makeTestPki, type TestPki } from "../support/pki.ts";

let dir: string;
let pki: TestPki;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bunlet-secure-"));
  pki = await makeTestPki(dir, [
    ["alice", "alice", "devs"],
    ["apiserver", "kube-apiserver-kubelet-client", "system:masters"],
  ]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const providers = () => ({
  getPods: () => [],
  getSummary: async () => ({ node: { nodeName: "localhost" }, pods: [] }) as never,
  metrics: createRegistry(),
  configz: () => ({ x: 1 }),
});
const base: ListenConfig = { address: "127.0.0.1", port: 0, readOnlyPort: 0, healthzBindAddress: "127.0.0.1", healthzPort: 0 };

/** A fake API server: tokens "good" → bob; masters may do anything, alice only stats and metrics. */
const client: AuthClient = {
  tokenReview: async ({ token }) =>
    token === "good" ? { authenticated: true, user: { username: "bob", groups: ["ops"] } } : { authenticated: false, error: "token not found" },
  subjectAccessReview: async (s) => ({
    allowed:
      s.groups.includes("system:masters") ||
      (s.user === "alice" && ["stats", "metrics"].includes(s.resourceAttributes.subresource)) ||
      (s.user === "bob" && s.resourceAttributes.subresource === "pods"),
  }),
};

function config(over: (c: KubeletConfiguration) => void): KubeletConfiguration {
  const c = defaultKubeletConfiguration();
  c.address = "127.0.0.1";
  c.authentication.x509.clientCAFile = pki.caFile;
  over(c);
  return c;
}

let running: RunningServers | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

async function start(c: KubeletConfiguration, certDir = join(dir, "pki")): Promise<string> {
  const secure = await resolveServing(c, { nodeName: "localhost", certDir, authClient: client });
  expect(secure).toBeDefined();
  running = await startServers({ ...base, address: c.address, secure }, providers());
  return running.get("main")!.url;
}

describe("upstream's 401/403/200 matrix with curl (webhook authn + authz, anonymous off)", () => {
  const cert = (name: string) => ["--cert", pki.client(name).cert, "--key", pki.client(name).key];
  test.each([
    ["no credential", [] as string[], "/pods", 401, "Unauthorized"],
    ["a forged client certificate", ["forged"], "/pods", 401, "Unauthorized"],
    ["alice's certificate on stats", ["alice"], "/stats/summary", 200, undefined],
    ["alice's certificate on /pods", ["alice"], "/pods", 403, "Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[pods proxy])"],
    ["alice's certificate on /configz", ["alice"], "/configz", 403, "Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[configz proxy])"],
    ["the apiserver's client certificate on /configz", ["apiserver"], "/configz", 200, undefined],
    ["a good bearer token on /pods", ["token:good"], "/pods", 200, undefined],
    ["a good bearer token on /configz", ["token:good"], "/configz", 403, "Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[configz proxy])"],
    ["a bad bearer token", ["token:bad"], "/healthz", 401, "Unauthorized"],
  ])("%s → %s %d", async (_what, creds, path, status, body) => {
    const url = await start(config((c) => void (c.authentication.anonymous.enabled = false)));
    const args = creds.flatMap((x) =>
      x.startsWith("token:")
        ? ["-H", `Authorization: Bearer ${x.slice(6)}`]
        : x === "forged"
          ? ["--cert", join(dir, "forged.crt"), "--key", join(dir, "forged.key")]
          : cert(x),
    );
    const r = await curl(["--cacert", join(dir, "pki", "kubelet.crt"), ...args, `${url.replace("127.0.0.1", "localhost")}${path}`]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(status);
    if (body !== undefined) expect(r.body).toBe(body);
  });

  test("anonymous on: no credential is system:anonymous, which the webhook may still refuse", async () => {
    const url = await start(config((c) => void (c.authentication.anonymous.enabled = true)));
    const r = await curl(["-k", `${url}/healthz`]);
    expect(r).toMatchObject({ status: 403, body: "Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[healthz proxy])" });
  });
});

describe("kubectl against the kubelet port (kubectl get --raw, x509 client certificates)", () => {
  const kubectl = async (url: string, who: string, path: string) => {
    const c = pki.client(who);
    const p = Bun.spawn(
      [
        "kubectl",
        `--server=${url.replace("127.0.0.1", "localhost")}`,
        `--certificate-authority=${join(dir, "pki", "kubelet.crt")}`,
        `--client-certificate=${c.cert}`,
        `--client-key=${c.key}`,
        "--kubeconfig=/dev/null",
        "get",
        "--raw",
        path,
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, out, err };
  };

  test("alice may read stats but not pods; the apiserver's client certificate reads pods", async () => {
    const url = await start(config((c) => void (c.authentication.anonymous.enabled = false)));
    const stats = await kubectl(url, "alice", "/stats/summary");
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.out).node.nodeName).toBe("localhost");
    const denied = await kubectl(url, "alice", "/pods");
    expect(denied.code).not.toBe(0);
    expect(denied.err).toContain("Forbidden");
    const pods = await kubectl(url, "apiserver", "/pods");
    expect(pods.code).toBe(0);
    expect(JSON.parse(pods.out).kind).toBe("PodList");
  });
});

describe("TLS serving", () => {
  test("self-signed kubelet.crt/kubelet.key in certDir (key 0600), reused on the next start", async () => {
    const certDir = join(dir, "pki-reuse");
    await start(
      config(() => {}),
      certDir,
    );
    const first = readFileSync(join(certDir, "kubelet.crt"), "utf8");
    expect(first.match(/BEGIN CERTIFICATE/g)?.length).toBe(2);
    expect(statSync(join(certDir, "kubelet.key")).mode & 0o777).toBe(0o600);
    const text = Bun.spawnSync(["openssl", "x509", "-noout", "-text", "-in", join(certDir, "kubelet.crt")]).stdout.toString();
    expect(text).toContain("DNS:localhost");
    expect(text).toMatch(/Subject: CN ?= ?localhost@\d+/);
    await running!.stop();
    running = undefined;
    await start(
      config(() => {}),
      certDir,
    );
    expect(readFileSync(join(certDir, "kubelet.crt"), "utf8")).toBe(first);
  });

  async function sClient(url: string, args: string[]): Promise<number> {
    const { port } = new URL(url);
    const p = Bun.spawn(["openssl", "s_client", "-connect", `127.0.0.1:${port}`, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
    return p.exited;
  }

  test("tlsMinVersion VersionTLS13: a TLS 1.2 handshake fails, TLS 1.3 works (openssl s_client)", async () => {
    const url = await start(config((c) => void (c.tlsMinVersion = "VersionTLS13")));
    expect(await sClient(url, ["-tls1_2"])).not.toBe(0);
    expect(await sClient(url, ["-tls1_3"])).toBe(0);
  });

  test("tlsCipherSuites limits TLS 1.2 ciphers (Go names mapped to OpenSSL's)", async () => {
    const url = await start(config((c) => void (c.tlsCipherSuites = ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"])));
    expect(await sClient(url, ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"])).toBe(0);
    expect(await sClient(url, ["-tls1_2", "-cipher", "ECDHE-RSA-AES256-GCM-SHA384"])).not.toBe(0);
  });

  test("plain HTTP on the TLS port fails that connection only", async () => {
    const url = await start(config(() => {}));
    expect((await curl([url.replace("https:", "http:") + "/pods"])).status).toBe(0);
    expect((await curl(["-k", "--cert", pki.client("apiserver").cert, "--key", pki.client("apiserver").key, `${url}/pods`])).status).toBe(200);
  });
});

describe("what decides secure serving, and what refuses to start", () => {
  test.each([
    [{}, false],
    [{ address: "0.0.0.0" }, false],
    [{ address: "::1" }, false],
    [{ address: "192.0.2.10" }, true],
    [{ tlsCertFile: "/x.crt", tlsPrivateKeyFile: "/x.key" }, true],
    [{ clientCA: true }, true],
  ] as const)("%j → secure %p", (over, secure) => {
    const c = defaultKubeletConfiguration();
    if ("address" in over) c.address = over.address;
    if ("tlsCertFile" in over) Object.assign(c, over);
    if ("clientCA" in over) c.authentication.x509.clientCAFile = "/ca.crt";
    expect(wantsSecureServing(c)).toBe(secure);
    // API-server mode: always (upstream never serves the main port without TLS).
    expect(wantsSecureServing(c, true)).toBe(true);
  });

  test("API-server mode without TLS files or serverTLSBootstrap: a self-signed kubelet.crt/kubelet.key for the node, TLS with the auth filter", async () => {
    const certDir = join(dir, "pki-api-mode");
    const c = defaultKubeletConfiguration(); // a wildcard address, no TLS files, no client CA
    const secure = await resolveServing(c, { nodeName: "localhost", certDir, authClient: client, apiServerMode: true });
    expect(secure).toMatchObject({ certFile: join(certDir, "kubelet.crt"), keyFile: join(certDir, "kubelet.key"), allowsEveryone: false });
    running = await startServers({ ...base, address: "127.0.0.1", secure }, providers());
    const url = running.get("main")!.url;
    expect(url).toStartWith("https://");
    expect((await curl(["-k", `${url}/pods`])).status).toBe(401);
    expect(
      (await curl(["--cacert", join(certDir, "kubelet.crt"), "-H", "Authorization: Bearer good", `${url.replace("127.0.0.1", "localhost")}/pods`])).status,
    ).toBe(200);
  });

  test("API-server mode refuses the v1beta1 defaults without reviews, as upstream's BuildAuth", async () => {
    await expect(resolveServing(defaultKubeletConfiguration(), { nodeName: "n", certDir: join(dir, "unused"), apiServerMode: true })).rejects.toThrow(
      "no client provided, cannot use webhook authentication",
    );
  });

  test.each([
    [
      "v1beta1 defaults without an API client",
      (c: KubeletConfiguration) => void (c.authentication.x509.clientCAFile = "/ca.crt"),
      "no client provided, cannot use webhook authentication",
    ],
    [
      "an unknown cipher suite",
      (c: KubeletConfiguration) => ((c.address = "192.0.2.10"), (c.tlsCipherSuites = ["TLS_FOO"])),
      "Cipher suite TLS_FOO not supported or doesn't exist",
    ],
    [
      "an unknown TLS version",
      (c: KubeletConfiguration) => ((c.address = "192.0.2.10"), (c.tlsMinVersion = "VersionTLS14")),
      'unknown tls version "VersionTLS14"',
    ],
    ["only one of the TLS files", (c: KubeletConfiguration) => void (c.tlsCertFile = "/x.crt"), "must be set together"],
  ])("%s → %s", async (_what, over, message) => {
    const c = defaultKubeletConfiguration();
    over(c);
    const opts = { nodeName: "n", certDir: join(dir, "unused"), authClient: message.startsWith("no client") ? undefined : client };
    await expect(resolveServing(c, opts)).rejects.toThrow(message);
  });

  test("anonymous + AlwaysAllow lets everyone in: a wildcard stays on loopback, a specific address is refused", async () => {
    const everyone = (address: string) =>
      config((c) => {
        c.address = address;
        c.authentication.anonymous.enabled = true;
        c.authentication.webhook.enabled = false;
        c.authorization.mode = "AlwaysAllow";
      });
    await start(everyone("0.0.0.0"));
    expect(running!.get("main")!.hostname).toBe("127.0.0.1");
    await running!.stop();
    running = undefined;
    const secure = await resolveServing(everyone("192.0.2.10"), { nodeName: "localhost", certDir: join(dir, "pki") });
    await expect(startServers({ ...base, address: "192.0.2.10", secure }, providers())).rejects.toThrow("refusing to serve the main server on 192.0.2.10");
  });

  test("with real authn/authz a wildcard address listens on every interface", async () => {
    await start(config((c) => void (c.address = "0.0.0.0")));
    expect(running!.get("main")!.hostname).toBe("0.0.0.0");
  });
});
