import { describe, expect, test } from "bun:test";
import { createActualStateOfWorld } from "../../../src/pod/pluginmanager/cache.ts";
import { registerPlugin, unregisterPlugin } from "../../../src/pod/pluginmanager/operations.ts";
import type { PluginHandler, PluginInfo, RegistrationClient } from "../../../src/pod/pluginmanager/types.ts";

const SOCK = "/r/plugins_registry/x-reg.sock";

function fakePlugin(info: Partial<PluginInfo>, opts: { notifyFails?: boolean; getInfoFails?: boolean } = {}) {
  const notified: { registered: boolean; error: string }[] = [];
  let closed = false;
  const client: RegistrationClient = {
    async getInfo() {
      if (opts.getInfoFails) throw new Error("deadline exceeded");
      return { type: "CSIPlugin", name: "x.csi", endpoint: "/r/plugins/x/csi.sock", supportedVersions: ["1.0.0"], ...info };
    },
    async notifyRegistrationStatus(registered, error) {
      if (opts.notifyFails) throw new Error("notify broke");
      notified.push({ registered, error });
    },
    close: () => void (closed = true),
  };
  return { notified, client, closed: () => closed };
}

function recordingHandler(opts: { invalid?: string; registerFails?: string } = {}) {
  const calls: string[] = [];
  const handler: PluginHandler = {
    validatePlugin(name, endpoint, versions) {
      calls.push(`validate ${name} ${endpoint} ${versions.join(",")}`);
      if (opts.invalid) throw new Error(opts.invalid);
    },
    async registerPlugin(name, endpoint) {
      calls.push(`register ${name} ${endpoint}`);
      if (opts.registerFails) throw new Error(opts.registerFails);
    },
    deRegisterPlugin(name, endpoint) {
      calls.push(`deregister ${name} ${endpoint}`);
    },
  };
  return { calls, handler };
}

async function run(plugin: ReturnType<typeof fakePlugin>, handler?: PluginHandler) {
  const asw = createActualStateOfWorld();
  const handlers = new Map(handler ? [["CSIPlugin", handler]] : []);
  const result = await registerPlugin({ socketPath: SOCK, uuid: "u1", handlers, asw, dial: async () => plugin.client }).then(
    () => undefined,
    (e: Error) => e.message,
  );
  return { asw, result };
}

describe("registering a plugin socket (upstream operation_generator)", () => {
  test("valid: validated, in the actual state, registered, told so", async () => {
    const p = fakePlugin({});
    const h = recordingHandler();
    const { asw, result } = await run(p, h.handler);
    expect(result).toBeUndefined();
    expect(h.calls).toEqual(["validate x.csi /r/plugins/x/csi.sock 1.0.0", "register x.csi /r/plugins/x/csi.sock"]);
    expect(p.notified).toEqual([{ registered: true, error: "" }]);
    expect(asw.getRegisteredPlugins().map((r) => [r.socketPath, r.uuid, r.name])).toEqual([[SOCK, "u1", "x.csi"]]);
    expect(p.closed()).toBe(true);
  });

  test("an empty endpoint is the registration socket itself", async () => {
    const h = recordingHandler();
    await run(fakePlugin({ endpoint: "" }), h.handler);
    expect(h.calls[1]).toBe(`register x.csi ${SOCK}`);
  });

  test("no handler for the type: the plugin is told, and the error says so", async () => {
    const p = fakePlugin({ type: "Nope" });
    const { result } = await run(p);
    const text = `RegisterPlugin error -- no handler registered for plugin type: Nope at socket ${SOCK}`;
    expect(p.notified).toEqual([{ registered: false, error: text }]);
    expect(result).toBe(`RegisterPlugin error -- failed to send error at socket ${SOCK}, err: ${text}`);
  });

  test("validation fails: the plugin is told the handler's reason; nothing registered", async () => {
    const p = fakePlugin({});
    const h = recordingHandler({ invalid: "bad versions" });
    const { asw, result } = await run(p, h.handler);
    expect(p.notified).toEqual([{ registered: false, error: "RegisterPlugin error -- plugin validation failed with err: bad versions" }]);
    expect(result).toContain("plugin validation failed with err: bad versions");
    expect(h.calls).toHaveLength(1);
    expect(asw.getRegisteredPlugins()).toEqual([]);
  });

  test("registration fails: out of the actual state, the plugin told", async () => {
    const p = fakePlugin({});
    const { asw, result } = await run(p, recordingHandler({ registerFails: "NodeGetInfo failed" }).handler);
    const text = "RegisterPlugin error -- plugin registration failed with err: NodeGetInfo failed";
    expect(p.notified).toEqual([{ registered: false, error: text }]);
    expect(result).toBe(text);
    expect(asw.getRegisteredPlugins()).toEqual([]);
  });

  test("the success cannot be sent: de-registered again", async () => {
    const p = fakePlugin({}, { notifyFails: true });
    const h = recordingHandler();
    const { asw, result } = await run(p, h.handler);
    expect(result).toBe(`RegisterPlugin error -- failed to send registration status at socket ${SOCK}, err: : notify broke`);
    expect(h.calls.at(-1)).toBe("deregister x.csi /r/plugins/x/csi.sock");
    expect(asw.getRegisteredPlugins()).toEqual([]);
  });

  test("dial and GetInfo failures", async () => {
    const asw = createActualStateOfWorld();
    const dialFails = await registerPlugin({
      socketPath: SOCK,
      uuid: "u1",
      handlers: new Map(),
      asw,
      dial: async () => {
        throw new Error("connect ECONNREFUSED");
      },
    }).catch((e: Error) => e.message);
    expect(dialFails).toBe(`RegisterPlugin error -- dial failed at socket ${SOCK}, err: failed to dial socket ${SOCK}, err: connect ECONNREFUSED`);
    const { result } = await run(fakePlugin({}, { getInfoFails: true }), recordingHandler().handler);
    expect(result).toBe(`RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${SOCK}, err: deadline exceeded`);
  });

  test("unregistering: out of the actual state, then the handler's deRegisterPlugin", async () => {
    const asw = createActualStateOfWorld();
    const h = recordingHandler();
    const p = { socketPath: SOCK, uuid: "u1", handler: h.handler, name: "x.csi", endpoint: "/e" };
    asw.addPlugin(p);
    await unregisterPlugin(p, asw);
    expect(asw.getRegisteredPlugins()).toEqual([]);
    expect(h.calls).toEqual(["deregister x.csi /e"]);
  });
});
