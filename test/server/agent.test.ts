// src/agent.ts in-process (the composition root that owns the servers): start/stop order,
// extension points, lock handling. The binary-level behaviour is in test/e2e/agent.test.ts.
import { afterEach, describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgent, type Agent, type AgentInput } from "../../src/agent-run.ts";
import { ConfigError } from "../../src/config/errors.ts";
import { defaultKubeletConfiguration } from "../../src/config/defaults.ts";
import type { KubeletConfiguration } from "../../src/config/kubelet-config.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { pollUntil } from "../support/wait.ts";

const agents: Agent[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function input(flags: AgentInput["flags"] = {}): AgentInput {
  const config = {
    address: "0.0.0.0",
    port: 0,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: 0,
    enableServer: true,
    enableDebuggingHandlers: true,
  } as unknown as KubeletConfiguration;
  return { config, flags };
}

function track(a: Agent): Agent {
  agents.push(a);
  return a;
}

describe("createAgent", () => {
  test("starts components before the servers and stops them in reverse, once", async () => {
    const events: string[] = [];
    const comp = (name: string) => ({
      name,
      start: () => void events.push(`start ${name}`),
      stop: () => void events.push(`stop ${name}`),
    });
    const agent = track(createAgent(input(), { components: [comp("pods"), comp("eviction")] }));
    await agent.start();
    expect(events).toEqual(["start pods", "start eviction"]);
    expect(agent.servers()?.get("main")).toBeDefined();
    await Promise.all([agent.stop(), agent.stop()]);
    expect(events).toEqual(["start pods", "start eviction", "stop eviction", "stop pods"]);
    expect(await agent.done).toEqual({ kind: "stopped" });
  });

  test("serves the injected providers: pods, summary, configz and a shared registry", async () => {
    const metrics = createRegistry();
    metrics.counter({ name: "kubelet_evictions", help: "evictions", labelNames: ["eviction_signal"] }).inc({ eviction_signal: "memory.available" });
    const agent = track(
      createAgent(input(), {
        metrics,
        getPods: () => [{ metadata: { name: "static-web" } }],
        getSummary: () => ({ node: { nodeName: "n1" }, pods: [] }),
        configz: (c) => ({ port: c.port }),
      }),
    );
    await agent.start();
    const url = agent.servers()!.get("main")!.url;
    expect(((await (await fetch(`${url}/pods`)).json()) as { items: unknown[] }).items).toEqual([{ metadata: { name: "static-web" } }]);
    expect(await (await fetch(`${url}/stats/summary`)).json()).toEqual({ node: { nodeName: "n1" }, pods: [] });
    expect(await (await fetch(`${url}/configz`)).json()).toEqual({ kubeletconfig: { port: 0 } });
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('kubelet_evictions{eviction_signal="memory.available"} 1');
    expect(agent.metrics).toBe(metrics);
  });

  test("without a registry it creates one with process metrics", async () => {
    const agent = track(createAgent(input()));
    await agent.start();
    const text = await (await fetch(`${agent.servers()!.get("main")!.url}/metrics`)).text();
    expect(text).toContain("process_resident_memory_bytes ");
    expect(text).toMatch(/^bunlet_build_info\{version="v\d+\.\d+\.\d+",bun_version="[^"]+"\} 1$/m);
  });

  test("API-server mode (--kubeconfig) without TLS files: the main port is TLS (self-signed in --cert-dir) with webhook authn/authz", async () => {
    const dir = mkdtempSync(join(tmpdir(), `bunlet-agent-${process.pid}-`));
    dirs.push(dir);
    const config = { ...defaultKubeletConfiguration(), address: "127.0.0.1", port: 0, healthzPort: 0, readOnlyPort: 0 };
    const reviews = {
      tokenReview: async ({ token }: { token: string }) =>
        token === "admin" ? { authenticated: true, user: { username: "admin", groups: ["system:masters"] } } : { authenticated: false },
      subjectAccessReview: async (s: { groups: string[] }) => ({ allowed: s.groups.includes("system:masters") }),
    };
    const agent = track(
      createAgent(
        { config, flags: { kubeconfig: join(dir, "kubelet.conf"), certDir: join(dir, "pki") } },
        { authClient: reviews, nodeName: "localhost", getPods: () => [], streaming: {} as never },
      ),
    );
    await agent.start();
    const main = agent.servers()!.get("main")!;
    expect(main.url).toStartWith("https://");
    const tls = { rejectUnauthorized: false };
    expect((await fetch(`${main.url}/exec/ns/p/c?command=id&output=1`, { method: "POST", tls })).status).toBe(401);
    expect((await fetch(`${main.url}/containerLogs/ns/p/c`, { tls })).status).toBe(401);
    expect((await fetch(`${main.url}/pods`, { tls, headers: { authorization: "Bearer admin" } })).status).toBe(200);
    expect(readFileSync(join(dir, "pki", "kubelet.crt"), "utf8")).toContain("BEGIN CERTIFICATE");
  });

  test("the self-signed serving pair is made while the components start, so the main port listens as soon as they have", async () => {
    const dir = mkdtempSync(join(tmpdir(), `bunlet-agent-${process.pid}-`));
    dirs.push(dir);
    const config = { ...defaultKubeletConfiguration(), address: "127.0.0.1", port: 0, healthzPort: 0, readOnlyPort: 0 };
    // A component whose start waits for the pair: the agent starts only if the pair is made meanwhile.
    const waitsForPair = {
      name: "waits",
      start: () => pollUntil(() => existsSync(join(dir, "pki", "kubelet.crt")), "the self-signed pair", 30_000),
      stop() {},
    };
    const reviews = { tokenReview: async () => ({ authenticated: false }), subjectAccessReview: async () => ({ allowed: false }) };
    const agent = track(
      createAgent(
        { config, flags: { kubeconfig: join(dir, "kubelet.conf"), certDir: join(dir, "pki") } },
        { authClient: reviews, nodeName: "localhost", getPods: () => [], streaming: {} as never, components: [waitsForPair] },
      ),
    );
    await agent.start();
    expect(agent.servers()!.get("main")!.url).toStartWith("https://");
  });

  test("standalone without TLS: plain loopback, and the container-access handlers need --unsafe-loopback-debug-handlers", async () => {
    const off = track(createAgent(input(), { streaming: {} as never }));
    await off.start();
    const url = off.servers()!.get("main")!.url;
    expect(url).toStartWith("http://127.0.0.1:");
    expect((await fetch(`${url}/run/ns/p/c?cmd=id`, { method: "POST" })).status).toBe(403);
    const on = track(createAgent(input({ unsafeLoopbackDebugHandlers: true }), { streaming: { runInContainer: async () => Buffer.from("ran\n") } as never }));
    await on.start();
    const r = await fetch(`${on.servers()!.get("main")!.url}/run/ns/p/c?cmd=id`, { method: "POST" });
    expect([r.status, await r.text()]).toEqual([200, "ran\n"]);
  });

  test("--exit-on-lock-contention without --lock-file is a ConfigError with the kubelet's text", async () => {
    const agent = track(createAgent(input({ exitOnLockContention: true })));
    const err = await agent.start().catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe("cannot exit on lock file contention: no lock file specified");
    expect(agent.servers()).toBeUndefined();
  });

  test("lock contention resolves done; stop releases the lock", async () => {
    const dir = mkdtempSync(join(tmpdir(), `bunlet-agent-${process.pid}-`));
    dirs.push(dir);
    const lockFile = join(dir, "kubelet.lock");
    const agent = track(createAgent(input({ lockFile, exitOnLockContention: true })));
    await agent.start();
    closeSync(openSync(lockFile, "r")); // what a second instance does first
    expect(await agent.done).toEqual({ kind: "lock-contention", event: "open" });
    await agent.stop();
    // A fresh agent gets the lock at once.
    const next = track(createAgent(input({ lockFile }), { lockPollMs: 10 }));
    await next.start();
    expect(next.servers()).toBeDefined();
  });

  test("stop() while waiting for the lock ends start() without starting anything", async () => {
    const dir = mkdtempSync(join(tmpdir(), `bunlet-agent-${process.pid}-`));
    dirs.push(dir);
    const lockFile = join(dir, "kubelet.lock");
    const holder = track(createAgent(input({ lockFile })));
    await holder.start();
    let started = false;
    const waiter = createAgent(input({ lockFile }), {
      lockPollMs: 10,
      components: [{ name: "c", start: () => void (started = true), stop: () => {} }],
    });
    const starting = waiter.start();
    await waiter.stop();
    await starting.catch(() => {});
    expect(started).toBe(false);
    expect(waiter.servers()).toBeUndefined();
  });
});
