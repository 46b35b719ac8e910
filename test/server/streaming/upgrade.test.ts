// The streaming endpoints over real sockets, with a fake streaming server standing in for
// containerd's: an upgrade request is re-issued to the runtime's URL and both sockets spliced; the
// runtime's refusal is relayed; the auth filter decides upgrade requests as any other; plain
// requests on the same port are unaffected.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import tls from "node:tls";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultKubeletConfiguration } from "../../../src/config/defaults.ts";
import { startServers, type ListenConfig, type RunningServers } from "../../../src/server/listen.ts";
import { createRegistry } from "../../../src/server/metrics.ts";
import { resolveServing } from "../../../src/server/serving.ts";
import { PodNotFoundError, StreamingError, type StreamingHost } from "../../../src/server/streaming/index.ts";
import { makeTestPki, type TestPki } from "../../support/pki.ts";
import { pollUntil } from "../../support/wait.ts";

/** A streaming server: 101 then echo for /ok/*, 400 + body for /refuse, 200 for /weird. */
function fakeStreamingServer() {
  const heads: string[] = [];
  const server = net.createServer((s) => {
    let buf = "";
    const onData = (c: Buffer) => {
      buf += c.toString("latin1");
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      s.off("data", onData);
      const head = buf.slice(0, end);
      heads.push(head);
      const early = buf.slice(end + 4);
      if (head.startsWith("GET /refuse") || head.startsWith("POST /refuse"))
        return void s.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\n\r\nbad request");
      if (head.includes(" /weird ")) return void s.end("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
      s.write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n");
      if (early) s.write(`echo:${early}`);
      s.on("data", (d) => s.write(`echo:${d}`));
    };
    s.on("data", onData);
    s.on("error", () => {});
  });
  return { server, heads };
}

let backend: ReturnType<typeof fakeStreamingServer>;
let backendUrl = "";
const calls: string[] = [];
const host: StreamingHost = {
  async getExec(t, cmd, streams) {
    if (t.pod === "missing") throw new PodNotFoundError("pod does not exist");
    if (t.container === "gone") throw new StreamingError(`container not found ("gone")`);
    calls.push(`exec ${t.namespace}/${t.pod}/${t.container} ${JSON.stringify(cmd)} ${JSON.stringify(streams)}`);
    return `${backendUrl}/${t.container === "refuse" ? "refuse" : t.container === "weird" ? "weird" : "ok/exec-token"}`;
  },
  async getAttach(t) {
    return `${backendUrl}/ok/attach-${t.container}`;
  },
  async getPortForward(t, ports) {
    calls.push(`portForward ${t.pod} ${ports.join(",")}`);
    return `${backendUrl}/ok/pf`;
  },
  async runInContainer(t, cmd, signal) {
    if (cmd[0] === "false") throw new StreamingError("command 'false' exited with 1: ");
    if (cmd[0] === "sleep") {
      calls.push("run sleep started");
      await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve()));
      calls.push("run sleep cancelled");
      throw new StreamingError("cancelled");
    }
    return Buffer.from(`ran ${cmd.join(" ")} in ${t.container}\n`);
  },
};

let metrics = createRegistry();
const providers = () => ({ getPods: () => [], metrics: (metrics = createRegistry()), streaming: host });
const base: ListenConfig = { address: "127.0.0.1", port: 0, readOnlyPort: 0, healthzBindAddress: "127.0.0.1", healthzPort: 0 };

beforeAll(async () => {
  backend = fakeStreamingServer();
  await new Promise<void>((r) => backend.server.listen(0, "127.0.0.1", () => r()));
  backendUrl = `http://127.0.0.1:${(backend.server.address() as net.AddressInfo).port}`;
});
afterAll(() => backend.server.close());

let running: RunningServers | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** Sends raw bytes; resolves with everything received once `until` matches (or the socket closed). */
function exchange(connect: () => net.Socket, send: string, until: RegExp, then?: (s: net.Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect();
    let got = "";
    let thenDone = false;
    const timer = setTimeout(() => (s.destroy(), reject(new Error(`timeout; got ${JSON.stringify(got)}`))), 10_000);
    s.on("data", (d) => {
      got += d.toString("latin1");
      if (then && !thenDone && got.includes("101 Switching")) {
        thenDone = true;
        then(s);
      }
      if (until.test(got)) {
        clearTimeout(timer);
        s.destroy();
        resolve(got);
      }
    });
    s.on("close", () => (clearTimeout(timer), resolve(got)));
    s.on("error", reject);
    s.write(send);
  });
}

const spdy = (method: string, path: string, extra = "") =>
  `${method} ${path} HTTP/1.1\r\nHost: kubelet\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nAuthorization: Bearer secret\r\n${extra}\r\n`;

describe("plain loopback main port without --unsafe-loopback-debug-handlers: nothing reaches a container", () => {
  let port = 0;
  const plain = () => net.connect(port, "127.0.0.1");

  test.each([
    ["SPDY exec", spdy("POST", "/exec/ns/p/c?command=id&output=1")],
    ["WebSocket attach", "GET /attach/ns/p/c?output=1 HTTP/1.1\r\nHost: k\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"],
    ["WebSocket portForward", "GET /portForward/ns/p?port=80 HTTP/1.1\r\nHost: k\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"],
    ["run", "POST /run/ns/p/c?cmd=id HTTP/1.1\r\nHost: k\r\nContent-Length: 0\r\n\r\n"],
    ["exec without an upgrade", "POST /exec/ns/p/c?command=id&output=1 HTTP/1.1\r\nHost: k\r\nContent-Length: 0\r\n\r\n"],
    ["containerLogs", "GET /containerLogs/ns/p/c HTTP/1.1\r\nHost: k\r\n\r\n"],
    ["logs", "GET /logs/ HTTP/1.1\r\nHost: k\r\n\r\n"],
  ])("%s → 403 naming the flag; the runtime is never asked", async (_what, req) => {
    running = await startServers(base, { ...providers(), podLogsDir: "/nonexistent" });
    port = running.get("main")!.port;
    const before = [calls.length, backend.heads.length];
    const r = await exchange(plain, req, /--unsafe-loopback-debug-handlers\n$/);
    expect(r).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect([calls.length, backend.heads.length]).toEqual(before);
    expect(await (await fetch(`${running.get("main")!.url}/healthz`)).text()).toBe("ok");
  });
});

describe("plain loopback main port with --unsafe-loopback-debug-handlers", () => {
  let port = 0;
  const plain = () => net.connect(port, "127.0.0.1");
  async function start(debugging = true) {
    running = await startServers({ ...base, enableDebuggingHandlers: debugging, unsafeLoopbackDebugHandlers: true }, providers());
    port = running.get("main")!.port;
  }

  test("SPDY exec: 101 from the runtime, bytes spliced both ways, early bytes kept; no credentials passed on", async () => {
    await start();
    const got = await exchange(plain, spdy("POST", "/exec/ns/p/c?command=sh&command=-c&command=echo%20hi&output=1&error=1") + "EARLY", /echo:later/, (s) =>
      s.write("later"),
    );
    expect(got).toStartWith("HTTP/1.1 101 Switching Protocols\r\n");
    expect(got).toContain("echo:EARLY");
    expect(calls).toContain(`exec ns/p/c ["sh","-c","echo hi"] {"stdin":false,"stdout":true,"stderr":true,"tty":false}`);
    const head = backend.heads.at(-1)!;
    expect(head).toStartWith("POST /ok/exec-token HTTP/1.1\r\n");
    expect(head).toMatch(/\r\nUpgrade: SPDY\/3\.1/);
    expect(head).not.toMatch(/authorization/i);
    expect(head).toMatch(/\r\nX-Forwarded-For: 127\.0\.0\.1/);
    // Counted when the session ends, as a long-running request (upstream's request metrics).
    await pollUntil(
      () => metrics.render().includes(`kubelet_http_requests_total{method="POST",path="exec",server_type="readwrite",long_running="true"} 1`),
      "exec request counted",
    );
  });

  test("WebSocket port-forward: ports from the query reach the runtime", async () => {
    await start();
    const ws =
      "GET /portForward/ns/p?port=8080&port=9090 HTTP/1.1\r\nHost: k\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n";
    expect(await exchange(plain, ws, /101 Switching Protocols\r\n[\s\S]*\r\n\r\n/)).toStartWith("HTTP/1.1 101");
    expect(calls).toContain("portForward p 8080,9090");
    const bad = "GET /portForward/ns/p?port=0 HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
    const r = await exchange(plain, bad, /must be > 0/);
    expect(r).toStartWith("HTTP/1.1 400 Bad Request\r\n");
  });

  test.each([
    [spdy("POST", "/exec/ns/missing/c?output=1"), /^HTTP\/1\.1 404 Not Found\r\n[\s\S]*\r\n\r\npod does not exist$/],
    [spdy("POST", "/exec/ns/p/gone?output=1"), /^HTTP\/1\.1 500 Internal Server Error\r\n[\s\S]*container not found \("gone"\)$/],
    [spdy("POST", "/exec/ns/p/c"), /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*you must specify at least 1 of stdin, stdout, stderr$/],
    [spdy("PUT", "/exec/ns/p/c?output=1"), /^HTTP\/1\.1 405 Method Not Allowed\r\n(.+\r\n)*allow: GET, POST\r\n/],
    [spdy("POST", "/exec/ns/p"), /^HTTP\/1\.1 404 Not Found\r\n/],
    [spdy("POST", "/exec/ns/p/refuse?output=1"), /^HTTP\/1\.1 400 Bad Request\r\nContent-Length: 11\r\n\r\nbad request$/],
    [spdy("POST", "/exec/ns/p/weird?output=1"), /^HTTP\/1\.1 500 [\s\S]*invalid upgrade response: status code 200$/],
  ])("refused upgrade %#", async (req, want) => {
    await start();
    expect(await exchange(plain, req, /$^/)).toMatch(want);
  });

  test("the same port still serves plain requests, and non-upgrade streaming requests as upstream", async () => {
    await start();
    const base = running!.get("main")!.url;
    expect(await (await fetch(`${base}/healthz`)).text()).toBe("ok");
    const r = await fetch(`${base}/exec/ns/p/c?command=ls&output=1`, { method: "POST" });
    expect([r.status, await r.text()]).toEqual([500, "Upgrade request required"]);
    const run = await fetch(`${base}/run/ns/p/c?cmd=echo%20a%20b`, { method: "POST" });
    expect([run.status, run.headers.get("content-type"), await run.text()]).toEqual([200, "application/json", "ran echo a b in c\n"]);
    expect((await fetch(`${base}/run/ns/p/c?cmd=false`, { method: "POST" })).status).toBe(500);
    expect((await fetch(`${base}/run/ns/p/c?cmd=ls`)).status).toBe(405);
    expect((await fetch(`${base}/run/ns/missing`, { method: "POST" })).status).toBe(404);
  });

  test("/run is cancelled when its client goes away (upstream: the request's context), so the runtime kills the command", async () => {
    await start();
    const s = plain();
    s.on("error", () => {});
    s.write("POST /run/ns/p/c?cmd=sleep%20100000 HTTP/1.1\r\nHost: k\r\nContent-Length: 0\r\n\r\n");
    await pollUntil(() => calls.includes("run sleep started"), "the command started");
    s.destroy();
    await pollUntil(() => calls.includes("run sleep cancelled"), "the command cancelled once the client was gone");
  });

  test("a client that half-closes after its request (FIN) still gets the answer", async () => {
    await start();
    const answer = () =>
      new Promise<string>((resolve) => {
        const s = plain();
        let got = "";
        s.on("data", (d) => (got += d));
        s.on("close", () => resolve(got));
        s.end("POST /run/ns/p/c?cmd=echo%20late HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      });
    expect(await answer()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nran echo late in c\n$/);
  });

  test.each([
    ["a bare LF inside a value (a second header for a server that ends lines at LF)", "X-A: a\nTransfer-Encoding: chunked\r\n"],
    ["bare LF line ends", "X-A: a\nX-B: b\n"],
    ["a bare CR", "X-A: a\rX-B: b\r\n"],
    ["an obs-folded line", "X-A: a\r\n folded\r\n"],
    ["a NUL in a value", "X-A: a\u0000b\r\n"],
  ])("%s in an upgrade head → 400, and the runtime never sees it", async (_what, extra) => {
    await start();
    const before = [calls.length, backend.heads.length];
    const r = await exchange(
      plain,
      `POST /exec/ns/p/c?command=id&output=1 HTTP/1.1\r\nHost: k\r\n${extra}Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n`,
      /$^/,
    );
    expect(r).toMatch(/^HTTP\/1\.1 400 /);
    expect([calls.length, backend.heads.length]).toEqual(before);
  });

  test("an upgrade head dripped past the header cap is refused (431) as soon as it passes it, not buffered to 1 MiB", async () => {
    await start();
    const s = plain();
    let answer = "";
    let sent = 0;
    s.on("data", (d) => (answer += d.toString("latin1")));
    s.on("error", () => {});
    s.write("POST /exec/ns/p/c?output=1 HTTP/1.1\r\nHost: k\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n");
    const line = `X-Drip: ${"a".repeat(1000)}\r\n`;
    while (answer === "" && sent < 256 * 1024 && !s.destroyed) {
      s.write(line);
      sent += line.length;
      await Bun.sleep(1);
    }
    s.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(sent).toBeLessThan(64 * 1024);
  });

  test("enableDebuggingHandlers: false → 405 Debug endpoints are disabled, for upgrades too", async () => {
    await start(false);
    const r = await exchange(plain, spdy("POST", "/exec/ns/p/c?output=1"), /disabled/);
    expect(r).toMatch(/^HTTP\/1\.1 405 /);
    expect(r).toContain("Debug endpoints are disabled.");
  });
});

describe("secure main port: upgrade requests go through the auth filter", () => {
  let dir: string;
  let pki: TestPki;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "bunlet-stream-"));
    pki = await makeTestPki(dir, [["apiserver", "kube-apiserver-kubelet-client", "system:masters"]]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("no client certificate → 401; the API server's client certificate → spliced", async () => {
    const c = defaultKubeletConfiguration();
    c.address = "127.0.0.1";
    c.authentication.x509.clientCAFile = pki.caFile;
    c.authentication.webhook.enabled = false;
    c.authorization.mode = "AlwaysAllow";
    const secure = await resolveServing(c, { nodeName: "localhost", certDir: join(dir, "pki") });
    running = await startServers({ ...base, secure }, providers());
    const port = running.get("main")!.port;
    const anon = () => tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false });
    expect(await exchange(anon, spdy("POST", "/exec/ns/p/c?output=1"), /Unauthorized$/)).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/);
    const apiserver = () =>
      tls.connect({
        port,
        host: "127.0.0.1",
        rejectUnauthorized: false,
        cert: readFileSync(pki.client("apiserver").cert),
        key: readFileSync(pki.client("apiserver").key),
      });
    const got = await exchange(apiserver, spdy("POST", "/attach/ns/p/main?output=1"), /echo:ping/, (s) => s.write("ping"));
    expect(got).toStartWith("HTTP/1.1 101 Switching Protocols\r\n");
    expect(backend.heads.at(-1)).toStartWith("POST /ok/attach-main HTTP/1.1");
  });

  test("Webhook authorization: exec is nodes/proxy — create for POST, get for a WebSocket GET (as upstream)", async () => {
    const c = defaultKubeletConfiguration();
    c.address = "127.0.0.1";
    c.authentication.x509.clientCAFile = pki.caFile;
    c.authentication.webhook.enabled = false;
    const asked: string[] = [];
    // The API server's reviews: only "get" on nodes/proxy is granted.
    const client = {
      subjectAccessReview: async (s: { resourceAttributes: { verb: string; subresource: string } }) => (
        asked.push(`${s.resourceAttributes.verb} ${s.resourceAttributes.subresource}`), { allowed: s.resourceAttributes.verb === "get" }
      ),
    };
    const secure = await resolveServing(c, { nodeName: "localhost", certDir: join(dir, "pki"), authClient: client as never });
    running = await startServers({ ...base, secure }, providers());
    const port = running.get("main")!.port;
    const apiserver = () =>
      tls.connect({
        port,
        host: "127.0.0.1",
        rejectUnauthorized: false,
        cert: readFileSync(pki.client("apiserver").cert),
        key: readFileSync(pki.client("apiserver").key),
      });
    const denied = await exchange(apiserver, spdy("POST", "/exec/ns/p/c?command=id&output=1"), /\]\)$/);
    expect(denied).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(denied).toEndWith("Forbidden (user=kube-apiserver-kubelet-client, verb=create, resource=nodes, subresource(s)=[proxy])");
    const ws = "GET /exec/ns/p/c?command=id&output=1 HTTP/1.1\r\nHost: k\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
    expect(await exchange(apiserver, ws, /101 Switching Protocols\r\n[\s\S]*\r\n\r\n/)).toStartWith("HTTP/1.1 101");
    expect(asked).toEqual(["create proxy", "get proxy"]);
  });
});
