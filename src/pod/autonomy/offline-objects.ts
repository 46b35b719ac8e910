// The API objects a pod references, backed by the autonomy cache: what the API server answers is
// stored (secrets, configMaps, tokens, persistentVolumeClaims and their PVs, the services for the
// environment); when it cannot answer — not a 404, which stays upstream's "not found" — the stored copy
// is served, tokens until they expire, so a pod's volumes and env are made again after a restart while
// the API server is unreachable. A claim or PV is served only when the API server gave no answer at all
// (a network error, a 5xx or 429): one it refuses or answers not bound stays the error it is.
import type { Clock } from "../../clock.ts";
import { kv, log } from "../../log.ts";
import { serviceEnvVarMap } from "../envvars/index.ts";
import { ApiError } from "../../kube/index.ts";
import type { PersistentVolumeReader, PodApiObjectsManager } from "../apiobjects/index.ts";
import { SERVICES_NOT_SYNCED } from "../apiobjects/index.ts";
import type { KubePod } from "../kuberuntime/index.ts";
import { ObjectNotFoundError, type ConfigMapObject, type PodApiObjects, type SecretObject } from "../volumes/index.ts";
import { podKey } from "../pod-like.ts";
import type { ServiceLike } from "../envvars/index.ts";
import { jwtExpirationMs } from "./cache-entry.ts";
import type { AutonomyStore, StoredObjectKind } from "./store.ts";

/** How often the services list is stored (it changes with every service in the cluster). */
const SERVICES_SAVE_INTERVAL_MS = 60_000;

/** An object as stored: the API server's bookkeeping (managedFields) left out. */
export function storable(obj: unknown): unknown {
  const o = obj as { metadata?: Record<string, unknown> };
  if (!o?.metadata?.managedFields) return obj;
  const { managedFields: _, ...metadata } = o.metadata;
  return { ...o, metadata };
}

/** The API server gave no answer: the request did not reach it, or it could not serve it (5xx, 429). */
export const noAnswer = (e: Error) => !(e instanceof ApiError) || e.code >= 500 || e.code === 429;

const minimalService = (s: ServiceLike): ServiceLike => ({
  metadata: { name: s.metadata.name, namespace: s.metadata.namespace },
  spec: { clusterIP: s.spec?.clusterIP, ports: s.spec?.ports?.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })) },
});

export function withAutonomyCache(inner: PodApiObjectsManager, store: AutonomyStore, clock: Clock): PodApiObjectsManager {
  const served = new Set<string>();
  let servicesSavedMs = -Infinity;
  /** One line per object when it is first served from the cache, and again after the API answered. */
  function servedFromCache(pod: KubePod, what: string, error: Error): void {
    if (served.has(what)) return;
    served.add(what);
    log.warn(`API server unreachable; using the autonomy cache's copy ${kv({ pod: podKey(pod), object: what, error: error.message })}`);
  }

  function objects<T>(pod: KubePod, kind: "Secret" | "ConfigMap", got: ReadonlyMap<string, T | Error>): Map<string, T | Error> {
    const ns = pod.metadata.namespace ?? "";
    const out = new Map(got);
    for (const [name, v] of got) {
      const what = `${kind.toLowerCase()}/${ns}/${name}`;
      if (!(v instanceof Error)) {
        store.putObject(kind, ns, name, storable(v));
        served.delete(what);
      } else if (!(v instanceof ObjectNotFoundError)) {
        const cached = store.object(kind, ns, name) as T | undefined;
        if (cached !== undefined) {
          servedFromCache(pod, what, v);
          out.set(name, cached);
        }
      }
    }
    return out;
  }

  function tokens(pod: KubePod, got: ReadonlyMap<string, string | Error>): Map<string, string | Error> {
    const ns = pod.metadata.namespace ?? "";
    const uid = pod.metadata.uid ?? "";
    const out = new Map(got);
    for (const [key, v] of got) {
      const what = `token/${ns}/${pod.metadata.name}/${key.replace("\n", "/")}`;
      if (typeof v === "string") {
        const exp = jwtExpirationMs(v) ?? clock.now() + Number(key.split("\n")[1]) * 1000;
        store.putToken({ namespace: ns, podUid: uid, key, token: v, expirationMs: exp });
        served.delete(what);
        continue;
      }
      const cached = store.token(uid, key);
      if (cached) {
        servedFromCache(pod, what, v);
        out.set(key, cached.token);
      }
    }
    return out;
  }

  /** One claim's or PV's read: the answer stored, or when there was none the stored copy served. */
  function claimObject<T>(pod: KubePod, kind: StoredObjectKind, ns: string, name: string, got: T | Error): T | Error {
    const what = `${kind.toLowerCase()}/${ns ? `${ns}/` : ""}${name}`;
    try {
      if (!(got instanceof Error)) {
        store.putObject(kind, ns, name, storable(got));
        served.delete(what);
        return got;
      }
      const cached = noAnswer(got) ? (store.object(kind, ns, name) as T | undefined) : undefined;
      if (cached === undefined) return got;
      servedFromCache(pod, what, got);
      return cached;
    } catch (e) {
      log.warn(`autonomy cache: not storing an object ${kv({ pod: podKey(pod), object: what, error: (e as Error).message })}`);
      return got;
    }
  }

  /** The API server's claim and PV reads for one pod, backed by the cache. */
  const claimReader = (pod: KubePod, live: PersistentVolumeReader): PersistentVolumeReader => ({
    claim: async (ns, name) => claimObject(pod, "PersistentVolumeClaim", ns, name, await live.claim(ns, name)),
    volume: async (name) => claimObject(pod, "PersistentVolume", "", name, await live.volume(name)),
  });

  async function resolve(pod: KubePod, persistentVolumes = inner.persistentVolumes): Promise<PodApiObjects | undefined> {
    const r = await inner.resolve(pod, claimReader(pod, persistentVolumes));
    if (!r) return r;
    return {
      ...r,
      secrets: objects<SecretObject>(pod, "Secret", r.secrets),
      configMaps: objects<ConfigMapObject>(pod, "ConfigMap", r.configMaps),
      tokens: tokens(pod, r.tokens),
    };
  }

  function serviceEnv(pod: KubePod): ReadonlyMap<string, string> {
    try {
      const env = inner.serviceEnv(pod);
      if (inner.services.hasSynced() && clock.now() - servicesSavedMs >= SERVICES_SAVE_INTERVAL_MS) {
        servicesSavedMs = clock.now();
        store.putServices(inner.services.list().map(minimalService));
      }
      return env;
    } catch (e) {
      const cached = store.services() as ServiceLike[] | undefined;
      if ((e as Error).message !== SERVICES_NOT_SYNCED || !cached) throw e;
      servedFromCache(pod, "services", e as Error);
      return serviceEnvVarMap(cached, pod.metadata.namespace ?? "", pod.spec.enableServiceLinks ?? true);
    }
  }

  return { ...inner, resolve, serviceEnv };
}
