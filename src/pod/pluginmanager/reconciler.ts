// The reconciler (upstream pluginmanager/reconciler/reconciler.go): every second, unregisters the
// registered plugins whose socket is gone or was re-created (another UUID), then registers the
// desired sockets not registered with their current UUID. Each runs as an operation of the socket's
// name: one at a time, with backoff after a failure.
import type { ActualStateOfWorld, DesiredStateOfWorld } from "./cache.ts";
import type { OperationExecutor } from "./operation-executor.ts";
import { registerPlugin, unregisterPlugin } from "./operations.ts";
import type { DialRegistration, PluginHandler } from "./types.ts";

/** Upstream loopSleepDuration. */
export const LOOP_SLEEP_MS = 1_000;

export interface ReconcilerState {
  dsw: DesiredStateOfWorld;
  asw: ActualStateOfWorld;
  executor: OperationExecutor;
  handlers: ReadonlyMap<string, PluginHandler>;
  dial: DialRegistration;
}

/** One pass; the operations it starts run on (their errors are logged by the executor). */
export function reconcile(s: ReconcilerState): void {
  const desired = s.dsw.getPluginsToRegister();
  for (const registered of s.asw.getRegisteredPlugins()) {
    const gone = !s.dsw.pluginExists(registered.socketPath);
    const restarted = desired.some((d) => d.socketPath === registered.socketPath && d.uuid !== registered.uuid);
    if (gone || restarted) s.executor.run(registered.socketPath, () => unregisterPlugin(registered, s.asw));
  }
  for (const p of desired) {
    if (s.asw.pluginExistsWithCorrectUUID(p)) continue;
    // A copy of the handlers, as upstream's getHandlers: one added later serves the next pass.
    const handlers = new Map(s.handlers);
    s.executor.run(p.socketPath, () => registerPlugin({ socketPath: p.socketPath, uuid: p.uuid, handlers, asw: s.asw, dial: s.dial }));
  }
}
