// The plugin manager's public surface (upstream pkg/kubelet/pluginmanager): the watcher of
// <rootDir>/plugins_registry feeds the desired state of world; the reconciler, every second, registers
// the plugins found there with the handler of their type and unregisters those whose socket went.
import path from "node:path";
import type { Clock, TimerHandle } from "../../clock.ts";
import { log } from "../../log.ts";
import { counterUUIDs, createActualStateOfWorld, createDesiredStateOfWorld } from "./cache.ts";
import { createOperationExecutor } from "./operation-executor.ts";
import { LOOP_SLEEP_MS, reconcile } from "./reconciler.ts";
import { dialRegistration } from "./registration-client.ts";
import type { DialRegistration, PluginHandler, RegisteredPlugin } from "./types.ts";
import { createPluginWatcher } from "./watcher.ts";

export { registrationCodec } from "./registration-client.ts";
export { PluginType, type PluginHandler, type PluginInfo } from "./types.ts";

/** Upstream's plugin registration directory, <rootDir>/plugins_registry (kubelet getPluginsRegistrationDir). */
export const pluginsRegistrationDir = (rootDir: string) => path.join(rootDir, "plugins_registry");
/** Where plugins keep their own sockets by convention, <rootDir>/plugins (kubelet getPluginsDir). */
export const pluginsDir = (rootDir: string) => path.join(rootDir, "plugins");

/** How long stop() waits for a registration under way (the agent has 2 s to stop). */
export const STOP_WAIT_MS = 1_000;

export interface PluginManagerDeps {
  sockDir: string;
  clock: Clock;
  /** Defaults to the gRPC client of the socket's Registration service. */
  dial?: DialRegistration;
  loopSleepMs?: number;
}

export interface PluginManager {
  /** Upstream AddHandler: the handler of one plugin type (CSIPlugin, …). */
  addHandler(pluginType: string, handler: PluginHandler): void;
  /** Starts the watcher (its initial walk) and the reconciler's loop. */
  start(): void;
  /** Stops both; waits for the operations under way, at most STOP_WAIT_MS (a driver may hang for minutes). */
  stop(): Promise<void>;
  /** The plugins registered now. */
  registeredPlugins(): RegisteredPlugin[];
  /** The sockets the watcher found (registered or not). */
  desiredSockets(): string[];
}

export function createPluginManager(d: PluginManagerDeps): PluginManager {
  const dsw = createDesiredStateOfWorld(() => d.clock.now(), counterUUIDs());
  const asw = createActualStateOfWorld();
  const executor = createOperationExecutor(d.clock);
  const handlers = new Map<string, PluginHandler>();
  const watcher = createPluginWatcher(d.sockDir, dsw);
  const state = { dsw, asw, executor, handlers, dial: d.dial ?? dialRegistration };
  let timer: TimerHandle | undefined;
  let stopped = false;
  const loop = () => {
    if (stopped) return;
    reconcile(state);
    timer = d.clock.setTimeout(loop, d.loopSleepMs ?? LOOP_SLEEP_MS);
  };
  return {
    addHandler: (t, h) => void handlers.set(t, h),
    start() {
      watcher.start();
      log.info("Starting Kubelet Plugin Manager");
      loop();
    },
    async stop() {
      stopped = true;
      if (timer) d.clock.clearTimeout(timer);
      watcher.stop();
      let timeout: TimerHandle | undefined;
      await Promise.race([executor.settled(), new Promise<void>((r) => (timeout = d.clock.setTimeout(r, STOP_WAIT_MS)))]);
      if (timeout) d.clock.clearTimeout(timeout);
      log.info("Shutting down Kubelet Plugin Manager");
    },
    registeredPlugins: () => asw.getRegisteredPlugins(),
    desiredSockets: () => dsw.getPluginsToRegister().map((p) => p.socketPath),
  };
}
