// The plugin manager with its CSI handler (upstream kubelet.go: pluginManager.AddHandler(CSIPlugin,
// csi.PluginHandler), then pluginManager.Run; csi_plugin.go Init's initializeCSINode). Plugins register
// through sockets in <rootDir>/plugins_registry; a CSI driver's node ID and topology go to the Node
// and its CSINode through the node's own API client. Once the node is registered, the CSINode is made
// (owned by the Node, with the migration annotation) even before any driver registers, as upstream.
import { mkdirSync } from "node:fs";
import type { AgentComponent } from "../agent-component.ts";
import type { Clock, TimerHandle } from "../clock.ts";
import type { KubeClient } from "../kube/client.ts";
import { kv, log } from "../log.ts";
import { pluginManagerMetrics } from "../metrics/index.ts";
import { createPluginManager, type PluginManager, pluginsDir, pluginsRegistrationDir, PluginType } from "../pod/pluginmanager/index.ts";
import type { Registry } from "../server/metrics.ts";
import { createCSIRegistrationHandler, createNodeInfoManager, type CSIRegistrationHandler, nodeGetInfo } from "../pod/volumes/csi/index.ts";

/** How often the CSINode's initialization is tried until it succeeds. */
export const CSINODE_INIT_RETRY_MS = 2_000;
/** Node autonomy: how often a kept driver's node info is installed again until it succeeds. */
export const CSI_INSTALL_RETRY_MS = 10_000;

export interface PluginManagerWiringDeps {
  rootDir: string;
  nodeName: string;
  clock: Clock;
  /** API-server mode: the node's API client once there is one. Standalone: absent (drivers register, nothing is published). */
  client?: () => KubeClient | undefined;
  /** Whether the Node is registered (the CSINode's owner exists). */
  nodeRegistered: () => boolean;
  /** The agent's /metrics registry: plugin_manager_total_plugins. */
  metrics?: Registry;
  /** Node autonomy: a driver stays registered while its node info cannot be installed (registration-handler.ts). */
  autonomy?: boolean;
}

export interface PluginManagerWiring {
  readonly manager: PluginManager;
  readonly csi: CSIRegistrationHandler;
  readonly component: AgentComponent;
}

export function createPluginManagerWiring(d: PluginManagerWiringDeps): PluginManagerWiring {
  const client = d.client ?? (() => undefined);
  const nim = createNodeInfoManager({ nodeName: d.nodeName, client, clock: d.clock });
  const installRetry = d.autonomy ? { clock: d.clock, intervalMs: CSI_INSTALL_RETRY_MS } : undefined;
  const csi = createCSIRegistrationHandler({ nim, nodeGetInfo, ...(installRetry ? { installRetry } : {}) });
  const manager = createPluginManager({ sockDir: pluginsRegistrationDir(d.rootDir), clock: d.clock });
  manager.addHandler(PluginType.CSIPlugin, csi);
  if (d.metrics)
    pluginManagerMetrics(d.metrics, {
      desiredSockets: () => manager.desiredSockets(),
      registeredSockets: () => manager.registeredPlugins().map((p) => p.socketPath),
    });
  let timer: TimerHandle | undefined;
  let stopped = false;
  let lastError = "";
  const initializeCSINode = () => {
    timer = undefined;
    if (stopped || !d.client) return;
    if (!client() || !d.nodeRegistered()) return void (timer = d.clock.setTimeout(initializeCSINode, CSINODE_INIT_RETRY_MS));
    nim.initializeCSINode().then(
      () => log.info(`CSINode initialized ${kv({ node: d.nodeName })}`),
      (e) => {
        const error = (e as Error).message;
        if (error !== lastError) log.error(`Failed to initialize CSINode ${kv({ error })}`);
        lastError = error;
        if (!stopped) timer = d.clock.setTimeout(initializeCSINode, CSINODE_INIT_RETRY_MS);
      },
    );
  };
  const component: AgentComponent = {
    name: "plugin manager",
    start() {
      // Upstream setupDataDirs: the plugins' own directory; the watcher makes plugins_registry.
      mkdirSync(pluginsDir(d.rootDir), { recursive: true, mode: 0o750 });
      manager.start();
      initializeCSINode();
    },
    async stop() {
      stopped = true;
      if (timer) d.clock.clearTimeout(timer);
      csi.stop();
      await manager.stop();
    },
  };
  return { manager, csi, component };
}
