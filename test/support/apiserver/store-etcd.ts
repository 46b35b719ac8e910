// The double's storage in a real etcd, through its JSON gRPC gateway (etcd 3.4: /v3/kv/range,
// /v3/kv/txn, /v3/kv/deleterange, /v3/kv/compaction, /v3/watch streaming JSON lines). Keys are
// /registry/<resource>/<namespace>/<name> as kube-apiserver lays them out; values are the objects'
// JSON without resourceVersion, which is the key's mod_revision when read, as upstream's storage does.
import type { Change, Expected, Obj, Store } from "./store.ts";
import { TooOldError } from "./store.ts";

const PREFIX = "/registry/";
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const unb64 = (s: string) => Buffer.from(s, "base64").toString("utf8");

/** etcd's prefix range end: the key with its last byte incremented. */
function rangeEnd(prefix: string): string {
  const b = Buffer.from(prefix, "utf8");
  b[b.length - 1]! += 1;
  return b.toString("base64");
}

interface Kv {
  key: string;
  value?: string;
  mod_revision?: string;
  create_revision?: string;
}

export function createEtcdStore(url: string): Store {
  const watches = new Set<AbortController>();
  async function call(path: string, body: object): Promise<any> {
    const res = await fetch(`${url}/v3/${path}`, { method: "POST", body: JSON.stringify(body) });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`etcd ${path}: ${json.error ?? json.message ?? res.status}`);
    return json;
  }
  const decode = (kv: Kv): Obj => {
    const o = JSON.parse(unb64(kv.value ?? "")) as Obj;
    o.metadata = { ...o.metadata, resourceVersion: String(kv.mod_revision) };
    return o;
  };
  const encode = (o: Obj): string => {
    const { resourceVersion: _, ...meta } = o.metadata ?? {};
    return b64(JSON.stringify({ ...o, metadata: meta }));
  };
  const compare = (key: string, expected: Expected) =>
    expected === undefined
      ? []
      : expected === 0
        ? [{ key, target: "CREATE", result: "EQUAL", create_revision: "0" }]
        : [{ key, target: "MOD", result: "EQUAL", mod_revision: String(expected) }];

  return {
    async revision() {
      return Number((await call("kv/range", { key: b64(PREFIX), count_only: true })).header.revision);
    },
    async get(key) {
      const r = await call("kv/range", { key: b64(PREFIX + key) });
      return r.kvs?.[0] ? decode(r.kvs[0]) : undefined;
    },
    async list(prefix) {
      const r = await call("kv/range", { key: b64(PREFIX + prefix), range_end: rangeEnd(PREFIX + prefix) });
      return { items: (r.kvs ?? []).map(decode), revision: Number(r.header.revision) };
    },
    async put(key, obj, expected) {
      const k = b64(PREFIX + key);
      const r = await call("kv/txn", { compare: compare(k, expected), success: [{ request_put: { key: k, value: encode(obj) } }] });
      if (!r.succeeded) return "conflict";
      return { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(r.header.revision) } };
    },
    async delete(key, expected) {
      const k = b64(PREFIX + key);
      const r = await call("kv/txn", { compare: compare(k, expected), success: [{ request_delete_range: { key: k, prev_kv: true } }] });
      if (!r.succeeded) return (await this.get(key)) ? "conflict" : undefined;
      const prev = r.responses?.[0]?.response_delete_range?.prev_kvs?.[0];
      if (!prev) return undefined;
      const o = decode(prev);
      o.metadata.resourceVersion = String(r.header.revision);
      return o;
    },
    async watch(prefix, after, onChange, onEnd) {
      const abort = new AbortController();
      const res = await fetch(`${url}/v3/watch`, {
        method: "POST",
        body: JSON.stringify({
          create_request: { key: b64(PREFIX + prefix), range_end: rangeEnd(PREFIX + prefix), start_revision: String(after + 1), prev_kv: true },
        }),
        signal: abort.signal,
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buf = "";
      const next = async (): Promise<any> => {
        for (;;) {
          const i = buf.indexOf("\n");
          if (i >= 0) {
            const line = buf.slice(0, i).trim();
            buf = buf.slice(i + 1);
            if (line) return JSON.parse(line).result;
            continue;
          }
          const { value, done } = await reader.read();
          if (done) return undefined;
          buf += decoder.decode(value, { stream: true });
        }
      };
      const first = await next();
      if (first?.canceled || first?.compact_revision) {
        abort.abort();
        throw new TooOldError(after, Number(first.compact_revision));
      }
      watches.add(abort);
      void (async () => {
        try {
          for (let r = await next(); r; r = await next()) {
            if (r.canceled)
              throw r.compact_revision ? new TooOldError(after, Number(r.compact_revision)) : new Error(`etcd watch canceled: ${r.cancel_reason ?? ""}`);
            for (const ev of r.events ?? []) {
              const kv = ev.kv as Kv;
              const key = unb64(kv.key).slice(PREFIX.length);
              const deleted = ev.type === "DELETE";
              const object = deleted
                ? { ...decode(ev.prev_kv), metadata: { ...decode(ev.prev_kv).metadata, resourceVersion: String(kv.mod_revision) } }
                : decode(kv);
              const type = deleted ? "DELETED" : kv.create_revision === kv.mod_revision ? "ADDED" : "MODIFIED";
              onChange({ revision: Number(kv.mod_revision), type, key, object } satisfies Change);
            }
          }
          onEnd?.();
        } catch (e) {
          if (!abort.signal.aborted) onEnd?.(e as Error);
        } finally {
          watches.delete(abort);
        }
      })();
      return () => abort.abort();
    },
    async compact(revision) {
      const rev = revision ?? (await this.revision());
      await call("kv/compaction", { revision: String(rev), physical: true });
    },
    async close() {
      for (const w of watches) w.abort();
      watches.clear();
    },
  };
}
