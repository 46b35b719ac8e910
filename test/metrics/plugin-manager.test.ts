import { describe, expect, test } from "bun:test";
import { pluginManagerMetrics } from "../../src/metrics/plugin-manager.ts";
import { createRegistry } from "../../src/server/metrics.ts";

describe("plugin_manager_total_plugins", () => {
  test("one sample per socket and state, read at scrape time", () => {
    const registry = createRegistry();
    let registered: string[] = [];
    pluginManagerMetrics(registry, { desiredSockets: () => ["/r/a.sock", "/r/b.sock"], registeredSockets: () => registered });
    registered = ["/r/a.sock"];
    const text = registry.render();
    expect(text).toContain('plugin_manager_total_plugins{socket_path="/r/a.sock",state="actual_state_of_world"} 1');
    expect(text).toContain('plugin_manager_total_plugins{socket_path="/r/b.sock",state="desired_state_of_world"} 1');
    expect(text).not.toContain('socket_path="/r/b.sock",state="actual_state_of_world"');
  });
});
