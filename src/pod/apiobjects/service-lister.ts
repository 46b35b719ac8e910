// The kubelet's service lister (upstream kubelet.go NewMainKubelet: a shared informer over every
// namespace's services, fieldSelector spec.clusterIP!=None since headless services give no variables),
// read to make the service environment variables of each container (envvars/). Started once the node
// has an API client; until its first list succeeds, a pod from the API server cannot have its env
// made (upstream's "services have not yet been read at least once"), a static pod gets what is known.
import type { Clock } from "../../clock.ts";
import type { KubeClient } from "../../kube/index.ts";
import { kv, log } from "../../log.ts";
import type { ServiceLike } from "../envvars/index.ts";
import { startReflector, type Reflector } from "./reflector.ts";

export interface ServiceListerOptions {
  client: () => KubeClient | undefined;
  clock: Clock;
}

export interface ServiceLister {
  /** Starts the informer (once; a no-op after stop()). */
  start(): void;
  /** True once the first list succeeded (upstream serviceHasSynced). */
  hasSynced(): boolean;
  /** Every namespace's services with a cluster IP, as of the last list or event. */
  list(): ServiceLike[];
  stop(): void;
}

export const SERVICES_NOT_SYNCED = "services have not yet been read at least once, cannot construct envvars";

export function createServiceLister(opts: ServiceListerOptions): ServiceLister {
  let reflector: Reflector | undefined;
  let stopped = false;
  return {
    start() {
      if (reflector || stopped) return;
      reflector = startReflector({
        client: opts.client,
        path: "/api/v1/services",
        query: { fieldSelector: "spec.clusterIP!=None" },
        clock: opts.clock,
        kind: "service",
        key: (o: ServiceLike) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`,
      });
      log.info(`Started service informer ${kv({ fieldSelector: "spec.clusterIP!=None" })}`);
    },
    hasSynced: () => reflector?.synced() ?? false,
    list: () => [...(reflector?.objects.values() ?? [])] as ServiceLike[],
    stop() {
      stopped = true;
      reflector?.stop();
    },
  };
}
