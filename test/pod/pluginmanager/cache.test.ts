import { describe, expect, test } from "bun:test";
import { counterUUIDs, createActualStateOfWorld, createDesiredStateOfWorld } from "../../../src/pod/pluginmanager/cache.ts";
import type { PluginHandler } from "../../../src/pod/pluginmanager/types.ts";

const handler: PluginHandler = { validatePlugin() {}, async registerPlugin() {}, deRegisterPlugin() {} };

describe("the plugin manager's states of world", () => {
  test("a socket added again gets a new UUID; the actual state then no longer matches it", () => {
    let now = 100;
    const dsw = createDesiredStateOfWorld(() => now, counterUUIDs());
    const asw = createActualStateOfWorld();
    dsw.addOrUpdatePlugin("/r/a.sock");
    const [first] = dsw.getPluginsToRegister();
    expect(first).toEqual({ socketPath: "/r/a.sock", uuid: "plugin-1", timestampMs: 100 });
    asw.addPlugin({ socketPath: "/r/a.sock", uuid: first!.uuid, handler, name: "a", endpoint: "/e" });
    expect(asw.pluginExistsWithCorrectUUID(first!)).toBe(true);
    now = 200;
    dsw.addOrUpdatePlugin("/r/a.sock");
    const [second] = dsw.getPluginsToRegister();
    expect(second?.uuid).not.toBe(first!.uuid);
    expect(asw.pluginExistsWithCorrectUUID(second!)).toBe(false);
  });

  test("removal, and upstream's error for an empty path", () => {
    const dsw = createDesiredStateOfWorld(() => 0, counterUUIDs());
    dsw.addOrUpdatePlugin("/r/a.sock");
    expect(dsw.pluginExists("/r/a.sock")).toBe(true);
    dsw.removePlugin("/r/a.sock");
    expect(dsw.pluginExists("/r/a.sock")).toBe(false);
    expect(() => dsw.addOrUpdatePlugin("")).toThrow("socket path is empty");
    expect(() => createActualStateOfWorld().addPlugin({ socketPath: "", uuid: "u", handler, name: "a", endpoint: "" })).toThrow("socket path is empty");
  });
});
