// The node autonomy cache on disk (<rootDir>/autonomy, directory 0700, files 0600): the API pods bound
// to the node, the secrets, configMaps, persistentVolumeClaims (with their bound PersistentVolumes, and
// for CSI ones the CSIDriver, VolumeAttachment and the Secrets named for the node) and service account
// tokens they reference, the Node and
// the services their environment is made from. Read once at start; written as the API server's objects
// change — each write a temp file, fsync and rename, one at a time off the event loop, coalesced per
// file and skipped when the object did not change. Bounded: a write that would take the cache past
// its size is not made, with one log line per object. A file that does not parse is logged (file and
// field) and skipped; nothing in the cache can stop the agent.
import { chmod, mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../atomic-file.ts";
import type { Clock } from "../../clock.ts";
import { kv, log } from "../../log.ts";
import { cacheFileName, encodeCacheEntry, parseCacheEntry, type CachedToken, type CacheKind } from "./cache-entry.ts";
import { boundVolumeFiles, csiDriverFiles, csiSecretFiles, fits, keepAttachment, keepToken, referencedFiles } from "./retention.ts";

/** The API objects kept by namespace and name (cluster-scoped ones — PV, CSIDriver, VolumeAttachment — with namespace ""). */
export type StoredObjectKind = "Secret" | "ConfigMap" | "PersistentVolumeClaim" | "PersistentVolume" | "CSIDriver" | "VolumeAttachment";

export interface AutonomyStoreOptions {
  dir: string;
  maxBytes: number;
  /** Keep secrets and service account tokens (false: never written, and removed at load). */
  secrets: boolean;
  clock: Clock;
}

export interface AutonomyStore {
  readonly dir: string;
  /** Reads the directory (once); bad files are logged and skipped. */
  load(): Promise<void>;
  /** The raw API pods last stored. */
  pods(): unknown[];
  object(kind: StoredObjectKind, namespace: string, name: string): unknown;
  token(podUid: string, key: string): CachedToken | undefined;
  node(): unknown;
  services(): unknown[] | undefined;
  /** The API server's pods for this node, the whole set: others are removed with what only they need. */
  putPods(pods: readonly unknown[]): void;
  putObject(kind: StoredObjectKind, namespace: string, name: string, obj: unknown): void;
  /** The API server answered that the object does not exist: its stored copy goes. */
  removeObject(kind: StoredObjectKind, namespace: string, name: string): void;
  putToken(t: CachedToken): void;
  putNode(node: unknown): void;
  putServices(items: readonly unknown[]): void;
  /** Resolves once every write made so far is on disk (tests, stop). */
  flush(): Promise<void>;
  usedBytes(): number;
}

interface Entry {
  kind: CacheKind;
  object: unknown;
  json: string;
  bytes: number;
}

export function createAutonomyStore(opts: AutonomyStoreOptions): AutonomyStore {
  const entries = new Map<string, Entry>();
  /** Per file, the text to write or null to remove; drained one at a time. */
  const pending = new Map<string, string | null>();
  const overBound = new Set<string>();
  let used = 0;
  let draining: Promise<void> | undefined;

  function drain(): Promise<void> {
    draining ??= (async () => {
      await mkdir(opts.dir, { recursive: true, mode: 0o700 });
      for (let next = pending.entries().next(); !next.done; next = pending.entries().next()) {
        const [file, text] = next.value;
        pending.delete(file);
        const path = join(opts.dir, file);
        try {
          if (text === null) await rm(path, { force: true });
          else await writeFileAtomic(path, text, { mode: 0o600 });
        } catch (e) {
          log.error(`autonomy cache write failed ${kv({ file: path, error: (e as Error).message })}`);
        }
      }
    })().finally(() => {
      draining = undefined;
      if (pending.size) void drain();
    });
    return draining;
  }

  function remove(file: string): void {
    const e = entries.get(file);
    if (!e) return;
    entries.delete(file);
    used -= e.bytes;
    overBound.delete(file);
    pending.set(file, null);
    void drain();
  }

  function put(kind: CacheKind, file: string, object: unknown): void {
    const json = JSON.stringify(object);
    const old = entries.get(file);
    if (old?.json === json) return;
    const text = encodeCacheEntry(kind, object, opts.clock.now());
    if (!fits(used, old?.bytes ?? 0, text.length, opts.maxBytes)) {
      if (!overBound.has(file))
        log.warn(
          `autonomy cache full; not storing this object, so it is not available while the API server is unreachable ${kv({ file, kind, sizeBytes: text.length, usedBytes: used, maxBytes: opts.maxBytes })}`,
        );
      overBound.add(file);
      return;
    }
    overBound.delete(file);
    entries.set(file, { kind, object, json, bytes: text.length });
    used += text.length - (old?.bytes ?? 0);
    pending.set(file, text);
    void drain();
  }

  async function loadFile(name: string): Promise<void> {
    const path = join(opts.dir, name);
    if (name.endsWith(".tmp")) return void (await rm(path, { force: true })); // a write cut short
    if (!name.endsWith(".json")) return log.warn(`autonomy cache: skipping a file that is not bunlet's ${kv({ file: path })}`);
    const size = (await stat(path)).size;
    if (used + size > opts.maxBytes)
      return log.error(`autonomy cache: skipping a file past the size bound ${kv({ file: path, sizeBytes: size, maxBytes: opts.maxBytes })}`);
    const entry = parseCacheEntry(name, await readFile(path, "utf8"));
    if (entry instanceof Error) return log.error(`${entry.message}; skipping it ${kv({ file: path })}`);
    if (!opts.secrets && (entry.kind === "Secret" || entry.kind === "Token")) {
      log.info(`autonomy cache: removing a stored ${entry.kind.toLowerCase()} (secrets are not cached) ${kv({ file: path })}`);
      return void (await rm(path, { force: true }));
    }
    entries.set(name, { kind: entry.kind, object: entry.object, json: JSON.stringify(entry.object), bytes: size });
    used += size;
  }

  const byKind = (kind: CacheKind) => [...entries.values()].filter((e) => e.kind === kind).map((e) => e.object);

  /**
   * A PV goes with the last kept claim bound to it; a CSIDriver with the last kept PV or pod's inline
   * volume of its driver; a VolumeAttachment with the kept PV it attaches; a Secret with the last pod
   * (`needed`), kept PV or inline csi volume naming it.
   */
  function keepVolumesOf(pods: readonly unknown[], needed: ReadonlySet<string>): void {
    const volumes = boundVolumeFiles(byKind("PersistentVolumeClaim"));
    for (const [file, e] of [...entries]) if (e.kind === "PersistentVolume" && !volumes.has(file)) remove(file);
    const kept = byKind("PersistentVolume");
    const drivers = csiDriverFiles(pods, kept);
    const names = new Set(kept.map((pv) => (pv as { metadata?: { name?: string } }).metadata?.name));
    const secrets = csiSecretFiles(pods, kept);
    const gone = (file: string, e: Entry) =>
      (e.kind === "CSIDriver" && !drivers.has(file)) ||
      (e.kind === "VolumeAttachment" && !keepAttachment(e.object, names)) ||
      (e.kind === "Secret" && !needed.has(file) && !secrets.has(file));
    for (const [file, e] of [...entries]) if (gone(file, e)) remove(file);
  }

  return {
    dir: opts.dir,
    async load() {
      await mkdir(opts.dir, { recursive: true, mode: 0o700 });
      await chmod(opts.dir, 0o700);
      for (const name of (await readdir(opts.dir)).sort()) {
        try {
          await loadFile(name);
        } catch (e) {
          log.error(`autonomy cache: cannot read a file; skipping it ${kv({ file: join(opts.dir, name), error: (e as Error).message })}`);
        }
      }
      const kinds: CacheKind[] = ["Pod", "Secret", "ConfigMap", "PersistentVolumeClaim", "PersistentVolume", "CSIDriver", "VolumeAttachment", "Token"];
      const counts = Object.fromEntries(kinds.map((k) => [`${k.toLowerCase()}s`, byKind(k).length]));
      log.info(`autonomy cache loaded ${kv({ dir: opts.dir, ...counts, usedBytes: used, maxBytes: opts.maxBytes })}`);
    },
    pods: () => byKind("Pod"),
    object: (kind, ns, name) => entries.get(cacheFileName(kind, { namespace: ns, name }))?.object,
    token(podUid, key) {
      const t = entries.get(cacheFileName("Token", { uid: podUid, tokenKey: key }))?.object as CachedToken | undefined;
      return t && t.expirationMs > opts.clock.now() ? t : undefined;
    },
    node: () => entries.get("node.json")?.object,
    services: () => (entries.get("services.json")?.object as { items: unknown[] } | undefined)?.items,
    putPods(pods) {
      const files = new Set<string>();
      for (const p of pods) {
        const uid = (p as { metadata?: { uid?: string } }).metadata?.uid;
        try {
          const file = cacheFileName("Pod", { uid });
          files.add(file);
          put("Pod", file, p);
        } catch (e) {
          log.warn(`autonomy cache: not storing a pod ${kv({ uid, error: (e as Error).message })}`);
        }
      }
      const needed = referencedFiles(pods, opts.secrets);
      const uids = new Set(pods.map((p) => (p as { metadata: { uid: string } }).metadata.uid));
      const gone = (file: string, e: Entry) =>
        (e.kind === "Pod" && !files.has(file)) ||
        ((e.kind === "ConfigMap" || e.kind === "PersistentVolumeClaim") && !needed.has(file)) ||
        (e.kind === "Token" && !keepToken(e.object as CachedToken, uids, opts.clock.now()));
      for (const [file, e] of [...entries]) if (gone(file, e)) remove(file);
      keepVolumesOf(pods, needed);
    },
    putObject(kind, ns, name, obj) {
      if (kind === "Secret" && !opts.secrets) return;
      put(kind, cacheFileName(kind, { namespace: ns, name }), obj);
    },
    removeObject(kind, ns, name) {
      remove(cacheFileName(kind, { namespace: ns, name }));
    },
    putToken(t) {
      if (!opts.secrets) return;
      put("Token", cacheFileName("Token", { uid: t.podUid, tokenKey: t.key }), t);
    },
    putNode: (node) => put("Node", "node.json", node),
    putServices: (items) => put("Services", "services.json", { items }),
    async flush() {
      while (draining || pending.size) await (draining ?? drain());
    },
    usedBytes: () => used,
  };
}
