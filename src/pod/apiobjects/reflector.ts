// One list+watch of a collection, kept in memory (client-go's Reflector feeding a Store): the first
// list fills the objects and marks the reflector synced; watch events from that resourceVersion then
// add, replace and remove them; bookmarks only move the resourceVersion; 410 Gone relists; any other
// failure retries with back-off (200 ms → 10 s). Shared by the secret/configMap managers (one per
// object, fieldSelector=metadata.name=<name>), the ClusterTrustBundle manager (the whole
// cluster-scoped collection, as upstream's informer) and the service lister (every namespace's).
import type { Clock } from "../../clock.ts";
import { isGone, watchEvents, type KubeClient } from "../../kube/index.ts";
import { kv, log } from "../../log.ts";
import { backoff } from "../../kube/backoff.ts";

export interface ReflectorOptions {
  client: () => KubeClient | undefined;
  /** The collection's path (e.g. /api/v1/namespaces/ns/secrets). */
  path: string;
  /** List and watch query (fieldSelector, labelSelector). */
  query?: Record<string, string>;
  clock: Clock;
  /** Names the collection in log lines ("secret", "ClusterTrustBundle"). */
  kind: string;
  /** Called for every change a watch delivers (not for the lists). */
  onChange?: (type: "ADDED" | "MODIFIED" | "DELETED", obj: any) => void;
  /** Watching ends once this holds for what was read (an immutable secret or configMap). */
  done?: (objects: ReadonlyMap<string, unknown>) => boolean;
  /** The objects' key (default metadata.name; <namespace>/<name> for a collection of every namespace). */
  key?: (obj: any) => string;
}

export interface Reflector {
  /** The objects by key (metadata.name unless told), as of the last list or event. */
  readonly objects: ReadonlyMap<string, any>;
  synced(): boolean;
  /** Waits until the first list succeeded or failed, at most `timeoutMs`; true when synced. */
  waitForSync(timeoutMs: number): Promise<boolean>;
  /** The first list's failure while not yet synced. */
  error(): Error | undefined;
  stop(): void;
}

export function startReflector(opts: ReflectorOptions): Reflector {
  const objects = new Map<string, any>();
  const abort = new AbortController();
  const waiters: (() => void)[] = [];
  let synced = false;
  let error: Error | undefined;
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  const keyOf = opts.key ?? ((o: any) => o?.metadata?.name as string);
  const what = (extra: Record<string, unknown>) => kv({ path: opts.path, ...opts.query, ...extra });

  async function run(): Promise<void> {
    const pace = backoff(200, 10_000);
    let rv: string | undefined;
    while (!abort.signal.aborted) {
      const client = opts.client();
      try {
        if (!client) throw new Error("no kubeClient defined");
        if (rv === undefined) {
          const list = await client.request<{ metadata: { resourceVersion: string }; items: any[] }>({
            path: opts.path,
            query: opts.query,
            signal: abort.signal,
          });
          objects.clear();
          for (const o of list.items) objects.set(keyOf(o), o);
          rv = list.metadata.resourceVersion;
          error = undefined;
          synced = true;
          wake();
          if (opts.done?.(objects)) return;
        }
        const query = { ...opts.query, resourceVersion: rv, allowWatchBookmarks: "true", timeoutSeconds: String(300 + Math.floor(Math.random() * 300)) };
        for await (const ev of watchEvents(client, opts.path, query, abort.signal)) {
          pace.reset();
          const objRv = ev.object?.metadata?.resourceVersion as string | undefined;
          if (objRv) rv = objRv;
          if (ev.type === "BOOKMARK") continue;
          const name = ev.object?.metadata?.name as string;
          if (ev.type === "DELETED") objects.delete(keyOf(ev.object));
          else objects.set(keyOf(ev.object), ev.object);
          log.info(`${opts.kind} changed ${what({ name, event: ev.type, resourceVersion: objRv })}`);
          opts.onChange?.(ev.type as "ADDED" | "MODIFIED" | "DELETED", ev.object);
          if (opts.done?.(objects)) return;
        }
      } catch (e) {
        if (abort.signal.aborted) return;
        if (isGone(e)) {
          rv = undefined;
          continue;
        }
        if (!synced) {
          error = e as Error;
          wake();
        }
        const delay = pace.next();
        log.warn(`${opts.kind} watch failed ${what({ retryInMs: delay, error: (e as Error).message })}`);
        await new Promise<void>((ok) => {
          const h = opts.clock.setTimeout(ok, delay);
          abort.signal.addEventListener("abort", () => (opts.clock.clearTimeout(h), ok()), { once: true });
        });
      }
    }
  }
  void run();

  return {
    objects,
    synced: () => synced,
    error: () => error,
    async waitForSync(timeoutMs) {
      if (!synced) {
        await new Promise<void>((ok) => {
          const h = opts.clock.setTimeout(ok, timeoutMs);
          waiters.push(() => (opts.clock.clearTimeout(h), ok()));
        });
      }
      return synced;
    },
    stop() {
      abort.abort();
      wake();
    },
  };
}
