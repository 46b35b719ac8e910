// The streaming and log endpoints of the built binary under generated hostile requests
// (test/support/hostile.ts): upgrade heads with odd Connection/Upgrade values, bare LF, obs-fold and
// control bytes, heads past the header cap, invalid PodLogOptions, unknown pods and containers,
// traversal, slow and half-open clients. Each gets its right 4xx (or a refusal); two rounds of a
// thousand leave RSS where the first left it and the fds where they were; and a pod the node knows
// keeps having its logs served, by the same port, throughout. On the plain loopback port (opted in
// with --unsafe-loopback-debug-handlers) and on the TLS port with the API server's certificate.
// The known pod is a static pod on the test containerd, printing three lines then sleeping.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import tls from "node:tls";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeStaticPodConfig } from "../support/agent.ts";
import { ensureBuilt, freePort, killAll, spawnBunlet, startAgentWithoutRuntime, waitForHealthz, type BunletProcess } from "../support/binary.ts";
import { acquireContainerd, canRunContainerd, removeSandboxes, tearDownPods, type TestContainerd } from "../support/containerd.ts";
import { logsCases, slowStreamingClients, streamingUpgradeCases, type KnownPod } from "../support/hostile.ts";
import { procFds, runCases, settledRssKiB, slowClientsClosed, type Connect } from "../support/hostile-wire.ts";
import { makeTestPki } from "../support/pki.ts";
import { seededRand } from "../support/rand.ts";
import { pollUntil } from "../support/wait.ts";

const NODE = `abuse-${process.pid}`;

interface Port {
  p: BunletProcess;
  /** A raw connection to the main port (TLS with the API server's certificate, or plain). */
  connect: Connect;
  /** GET on the main port with the same credentials. */
  get(path: string): Promise<{ status: number; body: string }>;
  pod: KnownPod;
}

const cgroupRootOf = (secure: boolean) => `/bunlet-stream-abuse-${secure ? "tls" : "plain"}-${process.pid}`;
const nodeOf = (secure: boolean) => `${NODE}-${secure ? "tls" : "plain"}`;

/** Starts the binary with a static pod that prints "hello 1..3" then sleeps; waits until its log has all three. */
async function startAgent(dir: string, ctd: TestContainerd, secure: boolean): Promise<Port> {
  const port = freePort();
  const healthz = freePort();
  const node = nodeOf(secure);
  mkdirSync(join(dir, "manifests"), { recursive: true });
  writeFileSync(
    join(dir, "manifests", "web.yaml"),
    [
      "apiVersion: v1",
      "kind: Pod",
      "metadata: { name: web, namespace: default }",
      `spec: { terminationGracePeriodSeconds: 1, containers: [{ name: app, image: "${ctd.images.busybox}", command: [sh, -c, "echo hello 1; echo hello 2; echo hello 3; exec sleep 3600"] }] }`,
      "",
    ].join("\n"),
  );
  const extra = ["address: 127.0.0.1"];
  let cert: { cert: Buffer; key: Buffer } | undefined;
  if (secure) {
    const pki = await makeTestPki(dir, [["apiserver", "kube-apiserver-kubelet-client", "system:masters"]]);
    cert = { cert: readFileSync(pki.client("apiserver").cert), key: readFileSync(pki.client("apiserver").key) };
    extra.push(
      `authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: ${pki.caFile} } }`,
      "authorization: { mode: AlwaysAllow }",
    );
  }
  const config = writeStaticPodConfig(
    join(dir, "kubelet.yaml"),
    { manifests: join(dir, "manifests"), endpoint: ctd.endpoint, cgroupRoot: cgroupRootOf(secure), podLogsDir: join(dir, "pods"), port },
    extra,
  );
  const p = spawnBunlet([
    "--config",
    config,
    `--root-dir=${join(dir, "root")}`,
    `--cert-dir=${join(dir, "pki")}`,
    `--hostname-override=${node}`,
    `--healthz-port=${healthz}`,
    ...(secure ? [] : ["--unsafe-loopback-debug-handlers"]),
  ]);
  await waitForHealthz(p, `http://127.0.0.1:${healthz}/healthz`);
  const connect: Connect = secure ? () => tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false, ...cert! }) : () => net.connect(port, "127.0.0.1");
  const get = async (path: string) => {
    const res = await fetch(`${secure ? "https" : "http"}://127.0.0.1:${port}${path}`, secure ? { tls: { rejectUnauthorized: false, ...cert! } } : {});
    return { status: res.status, body: await res.text() };
  };
  const pod = { namespace: "default", name: `web-${node}`, container: "app" };
  await pollUntil(
    async () => (await get(`/containerLogs/default/${pod.name}/app?tailLines=1`).catch(() => ({ body: "" }))).body === "hello 3\n",
    "the known pod's three lines in its log",
    120_000,
    250,
  );
  return { p, connect, get, pod };
}

/** Asks for the known pod's last log line every 100 ms until stopped; returns what was not right. */
function watchKnownPod(a: Port): { stop(): Promise<string[]> } {
  const wrong: string[] = [];
  let asked = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      asked++;
      const t0 = performance.now();
      const r = await a.get(`/containerLogs/${a.pod.namespace}/${a.pod.name}/${a.pod.container}?tailLines=1`).catch((e) => ({ status: 0, body: String(e) }));
      const ms = performance.now() - t0;
      if (r.status !== 200 || r.body !== "hello 3\n" || ms > 5000) wrong.push(`${r.status} ${JSON.stringify(r.body.slice(0, 60))} in ${ms.toFixed(0)} ms`);
      await Bun.sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      if (asked < 5) wrong.push(`only ${asked} requests made`);
      return wrong;
    },
  };
}

function hostileRound(seed: number, pod: KnownPod, streaming: number, logs: number) {
  const r = seededRand(seed);
  return [...streamingUpgradeCases(r, streaming), ...logsCases(r, logs, pod)];
}

for (const secure of [false, true]) {
  describe.skipIf(!canRunContainerd())(
    secure
      ? "the TLS main port (API server's certificate): streaming and logs under hostile requests"
      : "the plain loopback port (opted in): streaming and logs under hostile requests",
    () => {
      let dir: string;
      let ctd: TestContainerd;
      let a: Port;
      beforeAll(async () => {
        await ensureBuilt();
        ctd = await acquireContainerd();
        dir = mkdtempSync(join(tmpdir(), `bunlet-stream-abuse-${secure ? "tls" : "plain"}-${process.pid}-`));
        a = await startAgent(dir, ctd, secure);
      }, 300_000);
      afterAll(async () => {
        await a?.p.stop("SIGTERM", 5000);
        await killAll();
        await tearDownPods(ctd, () => removeSandboxes(ctd.cri, nodeOf(secure)), cgroupRootOf(secure), dir);
      }, 120_000);

      test("two rounds of 1,100 hostile requests: each its right 4xx, RSS flat between rounds, fds back, the known pod's logs answered throughout", async () => {
        // Warm-up: code loaded and pools grown before the baseline.
        expect(await runCases(hostileRound(secure ? 70 : 7, a.pod, 150, 100), a.connect)).toEqual([]);
        const fds0 = procFds(a.p.pid);
        const known = watchKnownPod(a);
        const first = hostileRound(secure ? 71 : 17, a.pod, 600, 500);
        expect(first.length).toBeGreaterThanOrEqual(1000);
        expect((await runCases(first, a.connect)).slice(0, 20)).toEqual([]);
        const rss1 = await settledRssKiB(a.p.pid);
        expect((await runCases(hostileRound(secure ? 72 : 27, a.pod, 600, 500), a.connect)).slice(0, 20)).toEqual([]);
        const rss2 = await settledRssKiB(a.p.pid);
        expect(await known.stop()).toEqual([]);
        expect(a.p.proc.exitCode).toBeNull();
        await pollUntil(() => procFds(a.p.pid) <= fds0 + 4, `fds back near ${fds0} (now ${procFds(a.p.pid)})`, 30_000, 100);
        const growthMiB = (rss2 - rss1) / 1024;
        console.log(
          `streaming abuse (${secure ? "TLS" : "plain"}): RSS after the first batch ${(rss1 / 1024).toFixed(1)} MiB, after the second ${(rss2 / 1024).toFixed(1)} MiB, fds ${fds0} → ${procFds(a.p.pid)}`,
        );
        expect(growthMiB).toBeLessThan(16);
      }, 300_000);

      test("slow and half-open streaming clients are let go by the server; the known pod's logs answered meanwhile", async () => {
        const fds0 = procFds(a.p.pid);
        const known = watchKnownPod(a);
        const connect = (onOpen: (s: net.Socket) => void) => {
          const s = a.connect();
          s.once(secure ? "secureConnect" : "connect", () => onOpen(s));
          return s;
        };
        // The server's header timeout is 10 s; 30 s leaves room for a loaded machine.
        const ms = await slowClientsClosed(connect, slowStreamingClients(a.pod), 8, 30_000);
        expect(await known.stop()).toEqual([]);
        expect(ms).toBeLessThan(30_000);
        await pollUntil(() => procFds(a.p.pid) <= fds0 + 4, "fds back after the slow clients", 30_000, 100);
      }, 60_000);
    },
  );
}

describe("the plain loopback port without the opt-in: the same requests are all refused", () => {
  let dir: string;
  let p: BunletProcess;
  let port: number;
  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), `bunlet-stream-abuse-off-${process.pid}-`));
    ({ p, port } = await startAgentWithoutRuntime(dir));
  }, 180_000);
  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  test("1,100 streaming and log requests: 403 (or the parser's refusal), never an answer from a handler", async () => {
    const pod = { namespace: "default", name: "web", container: "app" };
    // A target with a dot segment normalises out of those paths (/exec/../x → /x): the router's 404.
    const dotSegment = (c: { bytes: Buffer }) => /^\S+ \S*\/(\.\.|%2e%2e)(\/|\?| )/i.test(c.bytes.subarray(0, 4096).toString("latin1"));
    const cases = hostileRound(37, pod, 600, 500).map((c) => ({ ...c, ok: [403, 400, 431, 505, 0, ...(dotSegment(c) ? [404] : [])] }));
    const fds0 = procFds(p.pid);
    expect((await runCases(cases, () => net.connect(port, "127.0.0.1"))).slice(0, 20)).toEqual([]);
    expect(p.proc.exitCode).toBeNull();
    await pollUntil(() => procFds(p.pid) <= fds0 + 4, "fds back", 30_000, 100);
  }, 120_000);
});
