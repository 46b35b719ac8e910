// The double's storage: what kube-apiserver gets from etcd, in memory. One cluster-wide revision
// counter (every write bumps it and becomes the object's metadata.resourceVersion), compare-and-swap
// on that revision (optimistic concurrency), an ordered history of changes that watches replay from
// a revision, and compaction that forgets history so an old revision gets 410 Gone — the semantics
// kube-apiserver inherits from etcd, without the etcd process.
export type Obj = Record<string, any>;

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export interface Change {
  revision: number;
  type: WatchEventType;
  /** "<resource>/<namespace>/<name>" (namespace empty for cluster-scoped). */
  key: string;
  object: Obj;
}

export class TooOldError extends Error {
  constructor(readonly requested: number, readonly oldest: number) {
    super(`too old resource version: ${requested} (${oldest})`);
  }
}

export interface Store {
  revision(): number;
  /** Lowest revision a watch may start after (history before it is compacted). */
  compactedRevision(): number;
  get(key: string): Obj | undefined;
  list(prefix: string): Obj[];
  /** Writes obj at key; expected = the revision the caller read (undefined: unconditional). Returns the stored copy or "conflict". */
  put(key: string, obj: Obj, expected?: number): Obj | "conflict";
  /** Deletes key; returns the deleted object (with the deletion revision) or undefined. */
  delete(key: string): Obj | undefined;
  /** Changes under prefix after `fromRevision`; throws TooOldError when compacted away. */
  since(prefix: string, fromRevision: number): Change[];
  subscribe(fn: (c: Change) => void): () => void;
  compact(revision?: number): void;
}

export function createStore(): Store {
  let rev = 1;
  let compacted = 0;
  const data = new Map<string, { obj: Obj; modRevision: number }>();
  const history: Change[] = [];
  const subscribers = new Set<(c: Change) => void>();
  const clone = (o: Obj): Obj => structuredClone(o);

  function record(type: WatchEventType, key: string, obj: Obj): void {
    const c: Change = { revision: rev, type, key, object: clone(obj) };
    history.push(c);
    for (const s of subscribers) s(c);
  }

  return {
    revision: () => rev,
    compactedRevision: () => compacted,
    get: (key) => (data.has(key) ? clone(data.get(key)!.obj) : undefined),
    list: (prefix) => [...data.entries()].filter(([k]) => k.startsWith(prefix)).sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => clone(v.obj)),
    put(key, obj, expected) {
      const cur = data.get(key);
      if (expected !== undefined && (!cur || cur.modRevision !== expected)) return "conflict";
      rev++;
      const stored = clone(obj);
      stored.metadata = { ...stored.metadata, resourceVersion: String(rev) };
      data.set(key, { obj: stored, modRevision: rev });
      record(cur ? "MODIFIED" : "ADDED", key, stored);
      return clone(stored);
    },
    delete(key) {
      const cur = data.get(key);
      if (!cur) return undefined;
      data.delete(key);
      rev++;
      const gone = clone(cur.obj);
      gone.metadata = { ...gone.metadata, resourceVersion: String(rev) };
      record("DELETED", key, gone);
      return gone;
    },
    since(prefix, from) {
      if (from < compacted) throw new TooOldError(from, compacted + 1);
      return history.filter((c) => c.revision > from && c.key.startsWith(prefix)).map((c) => ({ ...c, object: clone(c.object) }));
    },
    subscribe(fn) {
      subscribers.add(fn);
      return () => subscribers.delete(fn);
    },
    compact(revision = rev) {
      compacted = Math.max(compacted, revision);
      while (history.length && history[0]!.revision <= compacted) history.shift();
    },
  };
}
