// The desired and actual states of world (upstream pkg/kubelet/pluginmanager/cache): the sockets the
// watcher saw, each with a UUID new at every (re)creation, and the plugins registered from them. The
// reconciler registers what is desired and not registered with the same UUID, and unregisters what is
// registered and no longer desired (or desired with another UUID: the plugin restarted).
import type { PluginToRegister, RegisteredPlugin } from "./types.ts";

export interface DesiredStateOfWorld {
  /** Adds the socket, or gives it a new UUID and timestamp when it is there already. */
  addOrUpdatePlugin(socketPath: string): void;
  removePlugin(socketPath: string): void;
  pluginExists(socketPath: string): boolean;
  getPluginsToRegister(): PluginToRegister[];
}

export interface ActualStateOfWorld {
  addPlugin(p: RegisteredPlugin): void;
  removePlugin(socketPath: string): void;
  getRegisteredPlugins(): RegisteredPlugin[];
  pluginExistsWithCorrectUUID(p: PluginToRegister): boolean;
}

export function createDesiredStateOfWorld(now: () => number, newUUID: () => string): DesiredStateOfWorld {
  const plugins = new Map<string, PluginToRegister>();
  return {
    addOrUpdatePlugin(socketPath) {
      // Upstream's error text for an empty path.
      if (socketPath === "") throw new Error("socket path is empty");
      plugins.set(socketPath, { socketPath, uuid: newUUID(), timestampMs: now() });
    },
    removePlugin: (socketPath) => void plugins.delete(socketPath),
    pluginExists: (socketPath) => plugins.has(socketPath),
    getPluginsToRegister: () => [...plugins.values()].map((p) => ({ ...p })),
  };
}

export function createActualStateOfWorld(): ActualStateOfWorld {
  const plugins = new Map<string, RegisteredPlugin>();
  return {
    addPlugin(p) {
      if (p.socketPath === "") throw new Error("socket path is empty");
      plugins.set(p.socketPath, { ...p });
    },
    removePlugin: (socketPath) => void plugins.delete(socketPath),
    getRegisteredPlugins: () => [...plugins.values()].map((p) => ({ ...p })),
    pluginExistsWithCorrectUUID: (p) => plugins.get(p.socketPath)?.uuid === p.uuid,
  };
}

/** A counter's UUIDs: only their inequality matters (a new one per socket creation). */
export function counterUUIDs(prefix = "plugin"): () => string {
  let n = 0;
  return () => `${prefix}-${++n}`;
}
