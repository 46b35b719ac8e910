// The plugin manager's series (upstream pkg/kubelet/pluginmanager/metrics): plugin_manager_total_plugins
// {socket_path,state}, one sample per socket in the desired state of world (the watcher saw it) and one
// per socket in the actual state of world (registered), read at scrape time.
import type { Registry } from "../server/metrics.ts";

export interface PluginCountsSource {
  desiredSockets(): string[];
  registeredSockets(): string[];
}

export function pluginManagerMetrics(registry: Registry, source: PluginCountsSource): void {
  registry.collect(() => {
    const samples: { labels: { socket_path: string; state: string }; value: number }[] = [];
    const add = (state: string, sockets: string[]) => {
      const counts = new Map<string, number>();
      for (const s of sockets) counts.set(s, (counts.get(s) ?? 0) + 1);
      for (const [socket_path, value] of counts) samples.push({ labels: { socket_path, state }, value });
    };
    add("actual_state_of_world", source.registeredSockets());
    add("desired_state_of_world", source.desiredSockets());
    return [{ name: "plugin_manager_total_plugins", help: "Number of plugins in Plugin Manager", type: "gauge", samples }];
  });
}
