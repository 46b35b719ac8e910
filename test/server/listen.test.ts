import { afterEach, describe, expect, test } from "bun:test";
import { bindAddress, ListenError, startServers, type ListenConfig, type RunningServers } from "../../src/server/listen.ts";
import { createRegistry } from "../../src/server/metrics.ts";

describe("bindAddress", () => {
  test.each([
    ["0.0.0.0", false, "127.0.0.1", true],
    ["::", false, "127.0.0.1", true],
    ["", false, "127.0.0.1", true],
    ["0.0.0.0", true, "0.0.0.0", false],
    ["192.0.2.10", false, "192.0.2.10", false],
    ["127.0.0.1", false, "127.0.0.1", false],
  ])("address %j tls=%p → %s (reason logged: %p)", (address, tls, host, hasReason) => {
    const d = bindAddress(address, tls);
    expect(d.hostname).toBe(host);
    expect(d.reason !== undefined).toBe(hasReason);
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
    running = startServers(base, providers());
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
    running = startServers({ ...base, healthzPort: free(), readOnlyPort: free() }, providers());
    expect(running.servers.map((s) => s.name).sort()).toEqual(["healthz", "main", "read-only"]);
    expect(await (await fetch(`${running.get("healthz")!.url}/healthz`)).text()).toBe("ok");
    const ro = running.get("read-only")!.url;
    expect((await fetch(`${ro}/pods`)).status).toBe(200);
    expect((await fetch(`${ro}/configz`)).status).toBe(404);
  });

  test("enableServer=false leaves only the healthz server", async () => {
    running = startServers({ ...base, enableServer: false, healthzPort: 0 }, providers());
    expect(running.servers).toEqual([]);
  });

  test("a port in use fails with a ListenError naming the server and port, closing what started", async () => {
    const blocker = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("x") });
    try {
      expect(() => startServers({ ...base, port: blocker.port! }, providers())).toThrow(ListenError);
      expect(() => startServers({ ...base, port: blocker.port! }, providers())).toThrow(`127.0.0.1:${blocker.port} for the main server`);
    } finally {
      blocker.stop(true);
    }
  });

  test("stop() closes the listener", async () => {
    running = startServers(base, providers());
    const url = running.get("main")!.url;
    await running.stop();
    expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
