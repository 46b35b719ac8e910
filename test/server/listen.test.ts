import { afterEach, describe, expect, test } from "bun:test";
import { bindAddress, ListenError, startServers, type ListenConfig, type RunningServers } from "../../src/server/listen.ts";
import { createRegistry } from "../../src/server/metrics.ts";

describe("bindAddress", () => {
  test.each([
    ["0.0.0.0", "127.0.0.1"],
    ["::", "127.0.0.1"],
    ["", "127.0.0.1"],
    // Spellings of "every interface" that a string compare let through.
    ["::0", "127.0.0.1"],
    ["0:0:0:0:0:0:0:0", "127.0.0.1"],
    ["::ffff:0.0.0.0", "127.0.0.1"],
    ["127.0.0.1", "127.0.0.1"],
    ["::1", "::1"],
  ])("unauthenticated: address %j → %s", (address, host) => {
    const d = bindAddress(address, false);
    expect(d.hostname).toBe(host);
    expect(d.reason !== undefined).toBe(address !== host);
  });

  test.each(["192.0.2.10", "2001:db8::1", "::ffff:192.0.2.1"])("unauthenticated: a non-loopback address %j is refused", (address) => {
    expect(() => bindAddress(address, false)).toThrow(ListenError);
    expect(() => bindAddress(address, false)).toThrow(`refusing to serve the main server on ${address}`);
  });

  test.each([
    ["0.0.0.0", "0.0.0.0"],
    ["::", "::"],
    ["0:0:0:0:0:0:0:0", "::"],
    ["192.0.2.10", "192.0.2.10"],
  ])("authenticated: address %j → %s", (address, host) => {
    expect(bindAddress(address, true)).toEqual({ hostname: host });
  });
});

describe("startServers (real sockets on free ports)", () => {
  let running: RunningServers | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  const base: ListenConfig = { address: "0.0.0.0", port: 0, readOnlyPort: 0, healthzBindAddress: "127.0.0.1", healthzPort: 0 };
  const providers = () => ({ getPods: () => [], metrics: createRegistry(), configz: () => ({ x: 1 }) });

  test("port 0 picks a free port; wildcard address without TLS binds loopback", async () => {
    running = await startServers(base, providers());
    expect(running.servers.map((s) => s.name)).toEqual(["main"]);
    const main = running.get("main")!;
    expect(main.hostname).toBe("127.0.0.1");
    expect(main.port).toBeGreaterThan(0);
    const res = await fetch(`${main.url}/configz`);
    expect(await res.json()).toEqual({ kubeletconfig: { x: 1 } });
  });

  test("healthz and read-only servers start when their ports are set", async () => {
    // Take two free ports from the kernel, then hand them to the servers.
    const free = () => {
      const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
      const p = s.port;
      s.stop(true);
      return p;
    };
    running = await startServers({ ...base, healthzPort: free(), readOnlyPort: free() }, providers());
    expect(running.servers.map((s) => s.name).sort()).toEqual(["healthz", "main", "read-only"]);
    expect(await (await fetch(`${running.get("healthz")!.url}/healthz`)).text()).toBe("ok");
    const ro = running.get("read-only")!.url;
    expect((await fetch(`${ro}/pods`)).status).toBe(200);
    expect((await fetch(`${ro}/configz`)).status).toBe(404);
  });

  test("enableServer=false leaves only the healthz server", async () => {
    running = await startServers({ ...base, enableServer: false, healthzPort: 0 }, providers());
    expect(running.servers).toEqual([]);
  });

  test("a port in use fails with a ListenError naming the server and port, closing what started", async () => {
    const blocker = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("x") });
    try {
      await expect(startServers({ ...base, port: blocker.port! }, providers())).rejects.toThrow(ListenError);
      await expect(startServers({ ...base, port: blocker.port! }, providers())).rejects.toThrow(`127.0.0.1:${blocker.port} for the main server`);
    } finally {
      blocker.stop(true);
    }
  });

  test("a specific non-loopback address without authentication refuses to start", async () => {
    await expect(startServers({ ...base, address: "192.0.2.10" }, providers())).rejects.toThrow("refusing to serve the main server on 192.0.2.10");
  });

  test("/configz never serves staticPodURLHeader values", async () => {
    const p = { ...providers(), configz: () => ({ staticPodURL: "http://x/", staticPodURLHeader: { Authorization: ["Bearer s3cret"], "X-A": ["a", "b"] } }) };
    running = await startServers(base, p);
    const body = await (await fetch(`${running.get("main")!.url}/configz`)).text();
    expect(body).not.toContain("s3cret");
    expect(JSON.parse(body).kubeletconfig.staticPodURLHeader).toEqual({ Authorization: ["[REDACTED]"], "X-A": ["[REDACTED]", "[REDACTED]"] });
  });

  test("stop() closes the listener", async () => {
    running = await startServers(base, providers());
    const url = running.get("main")!.url;
    await running.stop();
    expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
