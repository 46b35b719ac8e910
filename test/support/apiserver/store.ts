// The double's storage interface: what kube-apiserver gets from etcd. One cluster-wide revision
// (every write bumps it and becomes the object's metadata.resourceVersion), compare-and-swap on an
// object's mod revision (optimistic concurrency), watches from a revision, and compaction after
// which an older revision is "too old" (410 Gone). Two implementations: etcd itself (store-etcd.ts,
// the default) and an in-memory one with the same semantics (BUNLET_APISERVER_STORE=memory).
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
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
  }
}

/** Expected mod revision for put/delete: undefined = unconditional, 0 = must not exist yet. */
export type Expected = number | undefined;

export interface Store {
  revision(): Promise<number>;
  get(key: string): Promise<Obj | undefined>;
  list(prefix: string): Promise<{ items: Obj[]; revision: number }>;
  put(key: string, obj: Obj, expected?: Expected): Promise<Obj | "conflict">;
  delete(key: string, expected?: Expected): Promise<Obj | undefined | "conflict">;
  /**
   * Changes under prefix after `afterRevision`, then live ones, until the returned stop() is called
   * or the store ends the watch (onEnd). Rejects with TooOldError when compacted away.
   */
  watch(prefix: string, afterRevision: number, onChange: (c: Change) => void, onEnd?: (err?: Error) => void): Promise<() => void>;
  compact(revision?: number): Promise<void>;
  close(): Promise<void>;
}

const withRv = (o: Obj, rev: number): Obj => ({ ...structuredClone(o), metadata: { ...o.metadata, resourceVersion: String(rev) } });

export function createMemoryStore(): Store {
  let rev = 1;
  let compacted = 0;
  const data = new Map<string, { obj: Obj; modRevision: number }>();
  const history: Change[] = [];
  const subscribers = new Set<(c: Change) => void>();

  function record(type: WatchEventType, key: string, obj: Obj): void {
    const c: Change = { revision: rev, type, key, object: structuredClone(obj) };
    history.push(c);
    for (const s of subscribers) s(c);
  }
  const matches = (cur: { modRevision: number } | undefined, expected: Expected) =>
    expected === undefined || (expected === 0 ? !cur : cur?.modRevision === expected);

  return {
    revision: async () => rev,
    get: async (key) => (data.has(key) ? structuredClone(data.get(key)!.obj) : undefined),
    list: async (prefix) => ({
      items: [...data.entries()]
        .filter(([k]) => k.startsWith(prefix))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([, v]) => structuredClone(v.obj)),
      revision: rev,
    }),
    async put(key, obj, expected) {
      const cur = data.get(key);
      if (!matches(cur, expected)) return "conflict";
      rev++;
      const stored = withRv(obj, rev);
      data.set(key, { obj: stored, modRevision: rev });
      record(cur ? "MODIFIED" : "ADDED", key, stored);
      return structuredClone(stored);
    },
    async delete(key, expected) {
      const cur = data.get(key);
      if (!cur) return undefined;
      if (!matches(cur, expected)) return "conflict";
      data.delete(key);
      rev++;
      const gone = withRv(cur.obj, rev);
      record("DELETED", key, gone);
      return gone;
    },
    async watch(prefix, after, onChange) {
      if (after < compacted) throw new TooOldError(after, compacted + 1);
      for (const c of history) if (c.revision > after && c.key.startsWith(prefix)) onChange(structuredClone(c));
      const fn = (c: Change) => c.key.startsWith(prefix) && onChange(structuredClone(c));
      subscribers.add(fn);
      return () => void subscribers.delete(fn);
    },
    async compact(revision = rev) {
      compacted = Math.max(compacted, revision);
      while (history.length && history[0]!.revision <= compacted) history.shift();
    },
    async close() {
      subscribers.clear();
    },
  };
}
