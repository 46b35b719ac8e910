// The kubelet's secret and configMap managers (upstream pkg/kubelet/secret, pkg/kubelet/configmap over
// pkg/kubelet/util/manager), one per resource, by configMapAndSecretChangeDetectionStrategy:
//   Watch (default): one reflector per referenced object (list+watch with
//     fieldSelector=metadata.name=<name>), started when a pod first references it and stopped when
//     no pod does; a read waits for the first list; an `immutable` object is not watched further.
//   Cache: GET, kept for a TTL (upstream's default 1 min).   Get: a GET on every read.
// A missing object reads as ObjectNotFoundError ("secret \"x\" not found"); other failures as the error.
import type { Clock } from "../../clock.ts";
import { isNotFound, type KubeClient } from "../../kube/index.ts";
import { ObjectNotFoundError } from "../volumes/index.ts";
import { startReflector, type Reflector } from "./reflector.ts";

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

interface Watched {
  refs: Set<string>;
  reflector: Reflector;
}

const kindOf = (resource: string) => (resource === "secrets" ? "secret" : "configmap") as "secret" | "configmap";
const immutable = (objects: ReadonlyMap<string, unknown>) => [...objects.values()].some((o) => (o as { immutable?: boolean }).immutable === true);

export function createObjectManager<T>(opts: ObjectManagerOptions): ObjectManager<T> {
  const kind = kindOf(opts.resource);
  const reflectors = new Map<string, Watched>();
  const podRefs = new Map<string, Set<string>>();
  const ttlCache = new Map<string, { atMs: number; value: T | Error }>();
  const pathOf = (ns: string) => `/api/v1/namespaces/${ns}/${opts.resource}`;

  function reflectorFor(key: string): Watched {
    let w = reflectors.get(key);
    if (!w) {
      const [ns, name] = key.split("/") as [string, string];
      const reflector = startReflector({
        client: opts.client,
        path: pathOf(ns),
        query: { fieldSelector: `metadata.name=${name}` },
        clock: opts.clock,
        kind,
        onChange: () => opts.onChange?.(ns, name),
        done: immutable,
      });
      w = { refs: new Set(), reflector };
      reflectors.set(key, w);
    }
    return w;
  }

  function release(uid: string, key: string) {
    const w = reflectors.get(key);
    if (!w) return;
    w.refs.delete(uid);
    if (w.refs.size === 0) {
      w.reflector.stop();
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
    const w = reflectors.get(`${ns}/${name}`);
    // A read of an object no pod registered (should not happen): a plain GET.
    if (!w) return getDirect(ns, name);
    const r = w.reflector;
    if (!(await r.waitForSync(opts.syncTimeoutMs ?? 10_000)))
      throw new Error(`failed to sync ${kind} cache: ${r.error()?.message ?? "timed out waiting for the condition"}`);
    const obj = r.objects.get(name);
    if (obj === undefined) throw new ObjectNotFoundError(kind, name);
    return obj as T;
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
      for (const w of reflectors.values()) w.reflector.stop();
      reflectors.clear();
    },
  };
}
