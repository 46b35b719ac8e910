// Which client certificate a request on the TLS main port is attributed to (src/server/tls/
// secure-server.ts + src/server/http-on-socket.ts): always its own connection's. The former shape
// handed the plaintext to a private loopback listener and found the identity by the pipe's source
// port, kept 2 s after close: a local process connecting from that port inherited the identity.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import tls from "node:tls";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ClientCertificate } from "../../../src/server/auth/types.ts";
import { peerIdentity, startSecureServer, type SecureServer } from "../../../src/server/tls/secure-server.ts";
import { loadOrGenerateKeyCert } from "../../../src/server/tls/self-signed.ts";
import { makeTestPki, type TestPki } from "../../support/pki.ts";

let dir: string;
let pki: TestPki;
let pair: { cert: Buffer; key: Buffer };
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bunlet-identity-"));
  pki = await makeTestPki(dir, [
    ["alice", "alice", "devs"],
    ["bob", "bob", "ops"],
  ]);
  const p = await loadOrGenerateKeyCert(join(dir, "serving"), "localhost");
  pair = { cert: readFileSync(p.certFile), key: readFileSync(p.keyFile) };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let server: SecureServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const who = (c: ClientCertificate) => (c.present && c.verified ? c.commonName : "anonymous");
const start = async () =>
  (server = await startSecureServer({
    hostname: "127.0.0.1",
    port: 0,
    ...pair,
    clientCA: readFileSync(pki.caFile),
    handler: async (_req, cert) => new Response(who(cert)),
  }));

/** 127.0.0.1 TCP sockets of this network namespace: [local port, remote port, state]. */
function loopbackSockets(): [number, number, string][] {
  const rows = readFileSync("/proc/self/net/tcp", "utf8").trim().split("\n").slice(1);
  return rows
    .map((r) => r.trim().split(/\s+/))
    .filter((f) => f[1]!.startsWith("0100007F:"))
    .map((f) => [parseInt(f[1]!.split(":")[1]!, 16), parseInt(f[2]!.split(":")[1]!, 16), f[3]!]);
}
const listeners = () =>
  new Set(
    loopbackSockets()
      .filter(([, , st]) => st === "0A")
      .map(([p]) => p),
  );

/** One request on a fresh connection; resolves with the body. */
function ask(connect: () => net.Socket, path = "/who"): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect();
    let got = "";
    s.on("data", (d) => (got += d));
    s.on("close", () => resolve(got.slice(got.indexOf("\r\n\r\n") + 4)));
    s.on("error", reject);
    s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  });
}

describe("the TLS main port's identities", () => {
  test("no private loopback listener carries requests, so no port can inherit an identity", async () => {
    const before = listeners();
    const s = await start();
    const added = [...listeners()].filter((p) => !before.has(p) && p !== s.port);
    const inherited: string[] = [];
    for (const inner of added) {
      // The former attack: a connection whose pipe to `inner` just closed leaves its source port to be reused.
      // The client keeps its side open after the answer (as it may): the pipe is gone, its identity was not.
      const alice = tls.connect({
        port: s.port,
        host: "127.0.0.1",
        rejectUnauthorized: false,
        allowHalfOpen: true,
        cert: readFileSync(pki.client("alice").cert),
        key: readFileSync(pki.client("alice").key),
      } as tls.ConnectionOptions);
      await new Promise((r) => alice.once("secureConnect", r));
      await Bun.sleep(50);
      const pipePort = loopbackSockets().find(([, remote, st]) => remote === inner && st === "01")?.[0];
      alice.resume();
      alice.write("GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      await new Promise((r) => alice.once("end", r));
      if (pipePort === undefined) continue;
      await Bun.sleep(50);
      const body = await ask(() => net.connect({ port: inner, host: "127.0.0.1", localAddress: "127.0.0.1", localPort: pipePort })).catch(() => "refused");
      alice.destroy();
      if (body !== "anonymous" && body !== "refused") inherited.push(`${inner} from :${pipePort} → ${body}`);
    }
    expect(inherited).toEqual([]);
    expect(added).toEqual([]);
  });

  test("keep-alive connections with different certificates, interleaved: each request is its connection's", async () => {
    const s = await start();
    const open = (name?: string) =>
      tls.connect({
        port: s.port,
        host: "127.0.0.1",
        rejectUnauthorized: false,
        ...(name ? { cert: readFileSync(pki.client(name).cert), key: readFileSync(pki.client(name).key) } : {}),
      });
    const conns = { alice: open("alice"), bob: open("bob"), anonymous: open() };
    const answers: Record<string, string[]> = { alice: [], bob: [], anonymous: [] };
    for (const [name, c] of Object.entries(conns))
      c.on("data", (d) => answers[name]!.push(...[...d.toString().matchAll(/\r\n\r\n(alice|bob|anonymous)/g)].map((m) => m[1]!)));
    for (let i = 0; i < 5; i++) for (const c of Object.values(conns)) c.write("GET /who HTTP/1.1\r\nHost: x\r\n\r\n");
    const want = { alice: Array(5).fill("alice"), bob: Array(5).fill("bob"), anonymous: Array(5).fill("anonymous") };
    for (let i = 0; i < 100 && JSON.stringify(answers) !== JSON.stringify(want); i++) await Bun.sleep(20);
    for (const c of Object.values(conns)) c.destroy();
    expect(answers).toEqual(want);
  });
});

describe("peerIdentity", () => {
  const socket = (subject: Record<string, string | string[]>, authorized = true) =>
    ({ getPeerCertificate: () => ({ subject }), authorized, authorizationError: authorized ? undefined : "unable to verify" }) as unknown as tls.TLSSocket;
  test.each([
    [{ CN: "alice", O: "devs" }, "alice", ["devs"]],
    // Go's x509 (pkix.Name.FillFromRDNSequence) keeps the LAST CommonName; RBAC then sees that user.
    [{ CN: ["system:anonymous-looking", "mallory"], O: ["a", "b"] }, "mallory", ["a", "b"]],
    [{ O: "x" }, "", ["x"]],
  ] as const)("%j → user %j groups %j", (subject, cn, orgs) => {
    expect(peerIdentity(socket(subject as Record<string, string | string[]>), true)).toEqual({
      present: true,
      verified: true,
      commonName: cn,
      organizations: [...orgs],
    });
  });

  test("not requested (no client CA) or not verified", () => {
    expect(peerIdentity(socket({ CN: "alice" }), false)).toEqual({ present: false });
    expect(peerIdentity(socket({ CN: "alice" }, false), true)).toMatchObject({ present: true, verified: false });
  });
});
