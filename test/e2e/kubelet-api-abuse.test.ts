// The kubelet port of the built binary under 1,000+ malformed and hostile requests, sent as raw
// bytes (no client library to tidy them up; every other one half-closes after sending): traversal, bad paths and percent-encodings, unknown
// pods on every streaming endpoint (with and without an upgrade), bad query values, malformed HTTP,
// huge headers and bodies, unknown methods, and slow clients. Each gets the right 4xx (or, for bytes
// that are not HTTP, a 400 or a closed connection) — never a 2xx for a hostile path, never a 5xx
// — the process stays up, its RSS stays bounded and its open fds return to where they were.
// No container runtime: the agent waits for one in the background while serving its API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import tls from "node:tls";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, killAll, startAgentWithoutRuntime, type BunletProcess } from "../support/binary.ts";
import { seededRand, type Rand } from "../support/rand.ts";
import { pollUntil } from "../support/wait.ts";
import { makeTestPki } from "../support/pki.ts";
import { REQ, UPGRADE_SPDY, UPGRADE_WS, type HostileCase, type SlowClient } from "../support/hostile.ts";
import { procFds, procRssKiB, runCases, slowClientsClosed } from "../support/hostile-wire.ts";

/** Path segments a hostile client would try: traversal, encodings, control bytes, unicode, long. */
function hostileSegment(r: Rand): string {
  return r.pick([
    "..",
    "%2e%2e",
    "..%2f..",
    "%252e%252e",
    "%00",
    "a%00b",
    "%ff%fe",
    "é",
    "%E2%80%AE",
    "%zz",
    "%",
    "~root",
    "*",
    "a;b",
    "%0d%0aX-Injected:%201",
    "x".repeat(1 + r.int(3000)),
    `${r.int(1e9)}`,
    "default",
    "kube-system",
    "-",
    "_",
    ".",
    "%2F",
    "\\..\\..",
  ]);
}

function traversalCases(r: Rand, n: number): HostileCase[] {
  const out: HostileCase[] = [];
  const targets = ["etc/passwd", "etc/shadow", "proc/self/environ", "root/.ssh/id_rsa"];
  const ups = ["../", "..%2f", "%2e%2e/", "%2e%2e%2f", "..%5c", "%252e%252e/", "....//", "..;/", "%c0%ae%c0%ae/"];
  for (let i = 0; i < n; i++) {
    const depth = 1 + r.int(8);
    const up = r.pick(ups).repeat(depth);
    const target = `/logs/${r.pick(["", "journal/", "x/", "%2f"])}${up}${r.pick(targets)}`;
    out.push({ what: `traversal ${target}`, bytes: REQ(r.pick(["GET", "HEAD"]), target), ok: [400, 404] });
  }
  return out;
}

function unknownPodCases(r: Rand, n: number): HostileCase[] {
  const out: HostileCase[] = [];
  for (let i = 0; i < n; i++) {
    const ns = r.next() < 0.5 ? "default" : hostileSegment(r);
    const pod = hostileSegment(r);
    const c = hostileSegment(r);
    const kind = r.int(7);
    if (kind === 0)
      out.push({ what: "exec SPDY unknown pod", bytes: REQ("POST", `/exec/${ns}/${pod}/${c}?command=sh&input=1&output=1`, UPGRADE_SPDY), ok: [400, 404] });
    else if (kind === 1)
      out.push({ what: "attach WebSocket unknown pod", bytes: REQ("GET", `/attach/${ns}/${pod}/${c}?output=1&error=1`, UPGRADE_WS), ok: [400, 404] });
    else if (kind === 2)
      out.push({
        what: "portForward WebSocket unknown pod",
        bytes: REQ("GET", `/portForward/${ns}/${pod}?port=${1 + r.int(65535)}`, UPGRADE_WS),
        ok: [400, 404],
      });
    else if (kind === 3) out.push({ what: "run unknown pod", bytes: REQ("POST", `/run/${ns}/${pod}/${c}?cmd=id`), ok: [400, 404] });
    else if (kind === 4) out.push({ what: "exec without upgrade", bytes: REQ("GET", `/exec/${ns}/${pod}/uid/${c}?command=id&output=1`), ok: [400, 404] });
    else if (kind === 5) out.push({ what: "containerLogs unknown pod", bytes: REQ("GET", `/containerLogs/${ns}/${pod}/${c}?follow=true`), ok: [400, 404] });
    else out.push({ what: "portForward SPDY unknown pod", bytes: REQ("POST", `/portForward/${ns}/${pod}/${hostileSegment(r)}`, UPGRADE_SPDY), ok: [400, 404] });
  }
  return out;
}

function badQueryCases(r: Rand, n: number): HostileCase[] {
  const junk = () =>
    r.pick(["", "-1", "1e999", "NaN", "%zz", "0x10", "99999999999999999999", "true", "%00", "a".repeat(r.int(5000)), encodeURIComponent("１")]);
  const out: HostileCase[] = [];
  for (let i = 0; i < n; i++) {
    const kind = r.int(4);
    if (kind === 0)
      out.push({ what: "exec without streams", bytes: REQ("POST", `/exec/default/p/c?command=id&stdout=${junk()}&stdin=${junk()}`, UPGRADE_SPDY), ok: [400] });
    else if (kind === 1)
      out.push({
        what: "WebSocket bad ports",
        bytes: REQ("GET", `/portForward/default/p?port=${r.pick(["0", "65536", "-1", "abc", "", "80,", ",", "1e3"])}`, UPGRADE_WS),
        ok: [400],
      });
    else if (kind === 2)
      out.push({
        what: "exec wrong method",
        bytes: REQ(r.pick(["PUT", "DELETE", "PATCH"]), `/exec/default/p/c?output=1`, r.next() < 0.5 ? UPGRADE_SPDY : []),
        ok: [405],
      });
    else out.push({ what: "run wrong method", bytes: REQ(r.pick(["GET", "PUT", "DELETE"]), `/run/default/p/c?cmd=${junk()}`), ok: [405] });
  }
  return out;
}

function malformedCases(r: Rand, n: number): HostileCase[] {
  const fixed: [string, Buffer, number[]][] = [
    ["garbage", Buffer.from("\x00\x01\x02\x03garbage\r\n\r\n", "latin1"), [400, 0]],
    ["TLS ClientHello on a plain port", Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00]), [400, 0]],
    ["HTTP/2 preface", Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), [400, 505]],
    ["no Host on HTTP/1.1", Buffer.from("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"), [400]],
    ["space in a header name", Buffer.from("GET /pods HTTP/1.1\r\nHost: x\r\nBad Header: v\r\nConnection: close\r\n\r\n"), [400]],
    [
      "two Content-Lengths",
      Buffer.from("POST /run/a/b/c HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\nConnection: close\r\n\r\nhello"),
      [400],
    ],
    [
      "bad chunk size",
      Buffer.from("POST /run/a/b/c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"),
      [400, 404],
    ],
    ["unknown method", Buffer.from("FOO /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), [400, 405]],
    ["unknown method on exec", Buffer.from("BREW /exec/a/b/c HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n"), [400, 405]],
    ["HTTP/9.9", Buffer.from("GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n"), [400, 505]],
    // RFC 9112 lets a server refuse bare-LF line ends; Bun does, with 505.
    ["bare LF", Buffer.from("GET /pods HTTP/1.1\nHost: x\n\n"), [400, 505]],
    ["NUL in a header value", Buffer.from("GET /pods HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\nConnection: close\r\n\r\n", "latin1"), [400]],
    ["CRLF injection in the target", Buffer.from("GET /exec/a\r\nX: y/b/c HTTP/1.1\r\nHost: x\r\n\r\n"), [400]],
    ["control bytes in the target", Buffer.from("GET /run/a/b\x01c HTTP/1.1\r\nHost: x\r\n\r\n", "latin1"), [400]],
    ["a bad escape in the path", REQ("GET", "/containerLogs/%zz/p/c"), [400]],
    ["upgrade on an unknown path", REQ("GET", "/nope/a/b", UPGRADE_WS), [404]],
    [
      "upgrade with a hostile Connection",
      REQ("POST", "/exec/a/b/c?output=1", ["Connection: upgrade, upgrade, " + "x,".repeat(2000), "Upgrade: SPDY/3.1"]),
      [404],
    ],
  ];
  const out: HostileCase[] = [];
  for (let i = 0; i < n; i++) {
    const [what, bytes, ok] = fixed[i % fixed.length]!;
    // Random bytes spliced into a request line now and then.
    if (i >= fixed.length && r.next() < 0.3) {
      const noise = Buffer.from(Array.from({ length: 1 + r.int(64) }, () => r.int(256)));
      out.push({
        what: "random bytes before a request",
        bytes: Buffer.concat([noise, Buffer.from(" / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]),
        ok: [400, 405],
      });
    } else out.push({ what, bytes, ok });
  }
  return out;
}

function hugeCases(r: Rand, n: number): HostileCase[] {
  const out: HostileCase[] = [];
  for (let i = 0; i < n; i++) {
    const kind = r.int(4);
    const big = (min: number, max: number) => "a".repeat(min + r.int(max - min));
    if (kind === 0) out.push({ what: "huge header", bytes: REQ("GET", "/pods", [`X-Big: ${big(64 << 10, 4 << 20)}`]), ok: [431, 400, 0] });
    else if (kind === 1) out.push({ what: "huge path", bytes: REQ("GET", `/logs/${big(64 << 10, 2 << 20)}`), ok: [431, 414, 400, 0] });
    else if (kind === 2)
      out.push({
        what: "huge header on an upgrade",
        bytes: REQ("POST", "/exec/a/b/c?output=1", [...UPGRADE_SPDY, `X-Big: ${big(1 << 10, 3 << 20)}`]),
        ok: [404, 431, 400, 0],
      });
    else
      out.push({
        what: "huge body",
        bytes: REQ(r.pick(["POST", "PUT"]), r.pick(["/run/a/b/c?cmd=id", "/pods", "/healthz"]), [], big(1 << 20, 8 << 20)),
        ok: [404, 405, 413, 0],
      });
  }
  return out;
}

describe("kubelet port under hostile requests (the binary)", () => {
  let dir: string;
  let p: BunletProcess;
  let port: number;

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), `bunlet-abuse-${process.pid}-`));
    // The streaming and log handlers are what is under test here: opted in on the unauthenticated port.
    ({ p, port } = await startAgentWithoutRuntime(dir, ["--unsafe-loopback-debug-handlers"]));
  }, 180_000);

  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const runAll = (cases: HostileCase[]) => runCases(cases, () => net.connect(port, "127.0.0.1"));

  test("1,000+ hostile requests: the right 4xx each, the process up, RSS bounded, fds back", async () => {
    const r = seededRand(13);
    // Warm-up: the first requests load code and grow pools; the baseline is taken after them.
    await runAll([...unknownPodCases(r, 50), ...traversalCases(r, 20), ...hugeCases(r, 10)]);
    const rss0 = procRssKiB(p.pid);
    const fds0 = procFds(p.pid);
    const cases = [...traversalCases(r, 250), ...unknownPodCases(r, 450), ...badQueryCases(r, 200), ...malformedCases(r, 150), ...hugeCases(r, 60)];
    expect(cases.length).toBeGreaterThanOrEqual(1000);
    const wrong = await runAll(cases);
    expect(wrong.slice(0, 20)).toEqual([]);
    expect(p.proc.exitCode).toBeNull();
    expect(await (await fetch(`http://127.0.0.1:${port}/healthz/ping`)).text()).toBe("ok");
    // Every connection the server closed is gone from its fd table (closing is asynchronous).
    await pollUntil(() => procFds(p.pid) <= fds0 + 4, `fds back near ${fds0} (now ${procFds(p.pid)})`, 30_000, 100);
    // The same requests three times more. RSS is a sawtooth here: the JS heap grows by tens of MiB
    // between full collections, and the first multi-MiB bodies set the allocator's high-water mark. The
    // lowest RSS of the later rounds is the floor a leak would raise by as much again with each round.
    const later: number[] = [];
    for (let round = 0; round < 3; round++) {
      expect((await runAll(cases)).slice(0, 20)).toEqual([]);
      later.push(procRssKiB(p.pid));
    }
    const growthMiB = (Math.min(...later) - rss0) / 1024;
    console.log(
      `kubelet abuse: 4 × ${cases.length} requests, RSS ${(rss0 / 1024).toFixed(1)} MiB → +${growthMiB.toFixed(1)} MiB at the lowest later round, fds ${fds0} → ${procFds(p.pid)}`,
    );
    expect(growthMiB).toBeLessThan(96);
  }, 300_000);

  test("slow clients are cut off: silent, a half request line, dripped headers, a dripped body", async () => {
    const fds0 = procFds(p.pid);
    // Dripping clients keep sending a byte a second; the server must still end them.
    const clients: SlowClient[] = [
      { what: "silent", first: "" },
      { what: "half a request line", first: "GET /hea" },
      { what: "dripped headers", first: "GET /exec/a/b/c HTTP/1.1\r\n", drip: "X-Slow: 1\r\n" },
      { what: "dripped headers", first: "GET /pods HTTP/1.1\r\n", drip: "X-Slow: 1\r\n" },
      { what: "a dripped body", first: "POST /run/a/b/c HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", drip: "a" },
    ];
    const connect = (onOpen: (s: net.Socket) => void) => {
      const s = net.connect(port, "127.0.0.1", () => onOpen(s));
      return s;
    };
    // Bounded by the server's own limits (first-request sniffing 10 s, then Bun's header and idle timeouts).
    await slowClientsClosed(connect, clients, 6, 90_000);
    expect(p.proc.exitCode).toBeNull();
    await pollUntil(() => procFds(p.pid) <= fds0 + 4, "fds back after the slow clients", 30_000, 100);
  }, 120_000);
});

describe("the secured kubelet port (TLS, x509 client certificates) under hostile requests", () => {
  let dir: string;
  let p: BunletProcess;
  let port: number;
  let client: { cert: Buffer; key: Buffer };

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), `bunlet-abuse-tls-${process.pid}-`));
    const pki = await makeTestPki(dir, [["apiserver", "kube-apiserver-kubelet-client", "system:masters"]]);
    client = { cert: readFileSync(pki.client("apiserver").cert), key: readFileSync(pki.client("apiserver").key) };
    const config = join(dir, "kubelet.yaml");
    writeFileSync(
      config,
      [
        "apiVersion: kubelet.config.k8s.io/v1beta1",
        "kind: KubeletConfiguration",
        "address: 127.0.0.1",
        `authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: ${pki.caFile} } }`,
        "authorization: { mode: AlwaysAllow }",
        "",
      ].join("\n"),
    );
    ({ p, port } = await startAgentWithoutRuntime(dir, ["--config", config, `--cert-dir=${join(dir, "pki")}`]));
  }, 180_000);

  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const withCert = () => tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false, cert: client.cert, key: client.key });
  const anonymous = () => tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false });

  test("with the API server's certificate: the same answers as on the plain port", async () => {
    const r = seededRand(1013);
    const cases = [...traversalCases(r, 60), ...unknownPodCases(r, 120), ...badQueryCases(r, 60), ...malformedCases(r, 40), ...hugeCases(r, 20)];
    expect((await runCases(cases, withCert)).slice(0, 20)).toEqual([]);
  }, 300_000);

  test("without a certificate: 401 (or the parser's 4xx/505 before authentication), never an answer from a handler", async () => {
    const r = seededRand(2013);
    const cases = [...traversalCases(r, 60), ...unknownPodCases(r, 120), ...badQueryCases(r, 60), ...malformedCases(r, 40), ...hugeCases(r, 20)].map((c) => ({
      ...c,
      ok: [401, 400, 405, 431, 505, ...(c.ok.includes(0) ? [0] : [])],
    }));
    expect((await runCases(cases, anonymous)).slice(0, 20)).toEqual([]);
  }, 300_000);

  test("plain HTTP, garbage and truncated handshakes on the TLS port cost only their connection", async () => {
    const fds0 = procFds(p.pid);
    const r = seededRand(3013);
    const junk = Array.from({ length: 100 }, (_, i) => ({
      what: "not TLS",
      bytes: i % 2 ? REQ("GET", "/pods") : Buffer.concat([Buffer.from([0x16, 0x03, 0x01]), Buffer.from(Array.from({ length: r.int(300) }, () => r.int(256)))]),
      ok: [0, 400],
    }));
    expect(await runCases(junk, () => net.connect(port, "127.0.0.1"))).toEqual([]);
    // Truncated handshakes that then say nothing: the server lets them go (handshake timeout).
    await Promise.all(
      Array.from(
        { length: 10 },
        () =>
          new Promise<void>((resolve) => {
            const s = net.connect(port, "127.0.0.1", () => s.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])));
            s.on("error", () => {});
            s.on("close", () => resolve());
          }),
      ),
    );
    expect(p.proc.exitCode).toBeNull();
    const ok = await new Promise<string>((resolve, reject) => {
      const s = withCert();
      let got = "";
      s.on("data", (d) => (got += d));
      s.on("close", () => resolve(got));
      s.on("error", reject);
      s.write("GET /healthz/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    });
    expect(ok).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    await pollUntil(() => procFds(p.pid) <= fds0 + 4, "fds back after the junk", 30_000, 100);
  }, 120_000);
});
