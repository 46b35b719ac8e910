// The RuntimeClass manager (upstream pkg/kubelet/runtimeclass): a pod's spec.runtimeClassName names a
// node.k8s.io/v1 RuntimeClass whose `handler` is the CRI runtime handler its sandbox runs with. Unset
// or "" is the runtime's default handler (""). A node without an API client (standalone) has no
// manager upstream and runs every pod with the default handler; so does this one. The informer over
// every RuntimeClass starts with the first pod that names one, as nodes rarely run any.
import type { Clock } from "../../clock.ts";
import type { KubeClient } from "../../kube/index.ts";
import { kv, log } from "../../log.ts";
import { startReflector, type Reflector } from "./reflector.ts";

export interface RuntimeClassManagerOptions {
  client: () => KubeClient | undefined;
  clock: Clock;
  /** How long a lookup waits for the informer's first list (default 10 s). */
  syncTimeoutMs?: number;
}

export interface RuntimeClassManager {
  /** The CRI runtime handler of a RuntimeClass name; throws upstream's NotFound or lookup error. */
  lookupRuntimeHandler(runtimeClassName: string | undefined): Promise<string>;
  stop(): void;
}

export const RUNTIME_CLASSES_PATH = "/apis/node.k8s.io/v1/runtimeclasses";

/** Pure: the handler of `name` among the RuntimeClasses read, or upstream's lister NotFound text. */
export function runtimeHandlerOf(classes: ReadonlyMap<string, { handler?: string }>, name: string): string {
  const rc = classes.get(name);
  if (!rc) throw new Error(`runtimeclass.node.k8s.io "${name}" not found`);
  return rc.handler ?? "";
}

export function createRuntimeClassManager(opts: RuntimeClassManagerOptions): RuntimeClassManager {
  let reflector: Reflector | undefined;
  let stopped = false;
  const syncTimeoutMs = opts.syncTimeoutMs ?? 10_000;
  function started(): Reflector {
    if (!reflector) {
      reflector = startReflector({ client: opts.client, path: RUNTIME_CLASSES_PATH, clock: opts.clock, kind: "RuntimeClass" });
      log.info(`Started RuntimeClass informer ${kv({ path: RUNTIME_CLASSES_PATH })}`);
    }
    return reflector;
  }
  return {
    async lookupRuntimeHandler(name) {
      if (!name || stopped || !opts.client()) return "";
      const r = started();
      if (!(await r.waitForSync(syncTimeoutMs))) {
        const why = r.error()?.message ?? "RuntimeClasses have not yet been read";
        throw new Error(`failed to lookup RuntimeClass ${name}: ${why}`);
      }
      return runtimeHandlerOf(r.objects, name);
    },
    stop() {
      stopped = true;
      reflector?.stop();
    },
  };
}
