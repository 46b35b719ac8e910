// The kubelet's secret and configMap managers (upstream pkg/kubelet/secret, pkg/kubelet/configmap over
// pkg/kubelet/util/manager), one per resource, by configMapAndSecretChangeDetectionStrategy:
//   Watch (default): one reflector per referenced object (list+watch with
//     fieldSelector=metadata.name=<name>), started when a pod first references it and stopped when
//     no pod does; a read waits for the first list; an `immutable` object is not watched further.
//   Cache: GET, kept for a TTL (upstream's default 1 min).   Get: a GET on every read.
// A missing object reads as ObjectNotFoundError ("secret \"x\" not found"); other failures as the error.
import type { Clock } from "../../clock.ts";
import { isGone, isNotFound, watchEvents, type KubeClient } from "../../kube/index.ts";
import { kv, log } from "../../log.ts";
import { backoff } from "../../node/backoff.ts";
import { ObjectNotFoundError } from "../volumes/index.ts";

export type ChangeDetectionStrategy = "Watch" | "Cache" | "Get";

export interface ObjectManagerOptions {
  client: () => KubeClient | undefined;
  /** "secrets" or "configmaps". */
  resource: "secrets" | "configmaps";
  strategy: ChangeDetectionStrategy;
  clock: Clock;
  /** How long a read waits for a new reflector's first list (default 10 s). */
  syncTimeoutMs?: number;
  /** Cache strategy TTL (default 60 s). */
  ttlMs?: number;
  /** Called when a watched object changes (tests and logs). */
  onChange?: (namespace: string, name: string) => void;
}

export interface ObjectManager<T> {
  /** The pods' references: objects no pod references any more stop being watched. */
  registerPod(uid: string, namespace: string, names: readonly string[]): void;
  unregisterPod(uid: string): void;
  get(namespace: string, name: string): Promise<T>;
  /** Objects being watched now (tests). */
  watched(): string[];
  stop(): void;
}

interface Reflector {
  refs: Set<string>;
  obj?: unknown;
  synced: boolean;
  error?: Error;
  waiters: (() => void)[];
  abort: AbortController;
}

const kindOf = (resource: string) => (resource === "secrets" ? "secret" : "configmap") as "secret" | "configmap";

export function createObjectManager<T>(opts: ObjectManagerOptions): ObjectManager<T> {
  const kind = kindOf(opts.resource);
  const reflectors = new Map<string, Reflector>();
  const podRefs = new Map<string, Set<string>>();
  const ttlCache = new Map<string, { atMs: number; value: T | Error }>();
  const pathOf = (ns: string) => `/api/v1/namespaces/${ns}/${opts.resource}`;

  function settle(r: Reflector) {
    r.synced = true;
    for (const w of r.waiters.splice(0)) w();
  }

  async function runReflector(key: string, r: Reflector): Promise<void> {
    const [ns, name] = key.split("/") as [string, string];
    const pace = backoff(200, 10_000);
    let rv: string | undefined;
    while (!r.abort.signal.aborted) {
      const client = opts.client();
      try {
        if (!client) throw new Error("no kubeClient defined");
        const fieldSelector = `metadata.name=${name}`;
        if (rv === undefined) {
          const list = await client.request<{ metadata: { resourceVersion: string }; items: any[] }>({ path: pathOf(ns), query: { fieldSelector }, signal: r.abort.signal });
          r.obj = list.items[0];
          r.error = undefined;
          rv = list.metadata.resourceVersion;
          settle(r);
          if ((r.obj as { immutable?: boolean } | undefined)?.immutable) return;
        }
        const query = { fieldSelector, resourceVersion: rv, allowWatchBookmarks: "true", timeoutSeconds: String(300 + Math.floor(Math.random() * 300)) };
        for await (const ev of watchEvents(client, pathOf(ns), query, r.abort.signal)) {
          pace.reset();
          const objRv = ev.object?.metadata?.resourceVersion as string | undefined;
          if (objRv) rv = objRv;
          if (ev.type === "BOOKMARK") continue;
          r.obj = ev.type === "DELETED" ? undefined : ev.object;
          log.info(`${kind} changed ${kv({ object: key, event: ev.type, resourceVersion: objRv })}`);
          opts.onChange?.(ns, name);
          if ((r.obj as { immutable?: boolean } | undefined)?.immutable) return;
        }
      } catch (e) {
        if (r.abort.signal.aborted) return;
        if (isGone(e)) {
          rv = undefined;
          continue;
        }
        if (!r.synced) {
          r.error = e as Error;
          for (const w of r.waiters.splice(0)) w();
        }
        const delay = pace.next();
        log.warn(`${kind} watch failed ${kv({ object: key, retryInMs: delay, error: (e as Error).message })}`);
        await new Promise<void>((ok) => {
          const h = opts.clock.setTimeout(ok, delay);
          r.abort.signal.addEventListener("abort", () => (opts.clock.clearTimeout(h), ok()), { once: true });
        });
      }
    }
  }

  function reflectorFor(key: string): Reflector {
    let r = reflectors.get(key);
    if (!r) {
      r = { refs: new Set(), synced: false, waiters: [], abort: new AbortController() };
      reflectors.set(key, r);
      void runReflector(key, r);
    }
    return r;
  }

  function release(uid: string, key: string) {
    const r = reflectors.get(key);
    if (!r) return;
    r.refs.delete(uid);
    if (r.refs.size === 0) {
      r.abort.abort();
      reflectors.delete(key);
    }
  }

  async function getDirect(ns: string, name: string): Promise<T> {
    const client = opts.client();
    if (!client) throw new Error(`couldn't get ${kind} ${ns}/${name}, no kubeClient defined`);
    try {
      return await client.request<T>({ path: `${pathOf(ns)}/${name}` });
    } catch (e) {
      if (isNotFound(e)) throw new ObjectNotFoundError(kind, name);
      throw e;
    }
  }

  async function getWatched(ns: string, name: string): Promise<T> {
    const key = `${ns}/${name}`;
    const r = reflectors.get(key);
    // A read of an object no pod registered (should not happen): a plain GET.
    if (!r) return getDirect(ns, name);
    if (!r.synced) {
      await new Promise<void>((ok) => {
        const h = opts.clock.setTimeout(ok, opts.syncTimeoutMs ?? 10_000);
        r.waiters.push(() => (opts.clock.clearTimeout(h), ok()));
      });
    }
    if (!r.synced) throw new Error(`failed to sync ${kind} cache: ${r.error ? r.error.message : "timed out waiting for the condition"}`);
    if (r.obj === undefined) throw new ObjectNotFoundError(kind, name);
    return r.obj as T;
  }

  async function getCached(ns: string, name: string): Promise<T> {
    const key = `${ns}/${name}`;
    const hit = ttlCache.get(key);
    if (hit && opts.clock.now() - hit.atMs < (opts.ttlMs ?? 60_000)) {
      if (hit.value instanceof Error) throw hit.value;
      return hit.value;
    }
    try {
      const v = await getDirect(ns, name);
      ttlCache.set(key, { atMs: opts.clock.now(), value: v });
      return v;
    } catch (e) {
      if (e instanceof ObjectNotFoundError) ttlCache.set(key, { atMs: opts.clock.now(), value: e });
      throw e;
    }
  }

  return {
    registerPod(uid, ns, names) {
      const keys = new Set(names.map((n) => `${ns}/${n}`));
      const prev = podRefs.get(uid) ?? new Set();
      podRefs.set(uid, keys);
      if (opts.strategy !== "Watch") return;
      for (const k of keys) reflectorFor(k).refs.add(uid);
      for (const k of prev) if (!keys.has(k)) release(uid, k);
    },
    unregisterPod(uid) {
      const prev = podRefs.get(uid);
      podRefs.delete(uid);
      for (const k of prev ?? []) {
        release(uid, k);
        ttlCache.delete(k);
      }
    },
    get: (ns, name) => (opts.strategy === "Watch" ? getWatched(ns, name) : opts.strategy === "Cache" ? getCached(ns, name) : getDirect(ns, name)),
    watched: () => [...reflectors.keys()].sort(),
    stop() {
      for (const r of reflectors.values()) r.abort.abort();
      reflectors.clear();
    },
  };
}
