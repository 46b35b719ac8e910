// The plugin manager's shapes (upstream pkg/kubelet/pluginmanager/cache/types.go): the handler a
// plugin type registers (CSIPlugin, DevicePlugin, DRAPlugin) and what the reconciler knows of a plugin.

/** Upstream's plugin types (k8s.io/kubelet/pkg/apis/pluginregistration/v1/constants.go). */
export const PluginType = {
  CSIPlugin: "CSIPlugin",
  DevicePlugin: "DevicePlugin",
  DRAPlugin: "DRAPlugin",
} as const;

/**
 * What a plugin type does with the plugins of its type (upstream cache.PluginHandler). validatePlugin
 * and registerPlugin throw with the reason a plugin is refused; that text is sent to the plugin.
 */
export interface PluginHandler {
  validatePlugin(pluginName: string, endpoint: string, versions: string[]): Promise<void> | void;
  registerPlugin(pluginName: string, endpoint: string, versions: string[], pluginClientTimeoutMs?: number): Promise<void>;
  deRegisterPlugin(pluginName: string, endpoint: string): Promise<void> | void;
}

/** What a plugin's Registration service answers to GetInfo (upstream registerapi.PluginInfo). */
export interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supportedVersions: string[];
}

/** A socket the watcher saw, to be registered (upstream cache.PluginInfo in the desired state of world). */
export interface PluginToRegister {
  socketPath: string;
  /** New each time the socket is (re)created: a new one means the plugin restarted. */
  uuid: string;
  timestampMs: number;
}

/** A registered plugin (upstream cache.PluginInfo in the actual state of world). */
export interface RegisteredPlugin {
  socketPath: string;
  uuid: string;
  handler: PluginHandler;
  name: string;
  endpoint: string;
}

/** The registration client of one plugin socket (upstream registerapi.RegistrationClient + its connection). */
export interface RegistrationClient {
  getInfo(timeoutMs: number): Promise<PluginInfo>;
  notifyRegistrationStatus(registered: boolean, error: string, timeoutMs: number): Promise<void>;
  close(): void;
}

/** Opens a registration client on a socket; throws when it cannot connect. */
export type DialRegistration = (socketPath: string, timeoutMs: number) => Promise<RegistrationClient>;
