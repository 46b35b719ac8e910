// ~20,000 half-open connections would take every fd. Each listener caps concurrent
// connections per server and per client address (closed at accept), and maxOpenFiles is acted on.
import { afterEach, describe, expect, test } from "bun:test";
import net from "node:net";
import tls from "node:tls";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultKubeletConfiguration } from "../../src/config/defaults.ts";
import { resolveServing } from "../../src/server/serving.ts";
import { makeTestPki } from "../support/pki.ts";
import { getrlimit, RLIMIT_NOFILE, setrlimit } from "../../ffi/libc.ts";
import { applyMaxOpenFiles } from "../../src/node/open-files.ts";
import { defaultConnectionLimits } from "../../src/server/connections.ts";
import { startServers, type RunningServers } from "../../src/server/listen.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { pollUntil } from "../support/wait.ts";

let running: RunningServers | undefined;
const open: (net.Socket | tls.TLSSocket)[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) s.destroy();
  await running?.stop();
  running = undefined;
});

/** `n` idle (half-open) connections from `from`; counts those the server closed. */
function flood(port: number, from: string, n: number) {
  const state = { connected: 0, closedByServer: 0 };
  for (let i = 0; i < n; i++) {
    const s = net.connect({ port, host: "127.0.0.1", localAddress: from });
    s.on("connect", () => state.connected++);
    s.on("error", () => {});
    s.on("end", () => state.closedByServer++);
    s.on("close", () => {});
    open.push(s);
  }
  return state;
}

const healthz = async (port: number) => {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).status;
  } catch {
    return "refused";
  }
};

describe("connection caps", () => {
  test("per client address: a flood from one address is cut at the cap; others are served", async () => {
    const metrics = createRegistry();
    running = await startServers(
      {
        address: "127.0.0.1",
        port: 0,
        readOnlyPort: 0,
        healthzBindAddress: "127.0.0.1",
        healthzPort: 0,
        enableServer: true,
        connectionLimits: { maxConnections: 30, maxPerClient: 5 },
      },
      { getPods: () => [], metrics },
    );
    const port = running.get("main")!.port;
    const f = flood(port, "127.0.0.2", 40);
    await pollUntil(() => f.connected === 40 && f.closedByServer === 35, "35 of 40 connections from 127.0.0.2 closed by the server");
    expect(await healthz(port)).toBe(200);
    expect(metrics.render()).toContain('bunlet_http_connections_refused_total{server_type="readwrite",cap="client"} 35');
  });

  test("per server: past maxConnections new connections are closed until some go away", async () => {
    running = await startServers(
      {
        address: "127.0.0.1",
        port: 0,
        readOnlyPort: 0,
        healthzBindAddress: "127.0.0.1",
        healthzPort: 0,
        enableServer: true,
        connectionLimits: { maxConnections: 12, maxPerClient: 4 },
      },
      { getPods: () => [], metrics: createRegistry() },
    );
    const port = running.get("main")!.port;
    const floods = ["127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"].map((a) => flood(port, a, 4)); // 16 > 12
    await pollUntil(() => floods.every((f) => f.connected === 4) && floods.reduce((n, f) => n + f.closedByServer, 0) === 4, "4 of 16 closed");
    expect(await healthz(port)).toBe("refused"); // full: refused at accept, not queued
    for (const s of open.splice(0)) s.destroy();
    await pollUntil(async () => (await healthz(port)) === 200, "served again once the flood is gone");
  });

  test("the API server's connections (verified client certificate) leave their address's cap; anonymous ones keep it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bunlet-caps-"));
    try {
      const pki = await makeTestPki(dir, [["apiserver", "kube-apiserver-kubelet-client", "system:masters"]]);
      const c = defaultKubeletConfiguration();
      c.address = "127.0.0.1";
      c.authentication.x509.clientCAFile = pki.caFile;
      c.authentication.webhook.enabled = false;
      c.authorization.mode = "AlwaysAllow";
      const secure = await resolveServing(c, { nodeName: "localhost", certDir: join(dir, "pki") });
      const metrics = createRegistry();
      running = await startServers(
        {
          address: "127.0.0.1",
          port: 0,
          readOnlyPort: 0,
          healthzBindAddress: "127.0.0.1",
          healthzPort: 0,
          secure,
          connectionLimits: { maxConnections: 40, maxPerClient: 3 },
        },
        { getPods: () => [], metrics },
      );
      const port = running.get("main")!.port;
      const cert = { cert: readFileSync(pki.client("apiserver").cert), key: readFileSync(pki.client("apiserver").key) };
      const connect = (withCert: boolean) =>
        new Promise<tls.TLSSocket | "refused">((resolve) => {
          const s = tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false, ...(withCert ? cert : {}) });
          s.once("secureConnect", () => resolve(s));
          s.once("error", () => resolve("refused"));
          s.once("close", () => resolve("refused"));
        });
      // Ten long-lived streams through the API server (one address), one after the other.
      const apiserver: tls.TLSSocket[] = [];
      for (let i = 0; i < 10; i++) {
        const s = await connect(true);
        expect(s).not.toBe("refused");
        apiserver.push(s as tls.TLSSocket);
        open.push(s as tls.TLSSocket);
      }
      await Bun.sleep(100);
      expect(apiserver.every((s) => !s.destroyed)).toBe(true);
      // Anonymous connections from the same address: the cap of 3 still holds for them.
      for (let i = 0; i < 5; i++) {
        const s = await connect(false);
        if (s !== "refused") open.push(s);
      }
      await pollUntil(
        () => metrics.render().includes('bunlet_http_connections_refused_total{server_type="readwrite",cap="client"} 2'),
        "2 anonymous connections refused at the address cap",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("default caps follow the fd limit", () => {
    expect(defaultConnectionLimits(1_000_000)).toEqual({ maxConnections: 4096, maxPerClient: 512 });
    expect(defaultConnectionLimits(20_000)).toEqual({ maxConnections: 1111, maxPerClient: 277 });
    expect(defaultConnectionLimits(256)).toEqual({ maxConnections: 16, maxPerClient: 4 });
  });
});

describe("maxOpenFiles", () => {
  test("raises RLIMIT_NOFILE as upstream (soft and hard), capped by fs.nr_open; never lowers", () => {
    const calls: unknown[] = [];
    const get = () => ({ cur: 1024, max: 4096 });
    expect(applyMaxOpenFiles(1_000_000, { getrlimit: get, setrlimit: (_r, l) => void calls.push(l), nrOpen: 1_048_576 })).toBe(1_000_000);
    expect(applyMaxOpenFiles(2_000_000, { getrlimit: get, setrlimit: (_r, l) => void calls.push(l), nrOpen: 1_048_576 })).toBe(1_048_576);
    expect(applyMaxOpenFiles(512, { getrlimit: get, setrlimit: (_r, l) => void calls.push(l), nrOpen: 1_048_576 })).toBe(1024);
    expect(calls).toEqual([
      { cur: 1_000_000, max: 1_000_000 },
      { cur: 1_048_576, max: 1_048_576 },
    ]);
    // Without CAP_SYS_RESOURCE: the soft limit up to the hard one.
    const eperm = (_r: number, l: { cur: number; max: number }) => {
      if (l.max > 4096) throw new Error("setrlimit: EPERM");
      calls.push(l);
    };
    expect(applyMaxOpenFiles(1_000_000, { getrlimit: get, setrlimit: eperm, nrOpen: 1_048_576 })).toBe(4096);
    expect(calls.at(-1)).toEqual({ cur: 4096, max: 4096 });
  });

  test("the real rlimit: a low soft limit is raised (to the hard one without CAP_SYS_RESOURCE)", () => {
    const before = getrlimit(RLIMIT_NOFILE);
    setrlimit(RLIMIT_NOFILE, { cur: 1024, max: before.max });
    try {
      const got = applyMaxOpenFiles(1_000_000);
      expect(got).toBeGreaterThan(1024);
      expect(got === 1_000_000 || got === before.max).toBe(true);
      expect(getrlimit(RLIMIT_NOFILE).cur).toBe(got);
    } finally {
      setrlimit(RLIMIT_NOFILE, before);
    }
  });
});
